"""AVHBench: the metric against POPE's official scorer (AVHBench ships none; its tables report POPE's numbers), the
builder on the mini release (both spellings of the release folder, a Hub copy, bad input), and a tiny omni model's
run through `hallubench run` that hears each video's soundtrack and ends with metrics.

Parity fixture (tests/fixtures/avhbench): `outputs.json` holds 30 rounds of adversarial answers (gen.py, seed 7:
"NO", "no!", "Yes. No.", "yes, no", "Not sure.", "nobody", empty answers, ...) to the 20 judgment questions of the
mini release; `official_scores.json` what github.com/AoiDragon/POPE evaluate.py @
08d957b917e5a378a2f99d35b6293c536a66298b printed for each round, over all questions and per AVHBench task, run by
run_official.py in a scratch folder (labels lower-cased: the script reads only "no" as negative). Where the script
stopped on a division by zero, the metric gives None for that number.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import datasets
import pytest
from builders_support import load_here
from hub_server import Repo, StandInHub
from test_build_from_hub import card_source, hallubench

from hallubench.builders import build
from hallubench.builders.mini import make_release
from hallubench.errors import BuildError
from hallubench.metrics.pope.pope import Pope, parse_pope

FIXTURES = Path(__file__).parent / "fixtures" / "avhbench"
NUMBERS = ("accuracy", "precision", "recall", "f1", "yes_ratio")


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return make_release("avhbench", tmp_path_factory.mktemp("avhbench-release"))


def test_metric_reproduces_popes_scorer_on_adversarial_outputs(release):
    rows = [r for r in json.loads((release / "QA.json").read_text()) if r["task"] != "AV Captioning"]
    rounds = json.loads((FIXTURES / "outputs.json").read_text())
    official = json.loads((FIXTURES / "official_scores.json").read_text())
    assert len(rounds) == len(official) == 30 and all(len(answers) == len(rows) for answers in rounds)
    metric, stopped = Pope(), 0
    for answers, printed in zip(rounds, official):
        tasks = [r["task"] for r in rows]
        result = metric.compute(predictions=answers, references=[r["label"] for r in rows], groups={"task": tasks})
        for group, expected in printed.items():
            ours = result if group == "all" else result["by_group"]["task"][group]
            if expected["error"] is None:
                assert {k: ours[k] for k in NUMBERS} == pytest.approx(expected["printed"])
            else:  # the script divided by zero after printing its counts
                stopped += 1
                c = expected["counts"]
                assert ours["accuracy"] == pytest.approx((c["TP"] + c["TN"]) / sum(c.values()))
                assert None in (ours["precision"], ours["recall"], ours["f1"])
        assert result["unparsed"] == sum(parse_pope(a) is None for a in answers)
    assert 0 < stopped < 30 * 4  # the fixture holds both kinds of round


def test_mini_release_builds_per_task_configs_with_each_videos_soundtrack(release, tmp_path):
    out = build("avhbench", release, tmp_path / "ds")
    official = json.loads((release / "QA.json").read_text())
    rows = datasets.load_dataset(str(out), "all", split="test", cache_dir=str(tmp_path / "cache"))
    assert rows["text"] == [r["text"] for r in official] and len(set(rows["id"])) == len(official)
    judgment = datasets.load_dataset(str(out), "judgment", split="test", cache_dir=str(tmp_path / "cache"))
    assert set(judgment["label"]) == {"yes", "no"} and "AV Captioning" not in judgment["task"]
    matching = datasets.load_dataset(str(out), "av_matching", split="test", cache_dir=str(tmp_path / "cache"))
    assert matching["label"].count("no") == 1  # the swapped clip
    import av

    with av.open(str(out / rows[0]["video"])) as clip:
        assert clip.streams.video and clip.streams.audio


def test_the_releases_v0_folder_layout_builds_the_same_rows(release, tmp_path):
    v0 = tmp_path / "AVHBench_v0"
    shutil.copytree(release / "videos", v0 / "video")
    (v0 / "json").mkdir()
    shutil.copy(release / "QA.json", v0 / "json" / "QA.json")
    out = build("avhbench", v0, tmp_path / "ds")
    rows = datasets.load_dataset(str(out), "all", split="test", cache_dir=str(tmp_path / "cache"))
    assert rows[0]["video"] == "video/00001.mp4" and len(rows) == 24


def test_bad_label_and_missing_layout_are_named(release, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(release, bad)
    qa = json.loads((bad / "QA.json").read_text())
    qa[2]["label"] = "Maybe"
    (bad / "QA.json").write_text(json.dumps(qa))
    with pytest.raises(BuildError, match=r"row 2 \(id 'avhbench-0002'\).*'Yes' or 'No'"):
        build("avhbench", bad, tmp_path / "out")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BuildError, match="expected QA.json or json/QA.json"):
        build("avhbench", tmp_path / "empty", tmp_path / "none")


def test_a_judgment_asked_twice_is_kept_once_and_one_with_two_labels_not_at_all(release, tmp_path):
    """QA.json is reported to repeat 7 (video, question) judgments, 2 with conflicting labels."""
    repeated = tmp_path / "repeated"
    shutil.copytree(release, repeated)
    qa = json.loads((repeated / "QA.json").read_text())
    judgments = [i for i, row in enumerate(qa) if row["task"] != "AV Captioning"]
    same, other = qa[judgments[0]], dict(qa[judgments[1]])
    other["label"] = "No" if other["label"].lower() == "yes" else "Yes"
    (repeated / "QA.json").write_text(json.dumps([*qa, dict(same), other]))
    out = build("avhbench", repeated, tmp_path / "out")
    skipped = {row["index"]: row["reason"] for row in map(json.loads, (out / "skipped.jsonl").read_text().splitlines())}
    assert skipped.keys() == {len(qa), judgments[1], len(qa) + 1}
    assert skipped[len(qa)] == f"repeats record {judgments[0]}"
    assert "another answer" in skipped[judgments[1]] and "another answer" in skipped[len(qa) + 1]
    assert "3 repeated judgments left out (2 of them asked again with another label" in (out / "README.md").read_text()
    rows = load_here(out, "all", tmp_path)
    assert len(rows) == len(qa) - 1


def test_without_source_it_says_where_the_release_is_and_a_hub_copy_builds(release, tmp_path):
    hub = StandInHub({"me/avhbench": Repo.from_folder(release)})
    try:
        done = hallubench(["build", "avhbench", "--out", str(tmp_path / "x")], hub, tmp_path / "home")
        assert done.returncode != 0 and "no official release on the Hub" in done.stderr + done.stdout
        assert "kaist-ami/AVHBench" in done.stderr + done.stdout
        done = hallubench(["build", "avhbench", "--source", "hub:me/avhbench", "--out", str(tmp_path / "avh")], hub,
                          tmp_path / "home")
        assert done.returncode == 0, done.stderr[-2000:]
        assert card_source(tmp_path / "avh") == {"repo_id": "me/avhbench", "commit": hub.repos["me/avhbench"].commit}
    finally:
        hub.close()


def test_tiny_omni_model_hears_the_soundtrack_and_the_run_ends_with_metrics(release, mini_datasets, tiny_checkpoint,
                                                                          tmp_path):
    from hallubench.cli.main import main
    from hallubench.harness import store
    from hallubench.harness.results_schema import Results

    os.environ["HF_HUB_OFFLINE"] = "1"
    model = tiny_checkpoint("qwen2_5_omni")
    assert main(["run", "--model", "hf", "--model-args", f"pretrained={model},dtype=float32", "--data-dir",
                 str(mini_datasets), "--output-dir", str(tmp_path / "run"), "--tasks", "avhbench",
                 "--num-frames", "2", "--gen-kwargs", "max_new_tokens=2"]) == 0
    records, _ = store.read_jsonl(tmp_path / "run" / "samples.jsonl")
    assert len(records) == 20
    assert all(r["media"]["audio"]["path"] == r["media"]["video"]["path"] and not r["media"]["audio"]["muted"]
               for r in records)
    task = Results.from_dict(json.loads((tmp_path / "run" / "results.json").read_text())).tasks["avhbench"]
    assert all(name in task.metrics for name in NUMBERS)
    assert set(task.groups) == {"Audio-driven Video Hallucination", "Video-driven Audio Hallucination", "AV Matching"}
    # The run's outputs replaced by a fixture round and re-scored: results.json holds POPE's script's numbers.
    qa = json.loads((release / "QA.json").read_text())  # the mini release the run's dataset was built from
    judgment = [i for i, row in enumerate(qa) if row["task"] != "AV Captioning"]
    answers = dict(zip(judgment, json.loads((FIXTURES / "outputs.json").read_text())[0]))
    printed = json.loads((FIXTURES / "official_scores.json").read_text())[0]
    path = tmp_path / "run" / "samples.jsonl"
    for record in records:
        record["outputs"] = [answers[int(record["id"].removeprefix("avhbench-"))]]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["run", "--from-outputs", str(tmp_path / "run")]) == 0
    task = Results.from_dict(json.loads((tmp_path / "run" / "results.json").read_text())).tasks["avhbench"]
    assert printed["all"]["error"] is None
    assert {k: task.metrics[k] for k in NUMBERS} == pytest.approx(printed["all"]["printed"])
    for group, expected in printed.items():
        if group != "all" and expected["error"] is None:
            assert {k: task.groups[group].metrics[k] for k in NUMBERS} == pytest.approx(expected["printed"])
