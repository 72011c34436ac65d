"""A command line that guides (issue 34): the task listing, "did you mean" for every name and flag, tool adapters
only under --helper, a Hub id neither cached nor reachable named in seconds, `rank` without sampled passages
refused before anything is written, -o/--output-dir on every command that writes, and plain text on the terminal.
Each case runs the CLI (`main`) and expects the listing or a one-line named error, never a traceback; the walks go
over the registries and the parsers, so a plug-in or subcommand added later is covered without editing this file."""
from __future__ import annotations

import argparse
import itertools
import json
import os
import socket
import time

import pytest

from hallubench.cli.main import build_parser, main
from hallubench.errors import ConfigError, did_you_mean
from hallubench.registry import ALL, MODELS, TASKS

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ESCAPES = ("\\_", "\\(", "\\*", "&lt;", "&gt;", "&amp;", "**", "### ")  # markdown or HTML escaping on a terminal


def _one_line_error(err: str, command: str) -> None:
    assert err.startswith(f"hallubench {command}: error: ") and err.count("\n") == 1 and "Traceback" not in err


# --- the task listing -------------------------------------------------------------------------------------------

def test_tasks_lists_every_registered_task_with_its_group_medium_and_scorer(capsys):
    assert main(["tasks"]) == 0
    listing = capsys.readouterr().out
    assert listing.startswith(f"{len(TASKS)} tasks in ")
    groups = listing.split("\n\n")
    for name in TASKS:  # every task, each on a row of its own under its group's heading, which names the scorer
        task = TASKS[name]                                     # when the group's tasks share it, else the row does
        group = next(g for g in groups if g.startswith(f"{task.benchmark}: "))
        lines = group.splitlines()
        at = next(n for n, line in enumerate(lines) if line.split()[:1] == [name])
        wrapped = itertools.takewhile(lambda line: line.startswith("    "), lines[at + 1:])  # its wrapped lines
        row = " ".join([lines[at], *(line.strip() for line in wrapped)])
        heading = lines[1]
        assert (task.metric or "crosscheck") in (heading if "scored by" in heading else row)
    assert "verifier (skipped)" in listing and "judge (the model)" in listing  # SAC3's helper roles
    assert not any(mark in listing for mark in ESCAPES)


def test_run_tasks_list_prints_the_same_listing(capsys):
    assert main(["tasks"]) == 0
    listing = capsys.readouterr().out
    assert main(["run", "--tasks", "list"]) == 0
    assert capsys.readouterr().out == listing


def test_a_task_registered_by_a_plug_in_is_listed_with_its_own_description(monkeypatch, capsys):
    import dataclasses

    toy = dataclasses.replace(TASKS["pope"], name="toy_probe", benchmark="toy", description="a toy probe task")
    monkeypatch.setitem(TASKS._entries, "toy_probe", toy)
    assert main(["tasks"]) == 0
    assert "\n  toy_probe  a toy probe task\n" in capsys.readouterr().out
    assert main(["tasks", "toy_probe", "--json"]) == 0
    [summary] = json.loads(capsys.readouterr().out)
    assert summary.pop("benchmark_about").startswith("POPE")  # the module that defines it: pope's
    assert summary == {"name": "toy_probe", "group": "toy", "config": "coco", "description": "a toy probe task",
                       "medium": "image", "helpers": {}, "scored_by": "pope", "cross_checkable": False}


def test_every_task_has_a_description_of_its_own():
    from hallubench.benchmarks.catalog import catalog

    summaries = [task for group in catalog().values() for task in group]
    descriptions = [task.description for task in summaries]
    assert len(set(descriptions)) == len(descriptions) == len(TASKS)
    assert not {task.description for task in summaries} & {task.benchmark_about for task in summaries}


@pytest.mark.parametrize("command", [["tasks"], ["tasks", "sac3", "mhalubench_official"], ["models"],
                                     ["models", "hf", "openai", "search", "scene_text", "grounding_dino"],
                                     ["models", "qwen2_5_omni", "Voxtral", "SmolVLM"]])
def test_listings_and_details_fit_100_columns(command, capsys):
    assert main(command) == 0
    wide = [line for line in capsys.readouterr().out.splitlines() if len(line) > 100]
    assert not wide, wide


def test_models_names_checkpoints_pretrained_and_the_device_as_chosen_at_run_time(capsys):
    assert main(["models"]) == 0
    listed = capsys.readouterr().out
    assert "hf      pretrained (required)," in listed and "openai  model (required)," in listed
    assert " kind " not in listed and "name_or_path" not in listed  # no internal words
    assert main(["models", "hf"]) == 0
    detail = capsys.readouterr().out.splitlines()
    assert next(line for line in detail if line.split()[:1] == ["device"]).split()[2] == "(run"
    assert "else the accelerate process's device" in " ".join(line.strip() for line in detail)
    assert main(["models", "qwen2_5_vl"]) == 0 and capsys.readouterr().out.startswith("Qwen2.5-VL (--model hf)")
    assert main(["models", "qwen2_5_vll"]) == 2
    err = capsys.readouterr().err
    _one_line_error(err, "models")
    assert "did you mean 'qwen2_5_vl'" in err


def test_tasks_name_gives_the_detail_of_a_task_or_a_group(capsys):
    assert main(["tasks", "sac3_prime"]) == 0
    detail = capsys.readouterr().out
    assert detail.startswith("sac3_prime (group sac3)\n") and "--helper verifier" in detail
    assert "--tasks sac3_prime" in detail and "medium:    text" in detail
    assert main(["tasks", "sac3"]) == 0  # a group (no task has its name): each of its tasks
    assert capsys.readouterr().out.count("(group sac3)") == sum(TASKS[name].benchmark == "sac3" for name in TASKS) > 1
    assert main(["tasks", "sac"]) == 2
    err = capsys.readouterr().err
    _one_line_error(err, "tasks")
    assert "no task or group 'sac' (did you mean 'sac3'?)" in err


# --- "did you mean" ---------------------------------------------------------------------------------------------

def _typo(name: str) -> str:
    """`name` with its last two characters swapped (or one doubled): one slip of the fingers."""
    return name[:-2] + name[-1] + name[-2] if len(name) > 3 and name[-1] != name[-2] else name + name[-1]


@pytest.mark.parametrize("registry", ALL, ids=lambda registry: registry.kind)
def test_every_registry_suggests_the_closest_name_for_a_typo(registry):
    for name in registry:
        typo = _typo(name)
        if typo in registry:
            continue
        message = registry.unknown(typo)
        assert message.startswith(f"unknown {registry.kind} {typo!r} (did you mean ") and repr(name) in message
        with pytest.raises(KeyError, match="did you mean"):
            registry.lookup(typo)


def _parsers(parser: argparse.ArgumentParser, prog: str = "hallubench"):
    """Every parser of the CLI with its command line, sub-commands' sub-commands included."""
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{prog} {name}")


def test_every_choice_of_every_parser_suggests_the_closest_for_a_typo(capsys):
    checked = 0
    for prog, parser in _parsers(build_parser()):
        for action in parser._actions:
            choices = [str(choice) for choice in action.choices or ()]
            if not choices or isinstance(action, argparse._SubParsersAction) and prog != "hallubench":
                continue
            typo = _typo(choices[0])
            if typo in choices:
                continue
            with pytest.raises(argparse.ArgumentError, match=f"did you mean .*{choices[0]!r}"):
                parser._check_value(action, typo)
            checked += 1
    assert checked >= 5


@pytest.mark.parametrize("argv, command, expected", [
    (["rnu"], "", "invalid choice: 'rnu' (did you mean 'run'?)"),
    (["run", "--tasks", "cmm", "--modle", "hf"], "run", "--modle (did you mean '--model'"),
    (["run", "--tasks", "cmm", "--num-sampels", "2"], "run", "--num-sampels (did you mean '--num-samples'"),
    (["rank", "runs/a", "--judge", "embeding"], "rank", "invalid choice: 'embeding' (did you mean 'embedding'?)"),
    (["metrics", "push", "pa_hrr", "--namespace", "me"], "metrics push", "did you mean 'pa_hr'"),
])
def test_mistyped_commands_flags_and_choices_are_one_line_with_a_suggestion(argv, command, expected, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    prog = f"hallubench {command}".strip()
    assert err.startswith(f"{prog}: error: ") and err.count("\n") == 1 and expected in err
    assert f"(see `{prog} --help`)" in err


@pytest.mark.parametrize("argv, expected", [
    (["--model", "hf", "--model-args", "pretrained=x", "--tasks", "cmn"], "unknown task 'cmn' (did you mean 'cmm'?)"),
    (["--model", "hff", "--model-args", "pretrained=x", "--tasks", "cmm"],
     "--model: unknown chat model adapter 'hff' (did you mean 'hf'?)"),
])
def test_mistyped_task_and_model_names_suggest_the_closest(argv, expected, tmp_path, capsys):
    assert main(["run", *argv, "--data-dir", str(tmp_path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    _one_line_error(err, "run")
    assert expected in err


def test_a_mistyped_judge_suggests_the_closest():
    from hallubench.ranking.judging import judge_config

    with pytest.raises(ConfigError, match=r"--judge: unknown judge 'nil' \(did you mean 'nli'\?\)"):
        judge_config("nil")
    assert did_you_mean("zzzz", ["hf", "openai"]) == ""


# --- tool adapters are no chat models ---------------------------------------------------------------------------

def test_tool_adapters_are_refused_as_model_before_anything_loads(tmp_path, capsys, monkeypatch):
    from hallubench.models import chat_adapters, model_role

    tools = [name for name in MODELS if model_role(name) == "tool"]
    assert {"grounding_dino", "scene_text", "search"} <= set(tools)
    assert not set(tools) & set(chat_adapters()) and {"hf", "openai"} <= set(chat_adapters())
    monkeypatch.setattr("hallubench.harness.runner.load_checked", lambda *a, **k: pytest.fail("a model was loaded"))
    import accelerate  # noqa: F401  imported before the clock starts, as the run's module imports torch
    for tool in tools:
        start = time.perf_counter()
        argv = ["run", "--model", tool, "--model-args", "pretrained=IDEA-Research/grounding-dino-tiny", "--tasks",
                "cmm", "--data-dir", "mini", "-o", str(tmp_path / tool)]
        assert main(argv) == 2
        err = capsys.readouterr().err
        _one_line_error(err, "run")
        assert f"{tool} is a tool adapter, not a chat model" in err and "--helper ROLE" in err
        assert time.perf_counter() - start < 10 and not (tmp_path / tool).exists()


def test_models_lists_tool_adapters_under_helper(capsys):
    from hallubench.models import model_role

    assert main(["models"]) == 0
    listed = capsys.readouterr().out
    adapters, tools = listed.split("\nAdapters: --model NAME --model-args")[1].split("\nTools a task step calls: "
                                                                                    "--helper ROLE")
    for name in MODELS:
        section = adapters if model_role(name) == "chat" else tools
        assert any(line.split()[:1] == [name] for line in section.splitlines()), (name, section)


def test_run_help_offers_chat_models_as_model_and_says_how_to_reach_vllm():
    run = dict(_parsers(build_parser("run")))["hallubench run"]
    model = next(action for action in run._actions if action.dest == "model")
    offered = model.help.partition(". vLLM")[0]
    assert "hf or openai" in offered and not any(tool in offered for tool in ("grounding_dino", "scene_text", "search"))
    assert "--model openai --model-args base_url=" in model.help


# --- a Hub id that is neither cached nor reachable --------------------------------------------------------------

@pytest.fixture
def closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens there now: connections are refused at once


@pytest.fixture
def hanging_hub():
    """A stand-in Hub that accepts connections (the kernel's backlog) and never answers a byte."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.parametrize("endpoint", ["closed_port", "hanging_hub", "offline"])
def test_an_uncached_hub_id_without_network_is_a_named_error_in_seconds(endpoint, request, tmp_path, capsys,
                                                                        monkeypatch):
    from huggingface_hub import constants

    import hallubench.harness.runner  # noqa: F401  imported before the clock starts (torch, accelerate)
    from hallubench.harness.data import resolve_data_dir

    resolve_data_dir("mini")  # built before the clock starts too: the check comes after the rows are read

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", endpoint == "offline")
    if endpoint != "offline":
        monkeypatch.setattr(constants, "ENDPOINT", request.getfixturevalue(endpoint))
    monkeypatch.setattr("hallubench.models.get_model", lambda *a, **k: pytest.fail("the loader was reached"))
    start = time.perf_counter()
    assert main(["run", "--model", "hf", "--model-args", "pretrained=someone/not-cached", "--tasks", "cmm",
                 "--data-dir", "mini", "--limit", "2", "-o", str(tmp_path / "out")]) == 2
    elapsed = time.perf_counter() - start
    err = capsys.readouterr().err
    _one_line_error(err, "run")
    assert "pretrained=someone/not-cached is not in the Hub cache" in err and "hf download someone/not-cached" in err
    assert ("HF_HUB_OFFLINE is set" if endpoint == "offline" else "did not answer within 5 s") in err
    assert elapsed < 15, elapsed


def test_a_cached_hub_id_is_not_probed(tmp_path, monkeypatch):
    from huggingface_hub import constants

    from hallubench.harness import hub_model

    monkeypatch.setattr(hub_model, "cached", lambda repo_id, revision: True)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    hub_model.check_hub_model("someone/cached", None, "--model")  # no error, no request


# --- rank without sampled passages ------------------------------------------------------------------------------

def test_rank_of_runs_without_samples_is_a_named_error_that_writes_nothing(tmp_path, capsys):
    runs = []
    for name in ("a", "b"):
        run = tmp_path / name
        run.mkdir()
        record = {"key": f"{name}-q1", "task": "avhallubench_visual", "id": "q1", "outputs": ["A red square."],
                  "samples": [], "reference": "A red square.", "error": None}
        (run / "samples.jsonl").write_text(json.dumps(record) + "\n")
        runs.append(str(run))
    out = tmp_path / "ranking"
    assert main(["rank", *runs, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    _one_line_error(err, "rank")
    assert "has sampled passages to cross-check" in err and "--num-samples >= 1" in err
    assert not out.exists()


# --- one spelling of the output folder --------------------------------------------------------------------------

def test_every_output_folder_flag_is_spelled_o_output_dir_with_out_as_an_alias():
    found = []
    for prog, parser in _parsers(build_parser()):
        for action in parser._actions:
            names = set(action.option_strings)
            if action.dest in ("output_dir", "out", "output", "output_path") or names & {"--out", "--output"}:
                found.append(prog)
                assert {"-o", "--output-dir", "--out"} <= names and action.dest == "output_dir", (prog, names)
    assert {"hallubench build", "hallubench view", "hallubench run", "hallubench rank", "hallubench demo",
            "hallubench crosscheck", "hallubench metrics push"} <= set(found)


def test_view_and_build_take_output_dir(tmp_path):
    view = build_parser().parse_args(["view", "ranking", "--output-dir", str(tmp_path / "site")])
    assert view.output_dir == tmp_path / "site"
    build = build_parser().parse_args(["build", "cmm", "--out", str(tmp_path / "cmm")])
    assert build.output_dir == tmp_path / "cmm"


# --- plain text on the terminal ---------------------------------------------------------------------------------

def test_a_ranking_prints_plain_text_and_writes_escaped_markdown(tmp_path, capsys):
    red = "A red square moves to the left. A tone beeps twice a second."
    runs = []
    for name, samples in (("tiny_model_1", [red, "A red square slides left."]), ("tiny_model_2", [red]),
                          ("tiny_model_3", ["A dog plays the piano.", red])):
        run = tmp_path / name
        run.mkdir()
        lines = [{"key": f"{name}-{item}", "task": "avhallubench_visual", "id": item, "outputs": [red],
                  "samples": samples, "reference": "A red square moving left; a beeping tone.", "error": None}
                 for item in ("q1", "q2")]
        (run / "samples.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        runs.append(str(run))
    out = tmp_path / "ranking"
    assert main(["rank", *runs, "-o", str(out), "--cache", str(tmp_path / "j.sqlite"), "--refcheck",
                 "--weighting", "uniform"]) == 0
    printed = capsys.readouterr().out
    assert "tiny_model_1" in printed and "refcheck_system_spearman: " in printed and "(n=3" in printed
    assert not [mark for mark in ESCAPES if mark in printed], printed
    written = (out / "leaderboard.md").read_text()
    assert "tiny\\_model\\_1" in written and "### avhallubench_visual" in written  # the file keeps its markdown


def test_demo_labels_are_cut_short():
    from hallubench.builders.summary import LABEL_WIDTH, MOST_LABELS, _counts

    captions = [f"A caption number {i} that goes on for a good while about a moving square" for i in range(9)]
    cell = _counts(captions + ["yes", "yes"])
    values = cell.split(", ")
    assert len(values) == MOST_LABELS + 1 and values[-1] == f"{10 - MOST_LABELS} other values"
    assert all(len(value.rpartition(" ")[0]) <= LABEL_WIDTH for value in values[:-1]) and "yes 2" in values


def test_perturbation_groups_sort_by_level_value():
    from hallubench.harness.scoring import natural_key

    levels = ["video_blur=16", "video_blur=0", "video_blur=4", "audio_snr=inf", "audio_snr=-10", "audio_snr=20"]
    assert sorted(levels, key=natural_key) == ["audio_snr=-10", "audio_snr=20", "audio_snr=inf", "video_blur=0",
                                               "video_blur=4", "video_blur=16"]
