"""VideoHallucer: the metric against the authors' own scorer, the builder on the mini release (folder and stand-in
Hub), its bad inputs, and a tiny model's run through `hallubench run` that ends with metrics.

Parity fixture (tests/fixtures/videohallucer): `outputs.json` holds 30 rounds of adversarial answers (gen.py, seed
22: odd casing, punctuation, empty answers, both or neither word, "yes-man", "nobody", ...) for the 11 pairs of
the mini release; `official_scores.json` what the authors' scripts printed for each round:
evaluations/evaluation.py main() (per-subset and "all" scores via evaluation_utils.cal_score) and
evaluations/evaluation_bias.py main(), github.com/patrick-tssn/VideoHallucer @ ae4c2f25e9cfc7808591489b829d1bf977163db6,
run by run_official.py in a scratch folder (load_model stubbed: with the predictions saved, `evaluate` only scores).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from builders_support import load_here
from hub_server import Repo, StandInHub
from test_build_from_hub import card_source, hallubench

from hallubench.builders import build
from hallubench.builders.mini import make_release
from hallubench.builders.videohallucer import SUBSETS
from hallubench.errors import BuildError
from hallubench.metrics.videohallucer.videohallucer import VideoHallucer, parse_videohallucer

FIXTURES = Path(__file__).parent / "fixtures" / "videohallucer"
QA_TYPES = {"object_relation": "obj_rel", "temporal": "temporal", "semantic_detail": "semantic",
            "external_factual": "fact", "external_nonfactual": "nonfact"}
HEADLINE = ("basic_accuracy", "halluc_accuracy", "accuracy")


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return make_release("videohallucer", tmp_path_factory.mktemp("videohallucer-release"))


@pytest.fixture(scope="module")
def metric():
    return VideoHallucer()


def items(release: Path, answers: dict) -> dict:
    """The metric's per-question inputs for one round of answers ({subset: [[basic, hallucinated], ...]})."""
    out = {"predictions": [], "references": [], "pair_ids": [], "roles": [], "subsets": []}
    for subset in SUBSETS:
        pairs = json.loads((release / subset / f"{subset}.json").read_text())
        assert len(pairs) == len(answers[subset])
        for index, (pair, given) in enumerate(zip(pairs, answers[subset])):
            for role, text in zip(("basic", "hallucination"), given):
                out["predictions"].append(text)
                out["references"].append(pair[role]["answer"])
                out["pair_ids"].append(f"{subset}-{index}")
                out["roles"].append(role)
                out["subsets"].append(subset)
    return out


def test_metric_reproduces_the_authors_scripts_on_adversarial_outputs(release, metric):
    rounds = json.loads((FIXTURES / "outputs.json").read_text())
    official = json.loads((FIXTURES / "official_scores.json").read_text())
    assert len(rounds) == len(official) == 30
    accuracies = set()
    for answers, printed in zip(rounds, official):
        given = items(release, answers)
        result = metric.compute(**given, groups={"subset": given["subsets"]})
        assert {k: result[k] for k in HEADLINE} == pytest.approx(printed["evaluation.py"]["all"])
        for subset, qa_type in QA_TYPES.items():
            group = result["by_group"]["subset"][subset]
            assert {k: group[k] for k in HEADLINE} == pytest.approx(printed["evaluation.py"][qa_type])
        bias = printed["evaluation_bias.py"]
        assert result["yes_diff"] == pytest.approx(bias["yes difference percentage"])
        assert result["no_diff"] == pytest.approx(bias["no difference percentage"])
        assert result["false_positive_ratio"] == pytest.approx(bias["false positive ratio"])
        assert result["hallucination_score"] == pytest.approx(bias["hallucination score"])
        assert result["unparsed"] == sum(parse_videohallucer(t) is None for t in given["predictions"])
        accuracies.add(round(result["accuracy"], 6))
    assert len(accuracies) > 5  # the rounds differ: the fixture exercises the scorer, not one value


@pytest.mark.parametrize("text, parsed", [
    ("Yes.", "yes"), ("**No**", "no"), ("yes-man", "yes"), ("No, yes.", "yes+no"), ("Yesterday", None),
    ("nobody", None), ("", None), ("noyes", None), ("Answer: NO", "no"),
])
def test_parse_finds_the_words_the_authors_regex_finds(text, parsed):
    assert parse_videohallucer(text) == parsed


def test_a_question_without_its_partner_is_left_out_and_counted(metric):
    result = metric.compute(predictions=["yes", "no", "yes"], references=["yes", "no", "yes"],
                            pair_ids=["a", "a", "b"], roles=["basic", "hallucination", "basic"])
    assert (result["accuracy"], result["n_pairs"], result["incomplete_pairs"]) == (1.0, 1, 1)


@pytest.mark.parametrize("change, message", [
    (dict(roles=["basic", "basic"], references=["yes", "yes"]), "second basic question"),
    (dict(references=["no", "no"]), "a basic question's answer is 'yes'"),
    (dict(roles=["basic", "halluc"]), r"roles\[1\]"),
    (dict(pair_ids=None), "pair_ids and roles are required"),
    (dict(predictions=["yes", None]), r"predictions\[1\]"),
])
def test_bad_metric_inputs_are_named(metric, change, message):
    given = dict(predictions=["yes", "no"], references=["yes", "no"], pair_ids=["a", "a"],
                 roles=["basic", "hallucination"])
    given.update(change)
    with pytest.raises(ValueError, match=message):
        metric._compute(**given)


def test_mini_release_builds_one_config_per_subset_with_pairs_as_rows(release, tmp_path):
    import datasets

    out = build("videohallucer", release, tmp_path / "ds")
    rows = datasets.load_dataset(str(out), "all", split="test", cache_dir=str(tmp_path / "cache"))
    official = {s: json.loads((release / s / f"{s}.json").read_text()) for s in SUBSETS}
    assert len(rows) == 2 * sum(map(len, official.values()))
    assert rows["role"][:2] == ["basic", "hallucination"] and rows["pair_id"][0] == rows["pair_id"][1]
    semantic = [r for r in rows if r["subset"] == "semantic_detail"]
    assert semantic[0]["video"] != semantic[1]["video"]  # the hallucinated question's own clip
    assert all((out / r["video"]).is_file() for r in rows)
    for subset in SUBSETS:
        part = datasets.load_dataset(str(out), subset, split="test", cache_dir=str(tmp_path / "cache"))
        assert part["question"][::2] == [p["basic"]["question"] for p in official[subset]]


def test_missing_subset_is_noted_and_a_release_without_any_is_refused(release, tmp_path):
    import shutil

    partial = tmp_path / "partial"
    shutil.copytree(release, partial)
    shutil.rmtree(partial / "temporal")
    out = build("videohallucer", partial, tmp_path / "ds")
    assert "Subsets missing from the release, left out: temporal." in (out / "README.md").read_text()
    (tmp_path / "empty").mkdir()
    with pytest.raises(BuildError, match="none of object_relation/object_relation.json"):
        build("videohallucer", tmp_path / "empty", tmp_path / "none")


def test_bad_pair_names_file_row_and_id(release, tmp_path):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(release, bad)
    path = bad / "temporal" / "temporal.json"
    pairs = json.loads(path.read_text())
    pairs[1]["hallucination"]["answer"] = "maybe"
    path.write_text(json.dumps(pairs))
    with pytest.raises(BuildError, match=r"temporal-0001-hallucination.*'yes' or 'no'"):
        build("videohallucer", bad, tmp_path / "out")


def test_build_without_source_downloads_the_official_hub_release(release, tmp_path):
    """The Hub repo as uploaded on 2024-06-17: before the authors removed the repeated temporal pairs on GitHub
    (ae4c2f2), so one pair of temporal.json stands there twice; and the extra interaction/ folder the paper does not
    score. The repeat is left out (both rows, in skipped.jsonl and the card), interaction/ is never downloaded."""
    repo = Repo.from_folder(release)
    temporal = json.loads(repo.files["temporal/temporal.json"])
    repo.files["temporal/temporal.json"] = json.dumps([*temporal, temporal[0]], ensure_ascii=False).encode()
    repo.files["interaction/interaction.json"] = b"[]"
    hub = StandInHub({"bigai-nlco/VideoHallucer": Repo(repo.files)})
    try:
        done = hallubench(["build", "videohallucer", "--out", str(tmp_path / "vh")], hub, tmp_path / "home")
        assert done.returncode == 0, done.stderr[-2000:]
        commit = hub.repos["bigai-nlco/VideoHallucer"].commit
        assert card_source(tmp_path / "vh") == {"repo_id": "bigai-nlco/VideoHallucer", "commit": commit}
        assert (tmp_path / "vh" / "semantic_detail" / "videos" / "miniRed01_b.mp4").is_file()
        assert not [path for _, path in hub.requests if "/interaction/" in path]
    finally:
        hub.close()
    repeat = f"temporal-{len(temporal):04d}"
    skipped = [json.loads(line) for line in (tmp_path / "vh" / "skipped.jsonl").read_text().splitlines()]
    assert [row["id"] for row in skipped] == [f"{repeat}-basic", f"{repeat}-hallucination"]
    assert all(row["reason"].startswith("repeats record ") for row in skipped)
    assert "1 pairs identical to an earlier pair of their subset left out" in (tmp_path / "vh" / "README.md").read_text()
    rows = load_here(tmp_path / "vh", "temporal", tmp_path)
    assert len(rows) == 2 * len(temporal) and repeat not in {row["pair_id"] for row in rows}


def test_tiny_video_model_run_ends_with_metrics(mini_datasets, tiny_checkpoint, tmp_path):
    from hallubench.cli.main import main

    os.environ["HF_HUB_OFFLINE"] = "1"
    model = tiny_checkpoint("qwen2_vl")
    assert main(["run", "--model", "hf", "--model-args", f"pretrained={model},dtype=float32", "--data-dir",
                 str(mini_datasets), "--output-dir", str(tmp_path / "run"), "--tasks", "videohallucer",
                 "--num-frames", "2", "--gen-kwargs", "max_new_tokens=2"]) == 0
    from hallubench.harness.results_schema import Results

    task = Results.from_dict(json.loads((tmp_path / "run" / "results.json").read_text())).tasks["videohallucer"]
    assert task.metrics["n_pairs"] == 11 and task.metrics["incomplete_pairs"] == 0
    if task.n_scored:
        assert all(0.0 <= task.metrics[name] <= 1.0 for name in HEADLINE)
    else:  # no answer read: no score, but why (the counts stay)
        assert all(task.metrics[name] is None for name in HEADLINE) and task.not_scored.startswith("0 of ")
    assert set(task.groups) == set(SUBSETS)
    # The run's outputs replaced by a fixture round and re-scored: results.json holds the authors' numbers.
    from hallubench.harness import store

    answers = json.loads((FIXTURES / "outputs.json").read_text())[3]
    printed = json.loads((FIXTURES / "official_scores.json").read_text())[3]
    path = tmp_path / "run" / "samples.jsonl"
    records, _ = store.read_jsonl(path)
    for record in records:
        subset, index, role = record["id"].rsplit("-", 2)
        record["outputs"] = [answers[subset][int(index)][role == "hallucination"]]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["run", "--from-outputs", str(tmp_path / "run")]) == 0
    task = Results.from_dict(json.loads((tmp_path / "run" / "results.json").read_text())).tasks["videohallucer"]
    assert {k: task.metrics[k] for k in HEADLINE} == pytest.approx(printed["evaluation.py"]["all"])
    for subset, qa_type in QA_TYPES.items():
        assert {k: task.groups[subset].metrics[k] for k in HEADLINE} == pytest.approx(printed["evaluation.py"][qa_type])
    assert task.metrics["yes_diff"] == pytest.approx(printed["evaluation_bias.py"]["yes difference percentage"])
