"""lm-evaluation-harness habits work: its flag spellings (-o/--output_path, --batch_size auto, --limit 0.1,
--gen_kwargs do_sample=False, --apply_chat_template), a subcommand's own usage on a bad flag, and results.json
read by lm-eval's own `make_table`."""
import argparse
import json
import logging
import math
import os

import pytest
import torch

from hallubench.cli.main import build_parser, main
from hallubench.errors import ConfigError
from hallubench.harness.options import RunOptions, apply_gen_kwargs, parse_batch_size, parse_limit
from hallubench.models.protocol import GenerationSettings, Message, TextPart

os.environ["HF_HUB_OFFLINE"] = "1"


def test_every_dashed_flag_of_every_command_also_takes_its_underscore_spelling():
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    checked = 0
    for name, sub in commands.items():
        for action in sub._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and "-" in flag[2:]:
                    assert "--" + flag[2:].replace("-", "_") in action.option_strings, (name, flag)
                    checked += 1
    assert checked > 40


def test_a_bad_flag_of_a_subcommand_names_that_subcommand_in_one_line(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--tasks", "cmm", "--bogus-flag", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err == "hallubench run: error: unrecognized arguments: --bogus-flag 1 (see `hallubench run --help`)\n"


@pytest.mark.parametrize("value, expected", [("0.1", 0.1), ("5", 5), ("1", 1), (0.5, 0.5), (3, 3), ("2.0", 2)])
def test_limit_is_a_count_or_a_fraction(value, expected):
    assert parse_limit(value) == expected and type(parse_limit(value)) is type(expected)


@pytest.mark.parametrize("value", ["0", "1.5", "-0.2", "x", True, 0.0])
def test_limit_refuses_what_is_neither(value):
    with pytest.raises(ConfigError, match="--limit: expected a whole number >= 1 or a fraction"):
        parse_limit(value)


@pytest.mark.parametrize("total, limit, expected", [(33, 0.1, 4), (10, 0.1, 1), (7, 0.5, 4), (7, 3, 3), (7, None, None)])
def test_a_fractional_limit_takes_that_share_rounded_up_as_lm_eval(total, limit, expected):
    assert RunOptions(limit=limit).limit_for(total) == expected


def test_batch_size_takes_auto_or_a_positive_number():
    assert parse_batch_size("auto") == "auto" and parse_batch_size("AUTO") == "auto" and parse_batch_size("8") == 8
    for bad in ("0", "aut", "-1", 0, True):
        with pytest.raises(ConfigError, match="--batch-size: expected a whole number >= 1 or auto"):
            parse_batch_size(bad)


def test_do_sample_switches_between_greedy_and_sampling():
    sampled = GenerationSettings(temperature=0.7, top_p=0.9)
    assert apply_gen_kwargs(sampled, {"do_sample": False}).temperature == 0.0
    assert apply_gen_kwargs(sampled, {"do_sample": True}).temperature == 0.7  # the task's own temperature stays
    assert apply_gen_kwargs(GenerationSettings(), {"do_sample": True}).temperature == 1.0  # transformers' default
    assert apply_gen_kwargs(GenerationSettings(), {"do_sample": True, "temperature": 0.3}).temperature == 0.3
    for bad, message in [({"do_sample": 1}, "do_sample must be True or False"),
                         ({"do_sample": False, "temperature": 0.5}, "contradicts temperature=0.5")]:
        with pytest.raises(ConfigError, match=message):
            RunOptions(gen_kwargs=bad)


def test_auto_batch_size_is_found_once_by_halving_on_out_of_memory(monkeypatch, caplog):
    """On CUDA, auto tries the first batch whole and halves it on out-of-memory until it fits; the size found is kept
    for every later batch (a stand-in `_generate_batch` that runs out of memory above 5 conversations)."""
    from hallubench.models.hf import HFChatModel

    caplog.set_level(logging.WARNING, logger="hallubench")  # a note on the logger, not a bare print
    model = HFChatModel.__new__(HFChatModel)
    model.family, model.use_audio_in_video, model.name, model.device = None, False, "hf:stand-in", "cuda:0"
    model.fitting, model.batch_size = True, 64
    calls = []

    def generate_batch(conversations, settings, interleaved=False, seeds=None):
        calls.append(len(conversations))
        if len(conversations) > 5:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return [[conversation[0].content[0].text.upper()] * settings.n for conversation in conversations]

    monkeypatch.setattr(model, "_generate_batch", generate_batch)
    conversations = [[Message("user", [TextPart(f"q{i:02d}")])] for i in range(30)]
    outputs = model.generate(conversations, GenerationSettings(max_new_tokens=2))
    assert outputs == [[f"Q{i:02d}"] for i in range(30)]
    assert calls[:3] == [30, 15, 7] and calls[3] == 3  # 30 and 15 and 7 ran out of memory; 3 fits
    assert model.batch_size == 3 and set(calls[3:]) <= {3}
    assert sum(calls[3:]) == 30  # every conversation answered once
    assert "batch_size auto: 30 conversations ran out of memory on cuda:0; 3 per batch from now on" in caplog.text
    calls.clear()
    model.generate(conversations[:7], GenerationSettings(max_new_tokens=2))
    assert calls == [3, 3, 1]  # found once: later calls start from the size found


def test_auto_batch_size_keeps_the_full_batch_when_it_fits(monkeypatch):
    from hallubench.models.hf import HFChatModel

    model = HFChatModel.__new__(HFChatModel)
    model.family, model.use_audio_in_video, model.name, model.device = None, False, "hf:stand-in", "cuda:0"
    model.fitting, model.batch_size = True, 64
    calls = []
    monkeypatch.setattr(model, "_generate_batch", lambda conversations, *a, **k: calls.append(len(conversations))
                        or [["x"]] * len(conversations))
    model.generate([[Message("user", [TextPart(f"q{i}")])] for i in range(70)], GenerationSettings())
    assert calls == [64, 6] and model.batch_size == 64


def test_lm_eval_spellings_run_end_to_end_and_make_table_prints_results_json(tiny_checkpoint, mini_datasets, tmp_path,
                                                                              capsys):
    """One run given the way an lm-eval user types it; lm-eval's own make_table prints its results.json."""
    make_table = pytest.importorskip("lm_eval.utils").make_table
    torch.set_num_threads(1)
    model = tiny_checkpoint("qwen2_5_omni")
    out = tmp_path / "run"
    assert main(["run", "--model", "hf", "--model_args", f"pretrained={model},dtype=float32", "--tasks", "cmm",
                 "--data_dir", str(mini_datasets), "--output_path", str(out), "--limit", "0.1", "--batch_size", "auto",
                 "--gen_kwargs", "do_sample=False,max_new_tokens=4", "--num_frames", "2", "--apply_chat_template",
                 "--log_samples"]) == 0
    captured = capsys.readouterr()
    data = json.loads((out / "results.json").read_text())
    cmm = data["tasks"]["cmm"]
    assert cmm["n_selected"] == math.ceil(0.1 * cmm["n_total"]) < cmm["n_total"]
    assert "SUBSET" in captured.out and f"cmm {cmm['n_selected']} of {cmm['n_total']}" in captured.out
    assert data["run"]["options"]["batch_size"] == "auto" and data["run"]["auto_batch_sizes"] == [4]
    assert "batch_size auto on cpu: 4" in captured.err
    assert data["n-samples"]["cmm"] == {"original": cmm["n_total"], "effective": cmm["n_selected"]}
    assert data["config"]["batch_size"] == "auto" and data["config"]["batch_sizes"] == [4]
    assert data["config"]["limit"] == 0.1
    if cmm["not_scored"]:  # a random tiny model may write no readable answer: no score, so no lm-eval number
        assert all(value is None or isinstance(value, int) for value in cmm["metrics"].values())
        assert not any(isinstance(value, float) for value in data["results"]["cmm"].values())
        return
    table = make_table(data)
    rows = [line for line in table.splitlines() if line.startswith("|")]
    first = next(row for row in rows if row.split("|")[1].strip() == "cmm")
    cells = [cell.strip() for cell in first.split("|")]
    metric, value = cells[5], cells[7]
    assert f"{metric},none" in data["results"]["cmm"]
    shown = data["results"]["cmm"][f"{metric},none"]
    assert shown == cmm["metrics"][metric] and float(value) == pytest.approx(shown, abs=5e-5)
    assert cells[2] == str(cmm["version"]) and cells[4] == "0"  # Version, n-shot
    assert cells[6] in ("↑", "↓", "")
    for group in cmm["groups"]:  # each group follows its task, as lm-eval shows subtasks
        assert any(row.split("|")[1].strip() == f"- {group}" for row in rows), group


def test_lm_eval_block_sets_n_shot_and_leaves_non_scalars_out():
    from hallubench.harness.lm_eval_block import lm_eval_block
    from hallubench.harness.results_schema import GroupResult, Results, TaskResult

    task = TaskResult(task="mhalubench_selfcheck_2shot", metric="mhalubench", version=3, n_total=10, n_selected=10,
                      metrics={"f1": 0.5, "f1_stderr": 0.1, "confusion": {"a": 1}, "macro": 0.25, "macro_stderr": None},
                      higher_is_better={"f1": True}, groups={"object": GroupResult(metrics={"f1": 0.4})})
    block = lm_eval_block(Results(tasks={"mhalubench_selfcheck_2shot": task}))
    entry = block["results"]["mhalubench_selfcheck_2shot"]
    assert entry == {"alias": "mhalubench_selfcheck_2shot", "f1,none": 0.5, "f1_stderr,none": 0.1, "macro,none": 0.25,
                     "macro_stderr,none": "N/A"}
    assert block["n-shot"] == {"mhalubench_selfcheck_2shot": 2, "mhalubench_selfcheck_2shot::object": 2}
    assert block["versions"]["mhalubench_selfcheck_2shot::object"] == 3
    assert block["higher_is_better"]["mhalubench_selfcheck_2shot"] == {"f1": True}
