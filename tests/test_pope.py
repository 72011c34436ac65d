"""POPE: the `pope` metric against the authors' evaluate.py, the builder on both release layouts (the authors' files
with a COCO image folder, and the Hub copy lmms-lab/POPE served by the stand-in Hub), and a tiny model's run."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from builders_support import load_here
from hub_server import Repo, StandInHub
from test_build_from_hub import card_source, hallubench

from hallubench.benchmarks import get_task
from hallubench.builders import build
from hallubench.builders.mini.pope import SETTINGS, make
from hallubench.cli.main import main
from hallubench.errors import BuildError
from hallubench.harness import store
from hallubench.harness.data import load_rows
from hallubench.metrics.pope.pope import Pope, parse_pope

FIXTURES = Path(__file__).parent / "fixtures" / "pope"
PRINTED = re.compile(r"(Accuracy|Precision|Recall|F1 score|Yes ratio): (\S+)")


@pytest.fixture(scope="module")
def pope():
    return Pope()


def printed_numbers(text: str) -> dict:
    """What evaluate.py prints: the TP/FP/TN/FN line and the five named numbers."""
    lines = text.splitlines()
    counts = dict(zip(("tp", "fp", "tn", "fn"), map(int, lines[1].split())))
    names = {"Accuracy": "accuracy", "Precision": "precision", "Recall": "recall", "F1 score": "f1",
             "Yes ratio": "yes_ratio"}
    return {**counts, **{names[name]: float(value) for name, value in PRINTED.findall(text)}}


def test_metric_reproduces_the_authors_evaluate_py_exactly(pope):
    """tests/fixtures/pope/evaluate_py_outputs.json: 120 adversarial answers per setting against the mini annotations
    (odd casing, punctuation, empty, both and neither answers), and what evaluate.py of github.com/AoiDragon/POPE
    @ 08d957b printed for each setting (run unchanged but for its two file names)."""
    fixture = json.loads((FIXTURES / "evaluate_py_outputs.json").read_text())
    answers = fixture["answers"]
    result = pope.compute(predictions=[a["answer"] for a in answers], references=[a["label"] for a in answers],
                          groups={"setting": [a["setting"] for a in answers]})
    for setting in SETTINGS:
        got = result["by_group"]["setting"][setting]
        expected = printed_numbers(fixture["printed"][setting])
        assert {name: got[name] for name in expected} == expected  # exact: the floats print in full
        neither = [a for a in answers if a["setting"] == setting and parse_pope(a["answer"]) is None]
        assert got["unparsed"] == len(neither) > 0


@pytest.mark.parametrize("text, official, parsed", [
    ("Yes", "yes", "yes"), ("No", "no", "no"), ("no.", "no", "no"), ("Yes, there is no dog.", "no", "no"),
    ("There is not a dog.", "no", "no"), ("Yes. No.", "yes", "yes"),  # only the first sentence counts
    ("NO", "yes", None), ("No!", "yes", None), ("Nope.", "yes", None), ("", "yes", None), ("I cannot tell.", "yes", None),
    ("**Yes**", "yes", "yes"), ("Yes!", "yes", "yes"), ("No\nthere is none", "yes", None), ("no-one", "yes", None),
])
def test_the_authors_rule_and_what_counts_as_unparsed(pope, text, official, parsed):
    result = pope.compute(predictions=[text], references=["no"])
    assert (result["yes_ratio"] == 1.0) == (official == "yes")
    assert parse_pope(text) == parsed and result["unparsed"] == (parsed is None)


def test_a_class_without_predictions_is_none_where_the_script_divides_by_zero(pope):
    result = pope.compute(predictions=["No.", "No."], references=["yes", "no"])
    assert result["precision"] is None and result["f1"] is None and result["recall"] == 0.0
    with pytest.raises(ValueError, match=r"references\[1\] is 'maybe'"):
        pope.compute(predictions=["No.", "No."], references=["yes", "maybe"])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The mini release in the authors' layout, built."""
    tmp = tmp_path_factory.mktemp("pope")
    return build("pope", make(tmp / "release"), tmp / "pope"), tmp


def test_the_authors_layout_gives_one_row_per_probe_with_its_image(built):
    folder, tmp = built
    rows = load_here(folder, "coco", tmp)
    official = {(s, json.loads(line)["question_id"]): json.loads(line)
                for s in SETTINGS for line in (tmp / "release/output/coco" / f"coco_pope_{s}.json").read_text().splitlines()}
    assert len(rows) == len(official) == 48
    for row in rows:
        probe = official[row["setting"], row["question_id"]]
        assert row["id"] == f"pope-coco-{row['setting']}-{row['question_id']}"
        assert (row["question"], row["answer"], row["image_name"]) == (probe["text"], probe["label"], probe["image"])
        image = (tmp / "release/val2014" / probe["image"]).read_bytes()
        assert row["image"] == {"path": f"val2014/{probe['image']}", "bytes": image}
        assert (folder / "val2014" / probe["image"]).read_bytes() == image


@pytest.mark.parametrize("setting", SETTINGS)
def test_each_setting_has_a_task_of_its_own(built, setting):
    task = get_task(f"pope_{setting}")
    kept = [row for row in load_rows(built[0], task)[0] if not task.exclude(row)]
    assert len(kept) == 16 and {row["setting"] for row in kept} == {setting}


@pytest.mark.parametrize("repo_id", ["lmms-lab/POPE", "lmms-lab-encoder/POPE"])
def test_the_stand_in_hub_copy_builds_the_same_rows(built, tmp_path, repo_id):
    """The Hub copy as lmms-lab laid it out (data/test-*.parquet, and Full/ with the probes again), at its first
    home or where lmms-eval moved it on 2026-07-30 (the first one then gone); Full/ is never downloaded."""
    folder, tmp = built
    hub_release = make(tmp_path / "hub-release", hub=True)
    repo = Repo.from_folder(hub_release)
    shard = repo.files["data/test-00000-of-00001.parquet"]
    repo.files.update({f"Full/{setting}-00000-of-00001.parquet": shard for setting in ("adversarial", "popular",
                                                                                       "random")})
    server = StandInHub({repo_id: Repo(repo.files)})
    try:
        done = hallubench(["build", "pope", "--out", str(tmp_path / "pope")], server, tmp_path / "home")
    finally:
        server.close()
    assert done.returncode == 0, done.stderr[-3000:]
    assert card_source(tmp_path / "pope")["repo_id"] == repo_id
    fetched = [path for _, path in server.requests if "/resolve/" in path]
    assert fetched and not [path for path in fetched if "/Full/" in path]
    fields = ("id", "setting", "question_id", "image_name", "question", "answer")
    from_hub = load_here(tmp_path / "pope", "coco", tmp_path)
    from_files = load_here(folder, "coco", tmp)
    assert [{k: r[k] for k in fields} for r in from_hub] == [
        {k: r[k] for k in fields} | {"image_name": r["image_name"].removesuffix(".jpg")} for r in from_files]
    assert [r["image"] for r in from_hub] == [r["image"] for r in from_files]
    assert (tmp_path / "pope/val2014/COCO_val2014_000000000001.jpg").read_bytes() == \
        (folder / "val2014/COCO_val2014_000000000001.jpg").read_bytes()


def test_a_release_gone_from_every_known_home_names_them_all(tmp_path):
    server = StandInHub({})
    try:
        done = hallubench(["build", "pope", "--out", str(tmp_path / "pope")], server, tmp_path / "home")
    finally:
        server.close()
    assert done.returncode == 1 and "no Hub dataset repo lmms-lab/POPE or lmms-lab-encoder/POPE" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "pope").exists()


def test_bad_releases_name_the_file_and_row(tmp_path):
    release = make(tmp_path / "release")
    (release / "output/coco/coco_pope_popular.json").unlink()
    with pytest.raises(BuildError, match=r"coco_pope_popular.json are missing; pass the folder holding output/coco/"):
        build("pope", release, tmp_path / "out")
    release = make(tmp_path / "release2")
    path = release / "output/coco/coco_pope_random.json"
    path.write_text(path.read_text().replace('"label": "no"', '"label": "maybe"', 1))
    with pytest.raises(BuildError, match=r"row 1 \(id 'pope-coco-random-2'\): label must be 'yes' or 'no'"):
        build("pope", release, tmp_path / "out2")
    (release / "val2014/COCO_val2014_000000000002.jpg").unlink()
    path.write_text(path.read_text().replace('"label": "maybe"', '"label": "no"'))
    with pytest.raises(BuildError, match=r"COCO_val2014_000000000002.jpg is missing"):
        build("pope", release, tmp_path / "out3")


def test_the_seem_built_sets_become_their_own_configs(tmp_path):
    """A-OKVQA's file is a JSON list (not JSON lines) over COCO val2014 images, as the release ships it."""
    release = make(tmp_path / "release")
    probes = [json.loads(line) for line in (release / "output/coco/coco_pope_random.json").read_text().splitlines()]
    for setting in SETTINGS:
        path = release / f"output/seem/aokvqa/aokvqa_pope_seem_{setting}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(probes[:4], indent=4))
    folder = build("pope", release, tmp_path / "pope")
    rows = load_here(folder, "aokvqa", tmp_path)
    assert len(rows) == 12 and {r["setting"] for r in rows} == set(SETTINGS)
    assert [r["question"] for r in rows[:4]] == [p["text"] for p in probes[:4]]
    assert len(load_here(folder, "coco", tmp_path)) == 48


def test_a_tiny_model_run_ends_with_the_pope_numbers_per_setting(built, tmp_path, tiny_checkpoint):
    folder, _ = built
    os.environ["HF_HUB_OFFLINE"] = "1"
    model, out = tiny_checkpoint("qwen2_5_omni"), tmp_path / "run"
    assert main(["run", "--model", "hf", "--model-args", f"pretrained={model},dtype=float32", "--data-dir",
                 str(folder.parent), "--output-dir", str(out), "--tasks", "pope", "--gen-kwargs", "max_new_tokens=3", "--batch-size", "16"]) == 0
    records, _ = store.read_jsonl(out / "samples.jsonl")
    task = json.loads((out / "results.json").read_text())["tasks"]["pope"]
    assert len(records) == 48 and {"accuracy", "precision", "recall", "f1", "yes_ratio"} <= set(task["metrics"])
    assert task["n_unparsed"] == sum(parse_pope(r["outputs"][0]) is None for r in records)
    assert set(task["groups"]) == set(SETTINGS)
    expected = Pope().compute(predictions=[r["outputs"][0] for r in records], references=[r["reference"] for r in records])
    if task["n_scored"]:
        assert task["metrics"]["accuracy"] == expected["accuracy"]
    else:  # no answer read (the authors' rule would count them all "yes"): no number, but why
        assert task["metrics"]["accuracy"] is None and task["not_scored"] == "0 of 48 scored: 48 unreadable"
        # nor confusion counts of answers read as "yes" by default
        assert all(task["metrics"][count] is None for count in ("tp", "fp", "tn", "fn"))
