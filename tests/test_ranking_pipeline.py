"""`hallubench crosscheck` end to end on the mini AVHalluBench with three tiny random Qwen2.5-Omni
thinkers (different seeds), the embedding judge and RefCheck: run 1 ranks A and B, run 2 adds C and must
judge exactly the (sentence, passage) pairs that involve C; `hallubench rank` on the same run folders
reproduces the scores from the cache alone; the ranking folder is pushed to a Hub test double."""
import csv
import json
import os
import sqlite3
from pathlib import Path

import pytest
import torch
import yaml

from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.judges import split_sentences
from hallubench.judges.judgment_cache import judgment_key
from hallubench.publish.rankings import CONFIGS
from hallubench.ranking.report import FILES

os.environ["HF_HUB_OFFLINE"] = "1"
torch.set_num_threads(1)
TASKS = ["avhallubench_visual", "avhallubench_audio"]
AV_BOARDS = {"avhallubench_visual": "avhallubench_visual_av", "avhallubench_audio": "avhallubench_audio_av"}
BOARDS = TASKS + list(AV_BOARDS.values())


@pytest.fixture(scope="module")
def setup(tmp_path_factory, mini_datasets):
    from hallubench.testing.demo import tiny_specs

    root = tmp_path_factory.mktemp("crosscheck")
    specs = tiny_specs(root / "models", seeds=(1, 2, 3))
    assert len({(s.model_args["pretrained"] / Path("model.safetensors")).read_bytes() for s in specs}) == 3
    models = {name: spec.model_args["pretrained"] for name, spec in zip(("omni-a", "omni-b", "omni-c"), specs)}
    return root, models, mini_datasets


def _config(root, models, names):
    path = root / f"models-{len(names)}.yaml"
    path.write_text(yaml.safe_dump({
        "model_args": {"dtype": "float32"}, "tasks": TASKS, "limit": 2, "num_samples": 2, "num_frames": 2,
        "gen_kwargs": {"max_new_tokens": 8},
        "models": [{"name": n, "pretrained": str(models[n])} for n in names]}))
    return path


def _crosscheck(setup, names):
    root, models, data = setup
    return main(["crosscheck", "--config", str(_config(root, models, names)), "--data-dir", str(data),
                 "--output-dir", str(root / "out"), "--cache", str(root / "judgments.sqlite"), "--refcheck"])


def _cache_keys(root):
    with sqlite3.connect(root / "judgments.sqlite") as conn:
        return {row[0] for row in conn.execute("SELECT key FROM judgments")}


@pytest.fixture(scope="module")
def runs(setup):
    root = setup[0]
    assert _crosscheck(setup, ["omni-a", "omni-b"]) == 0
    first = json.loads((root / "out" / "ranking" / "crosscheck.json").read_text())
    keys = _cache_keys(root)
    assert _crosscheck(setup, ["omni-a", "omni-b", "omni-c"]) == 0
    second = json.loads((root / "out" / "ranking" / "crosscheck.json").read_text())
    return first, keys, second


def _records(run_dir):
    by_task = {}
    for rec in store.read_store(run_dir).records.values():
        by_task.setdefault(rec["task"], {})[rec["id"]] = rec
    return by_task


def judged_pairs(out, names):
    """Every (sentence, passage) pair a ranking of `names` judges, computed here from the run folders:
    per task each target sentence x each model's samples x its reference, plus the video descriptions'
    sentences x the audio task's samples (the audio-visual board)."""
    recs = {n: _records(out / "runs" / n) for n in names}
    pairs = set()
    for task in TASKS:
        for item, rec in recs[names[0]][task].items():
            for target in names:
                for sentence in split_sentences(recs[target][task][item]["outputs"][0]):
                    pairs.add((sentence, rec["reference"]))
                    pairs.update((sentence, p) for e in names for p in recs[e][task][item]["samples"])
                    if task == TASKS[0]:
                        pairs.update((sentence, p) for e in names for p in recs[e][TASKS[1]][item]["samples"])
    return pairs


def test_adding_a_model_judges_only_pairs_involving_it(setup, runs):
    root = setup[0]
    first, keys_before, second = runs
    new = judged_pairs(root / "out", ["omni-a", "omni-b", "omni-c"]) - judged_pairs(root / "out", ["omni-a", "omni-b"])
    judge = second["judge"]
    assert judge["counters"]["calls"] == len(new) > 0
    assert judge["counters"]["saved"] == judge["counters"]["pairs"] - len(new) > 0
    expected_keys = {judgment_key(s, e, judge["judge_id"], judge["prompt_version"]) for s, e in new}
    assert _cache_keys(root) - keys_before == expected_keys
    assert first["judge"]["counters"]["calls"] == len(keys_before)  # fresh cache: every unique pair once


def test_models_already_run_are_resumed_not_regenerated(setup, runs):
    out = setup[0] / "out" / "runs"
    generated = {n: json.loads((out / n / "results.json").read_text())["run"]["generated"] for n in ("omni-a", "omni-c")}
    assert generated == {"omni-a": 0, "omni-c": 4}  # 2 tasks x 2 items, only for the new model
    record = next(iter(_records(out / "omni-c")["avhallubench_visual"].values()))
    assert len(record["samples"]) == 2 and record["sample_generation"]["temperature"] == 1.0
    assert record["sample_generation"]["top_p"] == 0.9


def test_ranking_folder(setup, runs):
    folder = setup[0] / "out" / "ranking"
    _, _, second = runs
    assert all((folder / name).stat().st_size > 0 for name in FILES)
    assert (folder / "leaderboard.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = list(csv.DictReader(open(folder / "leaderboard.csv")))
    assert [r["board"] for r in rows] == [b for b in BOARDS for _ in range(3)]
    for board in BOARDS:
        ranked = [r for r in rows if r["board"] == board]
        scores = [float(r["crosscheck"]) for r in ranked]
        assert scores == sorted(scores) and {r["model"] for r in ranked} == {"omni-a", "omni-b", "omni-c"}
        assert [r["model"] for r in ranked] == second["boards"][board]["ranking"]
        assert all(float(r["ci_low"]) <= float(r["crosscheck"]) <= float(r["ci_high"]) for r in ranked)
        tests = second["boards"][board]["uncertainty"]["adjacent_sign_tests"]
        assert [float(r["p_vs_next"]) for r in ranked[:-1]] == pytest.approx([t["p"] for t in tests])
        assert ranked[-1]["p_vs_next"] == "" and all(t["wins"] + t["losses"] + t["ties"] == 2 for t in tests)
    md = (folder / "leaderboard.md").read_text()
    assert all(f"### {b}" in md for b in BOARDS) and "judge calls made" in md
    assert "our extension" not in md and all(second["boards"][b]["extension"] is None for b in BOARDS)  # explicit
    assert "| 95% CI | vs next: sign test p |" in md and "bootstrap 95% percentile interval" in md
    visual = second["boards"]["avhallubench_visual"]
    assert set(visual["eta"]["omni-a"]) == {"omni-a", "omni-b", "omni-c"}  # self-inclusion
    assert sum(visual["eta"]["omni-a"].values()) == pytest.approx(1.0)
    corr = visual["correlations"]
    assert corr["refcheck_system_spearman"]["n"] == 3 and corr["refcheck_document_pearson"]["n"] == 6
    sentences = [json.loads(line) for line in open(folder / "sentences.jsonl")]
    assert len(sentences) == sum(int(r["sentences"]) for r in rows)
    assert all(s["refcheck"] is not None for s in sentences if s["board"] not in AV_BOARDS.values())


@pytest.mark.parametrize("described", list(AV_BOARDS))
def test_audio_visual_sentence_is_min_of_visual_and_audio_evidence(setup, runs, described):
    boards, kind = runs[2]["boards"], described.removeprefix("avhallubench_")
    av_eta = boards[AV_BOARDS[described]]["eta"]["omni-b"]
    assert sum(w for e, w in av_eta.items() if e.endswith("@audio")) == pytest.approx(1.0)
    assert sum(w for e, w in av_eta.items() if e.endswith("@visual")) == pytest.approx(1.0)
    # The described modality's group of the audio-visual board is that task's board itself (same targets, evidence
    # and eta), so min(C_audio, C_visual) can only lower a sentence's score there.
    assert {e.removesuffix(f"@{kind}"): w for e, w in av_eta.items() if e.endswith(f"@{kind}")} == \
        pytest.approx(boards[described]["eta"]["omni-b"])
    lines = [json.loads(line) for line in open(setup[0] / "out" / "ranking" / "sentences.jsonl")]
    own = {(s["model"], s["id"], s["index"]): s for s in lines if s["board"] == described}
    av = {(s["model"], s["id"], s["index"]): s for s in lines if s["board"] == AV_BOARDS[described]}
    assert av.keys() == own.keys() and all(av[k]["sentence"] == own[k]["sentence"] for k in av)
    assert all(av[k]["crosscheck"] <= own[k]["crosscheck"] + 1e-12 for k in av)
    assert any(av[k]["crosscheck"] < own[k]["crosscheck"] - 1e-9 for k in av)  # the other modality's evidence counts


def test_rank_cli_reproduces_scores_from_the_cache(setup, runs, tmp_path, capsys):
    root = setup[0]
    reference = tmp_path / "reference.csv"
    second = runs[2]
    visual = second["boards"]["avhallubench_visual"]["scores"]
    reference.write_text("model,score\n" + "".join(f"{m},{-s}\n" for m, s in visual.items()))
    argv = ["rank", *[str(root / "out" / "runs" / n) for n in ("omni-a", "omni-b", "omni-c")], "--output-dir",
            str(tmp_path / "ranking"), "--cache", str(root / "judgments.sqlite"), "--refcheck",
            "--reference", str(reference)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    again = json.loads((tmp_path / "ranking" / "crosscheck.json").read_text())
    assert again["judge"]["counters"]["calls"] == 0 and "0 judge calls made" in printed
    for board in BOARDS:
        assert again["boards"][board]["scores"] == pytest.approx(second["boards"][board]["scores"])
    assert again["boards"]["avhallubench_visual"]["correlations"]["reference_system_spearman"]["value"] == \
        pytest.approx(-1.0)


def test_push_to_hub_uploads_the_ranking_folder(setup, runs, monkeypatch, tmp_path):
    from hallubench.cli.rank import push
    from hallubench.errors import PublishError
    from hub_server import StandInHub
    from test_publish_hub import TOKEN

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    double = StandInHub({}).serve_in_process(monkeypatch, tmp_path)
    try:  # the runs are on the mini benchmarks: refused unless allowed, then marked
        with pytest.raises(PublishError, match="embedded synthetic mini benchmarks"):  # cli/main.py prints it
            push(setup[0] / "out" / "ranking", "me/crosscheck-ranking", "rank")
        assert not double.requests
        assert push(setup[0] / "out" / "ranking", "me/crosscheck-ranking", "rank", allow_mini_data=True) == 0
    finally:
        double.close()
    (commit,) = double.commits
    assert commit["repo"] == "me/crosscheck-ranking" and commit["kind"] == "dataset"
    assert set(commit["files"]) == set(FILES) | {"README.md"} | {f"data/{name}.parquet" for name in CONFIGS}
    assert commit["files"]["leaderboard.csv"] == (setup[0] / "out" / "ranking" / "leaderboard.csv").read_bytes()
    card = commit["files"]["README.md"].decode()
    assert "### avhallubench_visual" in card and "hallubench-mini-data" in card and "**MINI DATA: runs made" in card
    # The card's configs read the pushed tables with plain `datasets`.
    import datasets

    pushed = tmp_path / "pushed"
    for name, data in commit["files"].items():
        (pushed / name).parent.mkdir(parents=True, exist_ok=True)
        (pushed / name).write_bytes(data)
    cache = str(tmp_path / "cache")
    board = datasets.load_dataset(str(pushed), split="train", cache_dir=cache)  # the default config
    assert board.num_rows == (setup[0] / "out" / "ranking" / "leaderboard.csv").read_text().count("\n") - 1
    assert "crosscheck" in board.column_names
    sentences = datasets.load_dataset(str(pushed), "sentences", split="train", cache_dir=cache)
    lines = (setup[0] / "out" / "ranking" / "sentences.jsonl").read_text().splitlines()
    assert sentences.num_rows == len(lines) and sentences[0] == json.loads(lines[0]) | {"evidence": sentences[0]["evidence"]}
    assert datasets.load_dataset(str(pushed), "documents", split="train", cache_dir=cache).num_rows > 0
    sent = [r for r in double.seen if TOKEN in r["url"] + r["body"].decode("utf-8", "replace")]
    assert not sent and all(r["headers"].get("authorization") == f"Bearer {TOKEN}" for r in double.seen)


def test_rank_with_the_nli_judge(setup, runs, tmp_path, capsys):
    from nli_support import make_tiny_nli

    root = setup[0]
    checkpoint = make_tiny_nli(tmp_path / "tiny-mnli")
    names = ("omni-a", "omni-b", "omni-c")
    argv = ["rank", *[str(root / "out" / "runs" / n) for n in names], "--output-dir", str(tmp_path / "ranking"),
            "--cache", str(tmp_path / "nli.sqlite"), "--judge", "nli", "--judge-args", f"pretrained={checkpoint}"]
    assert main(argv) == 0
    result = json.loads((tmp_path / "ranking" / "crosscheck.json").read_text())
    assert result["judge"]["judge_id"].startswith(f"nli:{checkpoint}")
    # Without --refcheck: every target sentence against every model's samples, each unique pair judged once.
    references = {rec["reference"] for n in names for by_id in _records(root / "out" / "runs" / n).values()
                  for rec in by_id.values()}
    expected = {pair for pair in judged_pairs(root / "out", list(names)) if pair[1] not in references}
    assert result["judge"]["counters"]["calls"] == len(expected)
    for board in BOARDS:
        scores = result["boards"][board]["scores"]
        assert set(scores) == set(names) and all(0.0 <= s <= 1.0 for s in scores.values())
    assert main(argv) == 0  # the same ranking again: everything comes from the cache
    assert json.loads((tmp_path / "ranking" / "crosscheck.json").read_text())["judge"]["counters"]["calls"] == 0
