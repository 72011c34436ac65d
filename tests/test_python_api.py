"""The Python API (hallubench.run / plan / rank / build) is the command line's own path: every flag of each command
is a keyword of its function with the same default, `import hallubench` imports no torch, errors are
HallubenchError (never SystemExit), the same run through both gives the same results, and the plan (`run
--dry-run`) checks every argument before torch, transformers or datasets load: a wrong dtype or an uncached Hub
id offline is named within seconds."""
import argparse
import dataclasses
import inspect
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hallubench
from hallubench import api
from hallubench.cli import main as cli
from hallubench.errors import ConfigError, HallubenchError

HEAVY = ("torch", "transformers", "datasets", "accelerate")
# Each command is a function of the API, or says why it is not one.
API_OF = {"run": api.run, "rank": api.rank, "build": api.build}
NO_API = {
    "demo": "runs `run` and `rank` on the mini benchmarks (hallubench.testing), a show, not a library call",
    "tasks": "prints the TASKS registry (hallubench.registry.TASKS from Python)",
    "models": "prints the MODELS registry (hallubench.registry.MODELS from Python)",
    "metrics": "evaluate.load(NAME) is the Python side of the metrics",
    "publish": "hallubench.publish.runs.publish_run is its function",
    "verify": "hallubench.harness.verify is its function",
    "crosscheck": "run + rank in one command: call hallubench.run per model, then hallubench.rank",
    "view": "writes and serves a site: hallubench.view.site.build_site is its function",
    "reproduce": "hallubench.reproduce.run.reproduce is its function (it returns each reproduction's cells)",
}
# Flags that are no keyword, and why.
CLI_ONLY = {
    "config": "a YAML file of these keywords: from Python, pass them",
    "log_samples": "lm-eval's flag, accepted and changing nothing",
    "apply_chat_template": "lm-eval's flag, accepted and changing nothing",
}
INCLUDE_ONLY_IN_RUN = "include"  # rank and build: call hallubench.registry.include(spec) first


def _subparser(command: str) -> argparse.ArgumentParser:
    parser = cli.build_parser(command)
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]


def _keywords(command: str) -> dict[str, inspect.Parameter]:
    params = dict(inspect.signature(API_OF[command]).parameters)
    if command == "run":  # its options are run_options' keywords
        params.update(inspect.signature(api.run_options).parameters)
    return {name: p for name, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}


def _where_it_lands(command: str, dest: str):
    """The default a flag left out gets: argparse's, else (argument_default=SUPPRESS) that of what reads it."""
    from hallubench.harness.options import RunOptions
    from hallubench.ranking.pipeline import rank

    if command == "run" and dest in RunOptions.__dataclass_fields__:
        field = RunOptions.__dataclass_fields__[dest]
        return field.default_factory() if field.default is dataclasses.MISSING else field.default
    if command == "rank" and dest in inspect.signature(rank).parameters:
        return inspect.signature(rank).parameters[dest].default
    return None


def _same(a, b) -> bool:
    empty = (None, {}, [], ())
    return (a in empty and b in empty) or a == b or (isinstance(a, Path) and str(a) == str(b))


def test_every_command_is_a_function_or_says_why_not():
    assert set(API_OF) | set(NO_API) == set(cli.COMMANDS) and not set(API_OF) & set(NO_API)
    assert {hallubench.run, hallubench.rank, hallubench.build} == set(API_OF.values())


@pytest.mark.parametrize("command", sorted(API_OF))
def test_every_flag_is_a_keyword_and_every_keyword_a_flag(command):
    keywords = _keywords(command)
    flags = {action.dest: action for action in _subparser(command)._actions
             if action.dest not in ("help", *CLI_ONLY) and not (action.dest == INCLUDE_ONLY_IN_RUN and command != "run")}
    assert set(flags) == set(keywords), (sorted(set(flags) - set(keywords)), sorted(set(keywords) - set(flags)))


def test_run_keywords_default_as_the_flags():
    """A `run` flag left out (argparse's default is SUPPRESS) gets RunOptions' default, or False / None for the
    switches and folders `run` reads itself: the keyword's default is that value (None standing for empty)."""
    keywords = _keywords("run")
    for action in _subparser("run")._actions:
        if action.dest in ("help", *CLI_ONLY):
            continue
        flag = False if isinstance(action, argparse._StoreTrueAction) else _where_it_lands("run", action.dest)
        assert _same(flag, keywords[action.dest].default), (action.dest, flag, keywords[action.dest].default)


def test_rank_and_build_defaults_equal_the_flags():
    from hallubench.ranking.pipeline import rank

    for name, p in inspect.signature(api.rank).parameters.items():
        if name in inspect.signature(rank).parameters and name not in ("run_dirs", "output_dir", "tasks"):
            assert _same(p.default, inspect.signature(rank).parameters[name].default), name
    output = next(a for a in _subparser("rank")._actions if a.dest == "output_dir")
    assert Path(inspect.signature(api.rank).parameters["output_dir"].default) == output.default
    for action in _subparser("build")._actions:
        if action.dest in ("source", "skip_missing", "overwrite"):
            assert inspect.signature(api.build).parameters[action.dest].default == action.default, action.dest


def _python(code: str, env: dict | None = None, timeout: float = 120) -> tuple[subprocess.CompletedProcess, float]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    return done, time.perf_counter() - start


def test_import_hallubench_is_light():
    done, _ = _python("import hallubench, sys\nhallubench.run, hallubench.plan, hallubench.rank, hallubench.build\n"
                      f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr


def test_errors_are_hallubench_errors_not_system_exit(tmp_path):
    with pytest.raises(ConfigError, match="--model-args: bad token"):
        hallubench.run(model="hf", model_args="pretrained", tasks="cmm", data_dir="mini")
    with pytest.raises(ConfigError, match="nope"):
        hallubench.plan(model="hf", model_args={"pretrained": str(tmp_path)}, tasks="nope", data_dir="mini")
    with pytest.raises(ConfigError, match="--tasks: expected"):
        hallubench.plan(model="hf", model_args={"pretrained": str(tmp_path)}, tasks=3, data_dir="mini")
    with pytest.raises(HallubenchError):
        hallubench.rank([tmp_path / "no-such-run"], output_dir=tmp_path / "ranking")


# The wrapper reports which heavy modules the failing command imported, and its exit code.
CHECK = ("import sys\nfrom hallubench.cli.main import main\nrc = main({argv!r})\n"
         f"print(rc, sorted(m for m in {HEAVY!r} if m in sys.modules))")


def test_a_wrong_dtype_is_named_before_torch_loads(tmp_path):
    argv = ["run", "--model", "hf", "--model-args", f"pretrained={tmp_path},dtype=int3", "--tasks", "cmm",
            "--data-dir", "mini", "-o", str(tmp_path / "out")]
    done, seconds = _python(CHECK.format(argv=argv))
    assert done.stdout.strip() == "2 []", (done.stdout, done.stderr)
    assert "dtype=int3: not a weights dtype; use one of auto, bfloat16, float16, float32" in done.stderr
    assert seconds < 30  # about 1 s of CPU (5 s was the bar, on a machine shared by 8 the wall time varies)


def test_an_uncached_hub_id_offline_is_named_before_torch_and_datasets_load(tmp_path, mini_datasets):
    argv = ["run", "--model", "hf", "--model-args", "pretrained=someone/not-cached", "--tasks", "cmm",
            "--data-dir", str(mini_datasets), "-o", str(tmp_path / "out")]
    done, seconds = _python(CHECK.format(argv=argv), {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "hub")})
    assert done.stdout.strip() == "2 []", (done.stdout, done.stderr)
    assert "pretrained=someone/not-cached is not in the Hub cache" in done.stderr and "HF_HUB_OFFLINE" in done.stderr
    assert seconds < 30


def test_the_plan_counts_items_media_and_calls_and_the_dry_run_prints_it(tmp_path, mini_datasets, capsys):
    checked = hallubench.plan(model="hf", model_args={"pretrained": str(tmp_path)}, tasks="cmm,avhallubench_visual",
                              data_dir=mini_datasets, limit=3, num_samples=2, output_dir=tmp_path / "run")
    assert set(checked.tasks) == {"cmm", "avhallubench_visual"} and checked.items == 6
    cmm, av = checked.tasks["cmm"], checked.tasks["avhallubench_visual"]
    assert cmm.samples is None and cmm.calls_per_item == 1  # yes/no questions draw no extra samples
    assert av.samples.n == 2 and av.calls_per_item == 2 and checked.model_calls == 3 + 6
    assert sum(cmm.media.values()) >= 3 and not cmm.missing_media and cmm.mini and checked.resume is None
    assert cmm.source["revision"].startswith("sha256:")
    assert json.loads(json.dumps(checked.to_dict()))["items"] == 6
    argv = ["run", "--model", "hf", "--model-args", f"pretrained={tmp_path}", "--tasks", "cmm,avhallubench_visual",
            "--data-dir", str(mini_datasets), "--limit", "3", "--num-samples", "2", "-o", str(tmp_path / "run"),
            "--dry-run"]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.strip() == checked.summary()
    assert not (tmp_path / "run").exists()  # a dry run writes nothing


@pytest.mark.parametrize("device,given,loaded", [
    (None, {}, "cuda:1"),  # placed by nothing: the process's device (accelerate's, one GPU per process)
    ("cpu", {}, "cpu"),  # --device chose
    (None, {"device": "cpu"}, "cpu"),  # its own device= chose
])
def test_a_run_loads_its_models_with_the_plans_checked_arguments_on_the_process_device(tmp_path, mini_datasets, device,
                                                                                        given, loaded):
    checked = hallubench.plan(model="hf", model_args={"pretrained": str(tmp_path), **given}, tasks="cmm",
                              data_dir=mini_datasets, limit=1, device=device, output_dir=tmp_path / "run")
    model_args, helpers = checked.loads("cuda:1")
    assert model_args == {**checked.model_args, "device": loaded} and helpers == {}  # nothing else changes


def test_the_plan_says_what_a_resume_would_redo(tmp_path, mini_datasets):
    from hallubench.harness import store

    options = dict(model="hf", model_args={"pretrained": str(tmp_path)}, tasks="cmm", data_dir=mini_datasets,
                   limit=4, output_dir=tmp_path / "run")
    first = hallubench.plan(**options)
    items, _ = first.work("fingerprint")
    writer = store.SampleWriter(store.rank_file(tmp_path / "run", 0))
    writer.append_all([{"key": items[0].key, "task": "cmm", "id": items[0].id, "error": None},
                       {"key": items[1].key, "task": "cmm", "id": items[1].id,
                        "error": {"type": "media", "class": "X", "message": "m"}},
                       {"key": "other", "task": "pope", "id": "p1", "error": None}])
    writer.close()
    resume = hallubench.plan(**options).resume
    assert (resume.finished, resume.failed, resume.new, resume.other, resume.redo) == (1, 1, 2, 1, 3)
    assert "a rerun redoes 3 (1 failed, 2 not yet run)" in hallubench.plan(**options).summary()


def test_run_through_python_equals_the_command_line(tiny_checkpoint, mini_datasets, tmp_path):
    model = tiny_checkpoint("qwen2_5_omni")
    flags = {"tasks": "cmm", "limit": 2, "num_frames": 4, "gen_kwargs": "max_new_tokens=4"}
    results = hallubench.run(model="hf", model_args={"pretrained": str(model), "dtype": "float32"},
                             data_dir=mini_datasets, output_dir=tmp_path / "api", **flags)
    argv = ["run", "--model", "hf", "--model-args", f"pretrained={model},dtype=float32", "--data-dir",
            str(mini_datasets), "-o", str(tmp_path / "cli"), "--tasks", "cmm", "--limit", "2", "--num-frames", "4",
            "--gen-kwargs", "max_new_tokens=4"]
    assert cli.main(argv) == 0
    from_cli = json.loads((tmp_path / "cli" / "results.json").read_text())["tasks"]["cmm"]
    from_api = json.loads((tmp_path / "api" / "results.json").read_text())["tasks"]["cmm"]
    assert results.tasks["cmm"].n_selected == 2 and results.tasks["cmm"].metrics == from_api["metrics"]
    for key in ("metrics", "verdicts", "n_scored", "n_errors", "groups", "dataset"):
        assert from_api[key] == from_cli[key], key


def test_a_dry_run_of_a_rescore_is_refused_in_one_line_by_both_and_touches_nothing(tmp_path, capsys):
    """--from-outputs loads no model and generates nothing, so --dry-run has no plan to print: the command line,
    `hallubench.run(dry_run=True, from_outputs=...)` and `hallubench.plan(from_outputs=...)` say so the same way,
    before reading the folder."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results.json").write_text("{}")
    said = "--dry-run cannot be combined with --from-outputs"
    assert cli.main(["run", "--from-outputs", str(folder), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and str(folder) in err and "\n" not in err and "Traceback" not in err
    for refused in (lambda: hallubench.run(from_outputs=folder, dry_run=True),
                    lambda: hallubench.plan(from_outputs=folder, tasks="cmm")):
        with pytest.raises(ConfigError, match=said) as caught:
            refused()
        assert str(caught.value) in err
    assert [path.name for path in folder.iterdir()] == ["results.json"] and (folder / "results.json").read_text() == "{}"


# A value other than its default for each option of `run` that a re-score cannot apply (all but RESCORE_TAKES).
NOT_DEFAULT = {"model": "hf", "model_args": "pretrained=x", "tasks": "pope", "data_dir": "mini", "limit": 2, "seed": 0,
               "batch_size": 2, "gen_kwargs": "max_new_tokens=4", "num_samples": 0, "modality": "visual",
               "num_frames": 2, "fps": 1.0, "max_frames": 4, "device": "cpu", "dtype": "float32",
               "task_args": "k=5", "helpers": {"verifier": {"adapter": "hf"}}, "perturb": "image_blur=0,2",
               "answer_probs": True}


def test_every_run_option_a_rescore_cannot_apply_is_refused_by_flag_before_the_folder_is_read(tmp_path, capsys):
    """--from-outputs scores the outputs with the options their run recorded: each other option, given with it at
    anything but its default, is one ConfigError line naming its flag, from Python and from the command line,
    and the folder is not touched (a results.json that is no results file would be an error once read)."""
    assert set(NOT_DEFAULT) == set(inspect.signature(api.run_options).parameters) - set(api.RESCORE_TAKES)
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results.json").write_text("{}")
    for name, value in NOT_DEFAULT.items():
        flag = "--helper" if name == "helpers" else "--" + name.replace("_", "-")
        with pytest.raises(ConfigError, match=f"cannot apply {flag}: drop them") as caught:
            hallubench.run(from_outputs=folder, **{name: value})
        assert str(folder) in str(caught.value) and "settings their run recorded (its results.json)" in str(caught.value)
    with pytest.raises(ConfigError, match="cannot apply --tasks, --seed, --answer-probs: "):
        hallubench.run(from_outputs=folder, tasks=["pope"], seed=0, answer_probs=True, output_dir=tmp_path / "out")
    argv = ["run", "--from-outputs", str(folder), "--tasks", "pope", "--limit", "3", "--seed", "1234", "-o",
            str(tmp_path / "out"), "--helper", "verifier", "adapter=hf", "--log-samples"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "cannot apply --tasks, --limit, --helper: drop them" in err and "\n" not in err and "Traceback" not in err
    assert [path.name for path in folder.iterdir()] == ["results.json"] and (folder / "results.json").read_text() == "{}"
    assert not (tmp_path / "out").exists()
    with pytest.raises(TypeError, match="taks"):  # a misspelt keyword is no option, as without from_outputs
        hallubench.run(from_outputs=folder, taks="pope")


def test_a_rescore_takes_defaults_given_outright_its_output_dir_and_include(mini_datasets, tmp_path, monkeypatch):
    """Options given at their defaults (a --config file may hold them) are no reason to refuse; --output-dir and
    --include apply, by both roads."""
    from test_publish_hub import MODEL, ChatModelTestDouble

    from hallubench import models

    monkeypatch.setitem(models.MODELS, "test_double", ChatModelTestDouble)
    run_dir = tmp_path / "run"
    hallubench.run(model="test_double", model_args={"pretrained": MODEL}, tasks="cmm", data_dir=mini_datasets,
                   output_dir=run_dir, limit=2, num_samples=1, num_frames=2)
    plugin = tmp_path / "rescore_include_marker.py"  # a module name no other test takes
    plugin.write_text("from pathlib import Path\nPath(__file__).with_suffix('.imported').touch()\n")
    at_defaults = dict(seed=1234, batch_size=1, modality="audio-visual", num_frames=8, max_frames=32,
                       answer_probs=False, model_args={}, tasks=None, helpers={}, limit=None)
    results = hallubench.run(from_outputs=run_dir, output_dir=tmp_path / "api", include=str(plugin), **at_defaults)
    assert results.run.from_outputs == str(run_dir) and (tmp_path / "api" / "results.json").is_file()
    assert (tmp_path / "rescore_include_marker.imported").is_file()
    argv = ["run", "--from-outputs", str(run_dir), "-o", str(tmp_path / "cli"), "--seed", "1234", "--batch-size", "1",
            "--modality", "audio-visual", "--num-frames", "8", "--max-frames", "32"]
    assert cli.main(argv) == 0
    assert (json.loads((tmp_path / "cli" / "results.json").read_text())["tasks"]["cmm"]["metrics"]
            == results.to_dict()["tasks"]["cmm"]["metrics"])
