"""Bad input is a named error (a HallubenchError naming the file, key or flag and what to do), found before any
weights load: `--config` values parsed as their flags are, adapter arguments of the wrong type, a checkpoint folder
that is not there, a GPU the machine lacks, a data file edited under its card. Never a traceback."""
import shutil

import pyarrow.parquet as pq
import pytest

from hallubench.cli.main import main


def run(tmp_path, *argv, model_args=None):
    """`hallubench run` with `argv`; the checkpoint is a folder (not loaded: each test's mistake stops the run first)."""
    model_args = model_args or f"pretrained={tmp_path}"
    return main(["run", "--model", "hf", "--model-args", model_args, "--tasks", "cmm", "--data-dir", "mini",
                 "--output-dir", str(tmp_path / "run"), *argv])


@pytest.mark.parametrize("line,message", [
    ('limit: "abc"', "limit: 'abc' is not a value of --limit"),
    ("limit: 1.5", "limit: 1.5 is not a value of --limit"),
    ("limit: true", "limit: True is not a value of --limit"),
    ("fps: [2]", "fps: [2] is not a value of --fps"),
    ("modality: loud", "modality: 'loud' is not one of audio-visual"),
    ("device: 7", "device: 7 is not a value of --device (give text)"),
])
def test_config_values_go_through_the_flags_parsing(tmp_path, capsys, line, message):
    config = tmp_path / "run.yaml"
    config.write_text(f"{line}\ntasks: cmm\n")
    assert main(["run", "--config", str(config), "--model", "hf", "--model-args", "pretrained=org/name",
                 "--data-dir", "mini"]) == 2
    assert f"--config {config}: {message}" in capsys.readouterr().err


@pytest.mark.parametrize("model_args,message", [
    ("pretrained=/no/such/checkpoint", "pretrained=/no/such/checkpoint: no such model folder"),
    ("pretrained=./no/such", "pretrained=./no/such: no such model folder"),
    ("pretrained=org/name,batch_size=two", "batch_size must be a whole number >= 1 or auto; got 'two'"),
    ("pretrained=org/name,trust_remote_code=1", "trust_remote_code must be true or false; got 1"),
])
def test_model_arguments_are_named_before_anything_loads(tmp_path, capsys, model_args, message):
    assert run(tmp_path, model_args=model_args) == 2
    assert message in capsys.readouterr().err


def test_an_openai_argument_of_the_wrong_type_is_named(tmp_path, capsys):
    assert main(["run", "--model", "openai", "--model-args", "pretrained=m,api_key_env=none,timeout=abc", "--tasks",
                 "cmm", "--data-dir", "mini", "--output-dir", str(tmp_path / "run")]) == 2
    assert "--model-args for --model openai: timeout='abc' is not of type float" in capsys.readouterr().err


def test_a_gpu_the_machine_lacks_is_named(tmp_path, capsys):
    import torch

    if torch.cuda.device_count() > 7:
        pytest.skip("this machine has a cuda:7")
    assert run(tmp_path, "--device", "cuda:7") == 2
    assert "device cuda:7: this machine has" in capsys.readouterr().err


def test_a_data_file_edited_under_its_card_is_named_as_such(tmp_path, capsys, data_dir):
    folder = tmp_path / "datasets" / "cmm"
    shutil.copytree(data_dir / "cmm", folder)
    path = next(folder.glob("data/all/*.parquet"))
    pq.write_table(pq.read_table(path).slice(0, 5), path)
    renamed = path.with_name("test-edited.parquet")  # renamed by hand: no fingerprint left to compare
    path.rename(renamed)
    card = folder / "README.md"
    card.write_text(card.read_text().replace(path.name, renamed.name))
    assert run(tmp_path, "--data-dir", str(folder.parent)) == 2
    err = capsys.readouterr().err
    assert "does not describe its data files (test-edited.parquet): one was edited or replaced" in err
    assert "--overwrite" in err


@pytest.mark.parametrize("header,message", [
    ("a: &x [1, 2]\nb: *x\n", "an alias (*name) is not taken"),  # a billion-laughs card expands aliases
    ("a: [" * 60 + "]" * 60 + "\n", "nested more than"),
    ("- a list\n", "is not a YAML mapping"),
])
def test_a_dataset_cards_header_is_read_bounded_like_a_config(data_dir, tmp_path, capsys, header, message):
    folder = tmp_path / "data" / "cmm"
    shutil.copytree(data_dir / "cmm", folder)
    card = folder / "README.md"
    card.write_text(f"---\n{header}---\n" + card.read_text().split("\n---\n", 1)[1])
    assert run(tmp_path, "--data-dir", str(folder.parent)) == 2
    err = capsys.readouterr().err
    assert f"{folder}: its README.md" in err and message in err and "Traceback" not in err


@pytest.mark.parametrize("password", ["MARKERSECRET-a1", "MARKERSECRET-" + "a" * 80])  # the cut before/inside it
@pytest.mark.parametrize("command", ["run", "demo"])
def test_a_credential_in_a_refused_flag_value_is_masked_whatever_its_length(capsys, command, password):
    value = f"pretrained=x,base_url=http://u:{password}@127.0.0.1:1/v1"
    with pytest.raises(SystemExit) as usage_error:  # argparse's: the flag's value is refused while parsing
        main([command, "--limit", value])
    err = capsys.readouterr().err
    assert usage_error.value.code == 2 and "argument --limit" in err and "http://***@" in err and "MARKERSECRET" not in err


def test_a_config_path_with_a_line_break_is_named_on_one_line(tmp_path, capsys):
    config = tmp_path / "line\nbreak\x1b[2J.yaml"
    assert main(["run", "--config", str(config), "--model", "hf", "--tasks", "cmm"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "\x1b" not in err and "line\\nbreak\\x1b[2J.yaml: cannot be read" in err


@pytest.mark.parametrize("breaks", ["\x0b", "\x85", "\u2028", "\r"])  # what str.splitlines splits at, beyond "\n"
def test_every_error_line_is_one_line_whatever_the_value_it_quotes(tmp_path, capsys, breaks):
    """The audit found `build --source` quoting a path with a vertical tab on two lines (seed 468381290): the one
    formatting of every error line escapes them, so a message written next year is covered too."""
    assert main(["build", "avhallubench", "-o", str(tmp_path / "out"), "--source", f"a{breaks}b"]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and breaks not in err and "does not exist" in err
