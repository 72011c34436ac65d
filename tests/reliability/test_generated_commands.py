"""Every command line hallubench generates parses with hallubench's own parser back to the options it was made from:
the published card's Reproduce line, the resume hint of a stopped run and the command in its
`.hallubench-unfinished.json`, and the `run --from-outputs` of errors, for every option of `run` (the examples below
must name each RunOptions field, so a new option is covered or this test fails)."""
import dataclasses
import json
import shlex
from pathlib import Path

import pytest

from hallubench.cli.main import build_parser, main
from hallubench.cli.run import build_options
from hallubench.harness import run_state
from hallubench.harness.command import command_line, from_outputs_argv, rescore_hint, run_argv
from hallubench.harness.options import RunOptions
from hallubench.harness.results_schema import Results, RunInfo
from hallubench.harness.runner import _options_dict, resume_line
from hallubench.publish.dataset_card import reproduce_command

from conftest import openai_run_argv

# One value other than the default for each option, in the form a user gives it (RunOptions normalises it).
EXAMPLES = {
    "model": "openai",
    "model_args": {"pretrained": "org/m", "dtype": "float32", "trust_remote_code": True, "temperature": 0.5,
                   "device": None},
    "tasks": ["cmm", "pope"],
    "output_dir": Path("runs/a b/it's"),
    "data_dir": "/my data/$HOME",
    "limit": 0.25,
    "seed": 7,
    "batch_size": "auto",
    "gen_kwargs": {"temperature": 0.2, "max_new_tokens": 64, "do_sample": True},
    "num_samples": 0,
    "modality": "visual-only",
    "num_frames": 4,
    "fps": 2.5,
    "max_frames": 16,
    "device": "cuda:1",
    "dtype": "bfloat16",
    "task_args": {"k": 5, "threshold": 0.5, "mode": "official"},
    "helpers": [("verifier", "adapter=hf,pretrained=org/v"), ("judge", "adapter=openai,pretrained=j")],
    "perturb": ["video_blur=0,2,4", "audio_snr=inf,10,-5"],
    "answer_probs": True,
    "include": ["my plugins.py", "some.module"],
}
OTHER_EXAMPLES = {"limit": 3, "batch_size": 4, "gen_kwargs": {"do_sample": False}, "answer_probs": False}


def parsed(line: str, command: str = "run"):
    """The options `hallubench ...` gives when `line` is typed in a shell: split as the shell does, parsed by the
    hallubench parser."""
    words = shlex.split(line)
    assert words[:2] == ["hallubench", command], line
    return build_parser(command).parse_args(words[1:])


def options_of(line: str) -> dict:
    return dataclasses.asdict(build_options(parsed(line)))


def test_the_examples_name_every_option_of_run():
    assert set(EXAMPLES) == {f.name for f in dataclasses.fields(RunOptions)}


@pytest.mark.parametrize("name,value", [*EXAMPLES.items(), *OTHER_EXAMPLES.items()])
def test_each_option_round_trips_through_the_resume_and_reproduce_commands(name, value):
    options = RunOptions(**{"model": "hf", "tasks": ["cmm"], name: value})
    wanted = dataclasses.asdict(options)
    assert options_of(resume_line(options)) == wanted
    assert options_of(command_line(run_argv(options))) == wanted
    # The card's line leaves out where the files went on the machine that ran (output_dir): the rest is the same.
    card = reproduce_command(Results(run=RunInfo(options=_options_dict(options))))
    again = options_of(card)
    assert {k: v for k, v in again.items() if k != "output_dir"} == {k: v for k, v in wanted.items() if k != "output_dir"}
    assert "--output-dir" not in shlex.split(card) and "False" not in shlex.split(card)


def test_all_options_at_once_and_a_switch_in_its_own_syntax():
    options = RunOptions(**{name: value for name, value in EXAMPLES.items() if name != "fps"})
    line = resume_line(options)
    assert options_of(line) == dataclasses.asdict(options)
    assert "--answer-probs" in shlex.split(line) and "--answer-probs True" not in line
    assert options_of(resume_line(RunOptions(model="hf", tasks=["cmm"], fps=2.5))) == \
        dataclasses.asdict(RunOptions(model="hf", tasks=["cmm"], fps=2.5))


def test_the_rescore_hint_of_errors_parses_to_from_outputs(tmp_path):
    folder = tmp_path / "my run; rm -rf ~"
    hint = rescore_hint(folder)
    assert hint.startswith("`") and hint.endswith("`")
    args = parsed(hint.strip("`"))
    assert args.from_outputs == folder and command_line(from_outputs_argv(folder)) == hint.strip("`")


def test_a_published_card_of_an_answer_probs_run_reproduces_it(tmp_path):
    """Defect: the card's Reproduce line said `--answer-probs False`, which `hallubench run` refuses (exit 2)."""
    recorded = _options_dict(RunOptions(model="hf", model_args={"pretrained": "org/m"}, tasks=["cmm"], data_dir="mini"))
    assert recorded["answer_probs"] is False
    card = reproduce_command(Results(run=RunInfo(options=recorded)))
    assert "--answer-probs" not in card
    assert options_of(card)["answer_probs"] is False and options_of(card)["model_args"] == {"pretrained": "org/m"}


def test_a_stopped_run_names_a_command_that_parses_to_its_own_options(server, data_dir, tmp_path, capfd,
                                                                       monkeypatch, offline):
    """Ctrl-C during generation: the printed resume hint and the unfinished mark's command both parse back to the
    run's options, whichever spelling the user typed (lm-eval's --output_path here); never a placeholder."""
    out = tmp_path / "run dir"
    argv = openai_run_argv(server, data_dir, out, "--answer-probs", "--seed", "5")
    argv[argv.index("--output-dir")] = "--output_path"

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("hallubench.harness.runner.generate_batch", interrupted)
    assert main(argv) == 130
    err = capfd.readouterr().err
    assert "the same command: the same command" not in err
    hint = err.split("Resume with the same command: ", 1)[1].splitlines()[0].strip()
    wanted = dataclasses.asdict(build_options(build_parser("run").parse_args(argv)))
    assert options_of(hint) == wanted
    mark = json.loads((out / run_state.UNFINISHED).read_text())
    assert options_of(run_state.finishing_command(out, mark)) == wanted  # rendered from the options it records


def test_the_build_hint_for_a_missing_dataset_parses_to_that_folder(tmp_path, capfd):
    data = tmp_path / "my data; echo hi"
    data.mkdir()
    assert main(["run", "--model", "hf", "--model-args", "pretrained=org/m", "--tasks", "cmm", "--data-dir", str(data),
                 "--output-dir", str(tmp_path / "run")]) == 2
    err = capfd.readouterr().err
    line = err.split("run `", 1)[1].split("`", 1)[0]
    args = parsed(line, "build")
    assert (args.benchmark, args.output_dir) == ("cmm", data / "cmm")
