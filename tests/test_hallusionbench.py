"""HallusionBench end to end: the builder reads both official layouts (the authors' JSON + hallusion_bench/ and the
Hub copy's parquet splits) into the same rows, `hallubench build hallusionbench` fetches the Hub copy from the
stand-in Hub, and a tiny model's run of both tasks ends with the authors' metrics, the questions without a figure
asked without an image."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import datasets
import pytest
import torch
from hub_server import Repo, StandInHub
from test_build_from_hub import card_source, hallubench as hallubench_cli

from hallubench.builders import build
from hallubench.builders.mini import make_release
from hallubench.builders.mini.hallusionbench import hub_layout
from hallubench.cli.main import main
from hallubench.errors import BuildError
from hallubench.harness import store

FIXTURES = Path(__file__).parent / "fixtures" / "hallusionbench"
KEY = ("category", "subcategory", "set_id", "figure_id", "question_id")
os.environ["HF_HUB_OFFLINE"] = "1"
torch.set_num_threads(1)


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    root = tmp_path_factory.mktemp("hallusionbench")
    return make_release("hallusionbench", root / "github"), hub_layout(root / "hub"), root


def rows_of(folder, cache):
    rows = datasets.load_dataset(str(folder), "all", split="test", cache_dir=str(cache))
    return {row["id"]: row for row in rows.cast_column("image", datasets.Image(decode=False))}


def test_both_layouts_build_the_same_rows(releases, tmp_path):
    github, hub, _ = releases
    official = json.loads((github / "HallusionBench.json").read_text())
    from_github = rows_of(build("hallusionbench", github, tmp_path / "a"), tmp_path / "cache")
    from_hub = rows_of(build("hallusionbench", hub, tmp_path / "b"), tmp_path / "cache")
    assert from_github.keys() == from_hub.keys() and len(from_github) == len(official) == 24
    for key, row in from_github.items():
        other = from_hub[key]
        assert {k: v for k, v in row.items() if k != "image"} == {k: v for k, v in other.items() if k != "image"}
        assert (row["image"] is None) == (row["visual_input"] == "0") == (other["image"] is None)
        if row["image"]:
            assert row["image"]["bytes"] == other["image"]["bytes"] == (
                github / "hallusion_bench" / row["filename"].removeprefix("./")).read_bytes()
            assert (tmp_path / "a" / row["image"]["path"]).is_file()
    first = official[0]
    assert from_github["-".join(["hallusionbench", *(first[k] for k in ("category", "subcategory", "set_id",
                                                                          "figure_id", "question_id"))])]


def test_a_hub_copy_without_filename_and_sample_note_builds(releases, tmp_path):
    """lmms-eval reads neither column; a copy without them gets the authors' figure paths and a null note."""
    import pyarrow.parquet as pq

    github, hub, _ = releases
    for path in sorted((hub / "data").glob("*.parquet")):
        table = pq.read_table(path)
        (tmp_path / "hub" / "data").mkdir(parents=True, exist_ok=True)
        pq.write_table(table.drop_columns(["filename", "sample_note"]), tmp_path / "hub" / "data" / path.name)
    out = build("hallusionbench", tmp_path / "hub", tmp_path / "out")
    rows = rows_of(out, tmp_path / "cache")
    official = {row["question"] + row["figure_id"]: row for row in json.loads((github / "HallusionBench.json").read_text())}
    assert {row["question"] + row["figure_id"]: row["filename"] for row in rows.values()} == \
        {key: row["filename"] for key, row in official.items()}
    assert all(row["sample_note"] is None for row in rows.values())
    assert "had no filename or sample_note column" in (out / "README.md").read_text()


def test_bad_rows_are_named(releases, tmp_path):
    github, hub, root = releases
    bad = root / "bad"
    make_release("hallusionbench", bad)
    rows = json.loads((bad / "HallusionBench.json").read_text())
    no_figure = next(i for i, row in enumerate(rows) if row["visual_input"] == "0")
    rows[no_figure]["filename"] = "./VS/table/0_1.png"
    (bad / "HallusionBench.json").write_text(json.dumps(rows))
    with pytest.raises(BuildError, match=rf"HallusionBench.json: row {no_figure} .*a question has a figure exactly"):
        build("hallusionbench", bad, tmp_path / "out")
    (hub / "data" / "non_image-00000-of-00001.parquet").rename(tmp_path / "moved.parquet")
    try:
        with pytest.raises(BuildError, match="no non_image-\\*.parquet"):
            build("hallusionbench", hub, tmp_path / "out2")
    finally:
        (tmp_path / "moved.parquet").rename(hub / "data" / "non_image-00000-of-00001.parquet")


@pytest.mark.parametrize("repo_id", ["lmms-lab/HallusionBench", "lmms-lab-encoder/HallusionBench"])
def test_build_without_source_fetches_the_hub_copy(releases, tmp_path, repo_id):
    """At lmms-lab's first home or where lmms-eval moved its copies on 2026-07-30 (the first one then gone)."""
    github, hub, _ = releases
    server = StandInHub({repo_id: Repo.from_folder(hub)})
    try:
        done = hallubench_cli(["build", "hallusionbench", "--out", str(tmp_path / "hb")], server, tmp_path / "home")
    finally:
        server.close()
    assert done.returncode == 0, done.stderr[-2000:]
    assert card_source(tmp_path / "hb") == {"repo_id": repo_id, "commit": server.repos[repo_id].commit}
    rows = rows_of(tmp_path / "hb", tmp_path / "cache")
    official = json.loads((github / "HallusionBench.json").read_text())
    assert sorted(row["question"] for row in rows.values()) == sorted(row["question"] for row in official)


@pytest.fixture(scope="module")
def run_dir(releases, tiny_checkpoint):
    """A tiny random model's run of both tasks on the mini release."""
    github, _, root = releases
    build("hallusionbench", github, root / "data" / "hallusionbench")
    out = root / "run"
    assert main(["run", "--model", "hf", "--model-args", f"pretrained={tiny_checkpoint('qwen2_vl')},dtype=float32",
                 "--data-dir", str(root / "data"), "--output-dir", str(out),
                 "--tasks", "hallusionbench,hallusionbench_judge", "--gen-kwargs", "max_new_tokens=3"]) == 0
    return out


def test_a_tiny_model_run_ends_with_the_authors_metrics(run_dir):
    out = run_dir
    results = json.loads((out / "results.json").read_text())["tasks"]
    rule, judged = results["hallusionbench"], results["hallusionbench_judge"]
    for task, judge in ((rule, "rule"), (judged, "judge")):
        if task["n_scored"] == 0:  # a random tiny model may write no readable answer at all: no score, but why
            assert task["not_scored"] == f"0 of {task['n_selected']} scored: {task['n_unreadable']} unreadable"
            assert task["metrics"][f"qacc_{judge}"] is None and task["metrics"][f"aacc_{judge}"] is None
        else:
            assert 0.0 <= task["metrics"][f"qacc_{judge}"] <= task["metrics"][f"aacc_{judge}"] <= 1.0
        assert {"VD", "VS", "VD/illusion", "VS/map"} <= set(task["groups"])
        assert not any(name.endswith("_judge" if judge == "rule" else "_rule") for name in task["metrics"])
    # a random tiny model reads as no yes/no: every such answer is counted, none mapped to an answer
    records, _ = store.read_jsonl(out / "samples.jsonl")
    rule_records = [r for r in records if r["task"] == "hallusionbench"]
    assert rule["n_unparsed"] == sum(r["parsed"] is None for r in rule_records)
    no_figure = {r["id"] for r in rule_records if r["metric_inputs"]["visual_input"] == "0"}
    assert len(no_figure) == 4 and all(r["error"] is None for r in records)
    assert all(("image" in (r["media"] or {})) == (r["id"] not in no_figure) for r in rule_records)
    # the judge saw the authors' prompt with the model's answer
    step = next(r for r in records if r["task"] == "hallusionbench_judge")["steps"]
    assert step["judge"]["prompts"][0]["text"].startswith("Imagine you are an intelligent teacher.")
    assert step["judge"]["prompts"][0]["text"].endswith(f"Prediction answer:{step['answer']['outputs'][0][0]}\nOutput:")


def test_rescored_outputs_give_the_authors_numbers(run_dir, tmp_path):
    """The run's answers and judgments replaced by a parity run's (tests/fixtures/hallusionbench, see
    test_metric_hallusionbench.py) and re-scored with --from-outputs: results.json holds the authors' scorer's
    numbers, overall and for VD and VS, for the rule and for the judge."""
    runs = json.loads((FIXTURES / "parity_inputs.json").read_text())
    official = json.loads((FIXTURES / "parity_numbers.json").read_text())
    index = 5
    items = {"-".join(["hallusionbench", *(r[k] for k in KEY)]): r for r in runs[index]}
    out = tmp_path / "run"
    shutil.copytree(run_dir, out)
    records, _ = store.read_jsonl(out / "samples.jsonl")
    for record in records:
        item = items[record["id"]]
        record["outputs"] = [item["model_prediction"]]
        if record["steps"]:
            record["steps"]["answer"]["outputs"] = [[item["model_prediction"]]]
            record["steps"]["judge"]["outputs"] = [[item["judgment"]]]
    (out / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["run", "--from-outputs", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())["tasks"]
    for task, judge in (("hallusionbench", "rule"), ("hallusionbench_judge", "judge")):
        expected = official[index][judge]
        for where, metrics in (("all", results[task]["metrics"]), ("VD", results[task]["groups"]["VD"]["metrics"]),
                               ("VS", results[task]["groups"]["VS"]["metrics"])):
            assert {name: metrics[f"{name}_{judge}"] for name in expected[where]} == pytest.approx(expected[where])
    assert results["hallusionbench"]["n_unparsed"] == official[index]["rule"]["unclear"] > 0
    assert results["hallusionbench_judge"]["n_unreadable"] == official[index]["judge"]["unclear"] > 0
