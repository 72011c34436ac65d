"""Option parsing: lm-eval style key=value strings, YAML config under CLI flags, validation."""
import argparse

import pytest

from hallubench.cli import run as run_cli
from hallubench.cli.main import build_parser
from hallubench.harness.options import RunOptions, parse_gen_kwargs, parse_kv
from hallubench.harness.plan import effective_settings
from hallubench.benchmarks import get_task


def test_kv_values_are_typed():
    assert parse_kv("pretrained=/m/x,dtype=float32,batch_size=4,flag=true,t=0.5", "--model-args") == {
        "pretrained": "/m/x", "dtype": "float32", "batch_size": 4, "flag": True, "t": 0.5}
    assert parse_kv("", "--model-args") == {}


@pytest.mark.parametrize("text, token", [("temperature=0.2,top_p", "top_p"), ("=3", "=3"),
                                         ("temperature=0.2,,n=2", ""), ("a=", "a=")])
def test_malformed_tokens_are_named(text, token):
    with pytest.raises(ValueError) as err:
        parse_kv(text, "--gen-kwargs")
    assert f"bad token {token!r}" in str(err.value) and "--gen-kwargs" in str(err.value)


def test_duplicate_and_unknown_generation_keys_are_named():
    with pytest.raises(ValueError, match="'temperature' given twice"):
        parse_gen_kwargs("temperature=0.2,temperature=0.3")
    with pytest.raises(ValueError, match="unknown key 'top_k'.*max_new_tokens"):
        parse_gen_kwargs("temperature=0.2,top_k=5")
    with pytest.raises(ValueError, match="unknown key 'seed'"):
        parse_gen_kwargs("seed=3")
    assert parse_gen_kwargs("temperature=0.2,top_p=0.9") == {"temperature": 0.2, "top_p": 0.9}


def test_gen_kwargs_override_the_task_and_num_samples_sets_the_extra_samples():
    task = get_task("avhallubench_visual")
    main, extra = effective_settings(task, RunOptions(gen_kwargs={"max_new_tokens": 16, "temperature": 0.5},
                                                      num_samples=3))
    assert (main.max_new_tokens, main.temperature) == (16, 0.5)
    assert (extra.n, extra.max_new_tokens, extra.temperature, extra.top_p) == (3, 16, 1.0, 0.9)
    assert effective_settings(task, RunOptions(num_samples=0))[1] is None


@pytest.mark.parametrize("kwargs, flag", [({"modality": "smell"}, "--modality"), ({"num_frames": 0}, "--num-frames"),
                                          ({"fps": -1.0}, "--fps"), ({"batch_size": 0}, "--batch-size"),
                                          ({"limit": 0}, "--limit")])
def test_bad_options_name_the_flag(kwargs, flag):
    with pytest.raises(ValueError, match=flag):
        RunOptions(**kwargs)


def _args(argv):
    return build_parser().parse_args(["run", *argv])


def test_yaml_config_gives_defaults_and_flags_override(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("model: hf\nmodel-args: pretrained=/a,dtype=float32\ntasks: [cmm, cchall]\n"
                      "gen_kwargs: {temperature: 0.7}\nlimit: 3\nfps: 2.0\n")
    options = run_cli.build_options(_args(["--config", str(config), "--limit", "5", "--model_args", "pretrained=/b"]))
    assert options.model == "hf" and options.tasks == ["cmm", "cchall"]
    assert options.limit == 5 and options.model_args == {"pretrained": "/b"}
    assert options.gen_kwargs == {"temperature": 0.7} and options.fps == 2.0 and options.num_frames is None


def test_yaml_unknown_keys_and_bad_gen_kwargs_are_reported(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("model: hf\ntemprature: 0.2\n")
    with pytest.raises(ValueError, match="unknown option.*temprature"):
        run_cli.build_options(_args(["--config", str(config)]))
    config.write_text("gen_kwargs: {top_k: 3}\n")
    with pytest.raises(ValueError, match="top_k"):
        run_cli.build_options(_args(["--config", str(config)]))


def test_cli_reports_bad_tokens_and_unknown_tasks(capsys):
    from hallubench.cli.main import main

    assert main(["run", "--model", "hf", "--tasks", "cmm", "--gen-kwargs", "temperature"]) == 2
    assert "bad token 'temperature'" in capsys.readouterr().err
    assert main(["run", "--model", "hf", "--tasks", "cmm,nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown task 'nope'" in err and "`hallubench tasks`" in err


def test_tasks_resolve_exactly_and_once():
    from hallubench.harness.preflight import resolve_tasks

    assert [t.name for t in resolve_tasks(["cmm", "cchall", "cmm"])] == ["cmm", "cchall"]
    with pytest.raises(ValueError, match="unknown task 'cmm_all'"):
        resolve_tasks(["cmm_all"])


def test_flags_and_their_lm_eval_spellings_parse_alike():
    dashed = _args(["--model-args", "a=1", "--gen-kwargs", "n=2", "--batch-size", "3", "--output-dir", "o"])
    underscored = _args(["--model_args", "a=1", "--gen_kwargs", "n=2", "--batch_size", "3", "--output_dir", "o"])
    assert vars(dashed) == vars(underscored)
    assert isinstance(dashed, argparse.Namespace) and not hasattr(dashed, "limit")


@pytest.mark.parametrize("text, message", [("max_new_tokens=0", "max_new_tokens must be >= 1; got 0"),
                                           ("temperature=abc", "temperature must be a number; got 'abc'"),
                                           ("n=1.5", "n must be an integer; got 1.5"),
                                           ("top_p=1.5", "top_p must be in (0, 1]")])
def test_bad_generation_values_are_config_errors_naming_the_flag(text, message):
    from hallubench.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        parse_gen_kwargs(text)
    assert str(err.value).startswith(f"--gen-kwargs: {message}")
    with pytest.raises(ConfigError, match="--gen-kwargs"):  # the YAML path builds RunOptions from a dict
        RunOptions(gen_kwargs=parse_kv(text, "--gen-kwargs"))


@pytest.mark.parametrize("argv, message", [
    (["--model", "xyz", "--model-args", "pretrained=x"], "--model: unknown chat model adapter 'xyz'; valid: hf, openai"),
    (["--model", "hff", "--model-args", "pretrained=x"], "--model: unknown chat model adapter 'hff' (did you mean 'hf'?)"),
    (["--model", "grounding_dino", "--model-args", "pretrained=x"], "--model grounding_dino: grounding_dino is a tool adapter"),
    (["--model", "hf"], "--model-args needs pretrained=CHECKPOINT"),
    (["--model", "hf", "--model-args", "pretrained=x,bogus=1"],
     "--model-args for --model hf: unknown key(s) bogus; allowed: attn_implementation"),
    (["--config", "/no/such/run.yaml"], "--config /no/such/run.yaml: cannot be read (No such file"),
])
def test_model_and_config_mistakes_are_one_line_errors_before_any_model_loads(argv, message, tmp_path, capsys,
                                                                                 monkeypatch):
    from hallubench.cli.main import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # An empty data folder: reaching the dataset would be a different error, so the model checks come first.
    data = tmp_path / "data"
    data.mkdir()
    assert main(["run", "--tasks", "cmm", "--data-dir", str(data), "--output-dir", str(tmp_path / "o"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hallubench run: error: ") and message in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["0", "-3", "two", "1.5", "0.0"])
def test_demo_refuses_a_bad_limit_before_building_anything(value, capsys):
    from hallubench.cli.main import main

    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--limit", value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("hallubench demo: error: ") and err.count("\n") == 1
    assert "argument --limit: expected a whole number >= 1 or a fraction 0 < x < 1; got" in err
