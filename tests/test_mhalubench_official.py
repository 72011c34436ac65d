"""MHaluBench from its official release (openkg/MHaluBench), all parts: the build (from a folder and from the stand-in
Hub), the Self-Check tasks on each part, parity of the `mhalubench` metric with scikit-learn's scores of UniHD's
Table 2 on adversarial detector outputs, and a tiny model run on every part."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import evaluate
import pytest
from hub_server import Repo, StandInHub
from test_build_from_hub import card_source, hallubench

from hallubench.benchmarks import get_task
from hallubench.benchmarks.mhalubench import INSTRUCTIONS, claims
from hallubench.benchmarks.mhalubench_official import T2I_INSTRUCTIONS
from hallubench.builders import build
from hallubench.builders.mini import make_release
from hallubench.cli.main import main
from hallubench.errors import BuildError
from hallubench.harness import store
from hallubench.harness.data import load_rows

FIXTURES = Path(__file__).parent / "fixtures" / "mhalubench_official"
VAL = "MHaluBench_val-v0.1.json"
PARTS = {"image_caption": "image-caption", "vqa": "vqa", "text_to_image": "text-to-image"}


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return make_release("mhalubench_official", tmp_path_factory.mktemp("mhalubench-official-release"))


def load(folder: Path, config: str, cache: Path) -> datasets.Dataset:
    return datasets.load_dataset(str(folder), config, split="test", cache_dir=str(cache))


def test_build_gives_one_config_per_part_with_images_from_the_part_folder(release, tmp_path):
    out = build("mhalubench_official", release, tmp_path / "mhalubench_official")
    items = json.loads((release / VAL).read_text())
    every = load(out, "all", tmp_path / "cache")
    assert every["response"] == [item["response"] for item in items]
    assert every["task_type"] == [item["task_type"] for item in items]
    for config, task_type in PARTS.items():
        rows = load(out, config, tmp_path / "cache")
        assert len(rows) == 2 and set(rows["task_type"]) == {task_type}
        folder = "text-to-image" if task_type == "text-to-image" else "image-to-text"
        for row in rows:
            source = (release / "data" / folder / row["image_name"]).read_bytes()
            assert (out / "data" / folder / row["image_name"]).read_bytes() == source
            assert row["image"].size == (128, 96)
    eval_yaml = (out / "eval.yaml").read_text()  # the Hub benchmark definition names every part's task
    assert all(f"mhalubench_official_{p}_selfcheck_claim_macro_f1" in eval_yaml for p in PARTS)
    assert every[4]["segments"][1]["claims"][0] == {"claim": "There is a blue square between the circles",
                                                    "claim_label": "hallucination",
                                                    "claim_category": ["object", "attribute"]}


def test_an_image_path_is_reduced_to_its_file_name_in_the_part_folder(release, tmp_path):
    items = json.loads((release / VAL).read_text())
    items[0]["image_path"] = "../../../etc/" + items[0]["image_path"].rsplit("/", 1)[1]
    items[1]["image_path"] = "/MHaluBench/data/image-to-text/absent.png"
    items[2]["task_type"] = "video-to-text"
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    (copy / VAL).write_text(json.dumps(items))
    with pytest.raises(BuildError, match=r"row 1 \(id 'mhalubench_official-0001'\): media file .*absent.png is missing"):
        build("mhalubench_official", copy, tmp_path / "out")
    from hallubench.builders import build_with_summary

    summary = build_with_summary("mhalubench_official", copy, tmp_path / "out2", skip_missing=True)
    assert summary.rows["all"] == len(items) - 2
    rows = load(tmp_path / "out2", "all", tmp_path / "cache")
    assert rows[0]["image_path"].startswith("../../../etc/") and rows[0]["image_name"] == "hbmini_000001.png"
    skipped = [json.loads(line) for line in (tmp_path / "out2" / "skipped.jsonl").read_text().splitlines()]
    assert [s["index"] for s in skipped] == [1, 2] and "video-to-text" in skipped[1]["reason"]


def test_a_folder_without_the_validation_json_is_refused_by_name(tmp_path):
    with pytest.raises(BuildError, match=r"none of MHaluBench_val-v0.1.json, MHaluBench_val-v0.2.json found"):
        build("mhalubench_official", (tmp_path / "empty").mkdir() or tmp_path / "empty", tmp_path / "out")


@pytest.mark.parametrize("items", [[], "every image missing"])
def test_a_build_keeping_no_row_is_an_error_even_with_skip_missing(release, tmp_path, items):
    bare = tmp_path / "bare"
    shutil.copytree(release, bare)
    if items == []:
        (bare / "MHaluBench_val-v0.1.json").write_text("[]")
    else:
        shutil.rmtree(bare / "data")
    with pytest.raises(BuildError, match="no row of config 'all' is left to build"):
        build("mhalubench_official", bare, tmp_path / "out", skip_missing=True)
    assert not (tmp_path / "out").exists()


def test_build_without_source_fetches_openkg_mhalubench_from_the_hub(release, tmp_path):
    hub = StandInHub({"openkg/MHaluBench": Repo.from_folder(release)})
    try:
        done = hallubench(["build", "mhalubench_official", "--out", str(tmp_path / "built")], hub, tmp_path / "home")
        assert done.returncode == 0, done.stderr[-2000:]
        commit = hub.repos["openkg/MHaluBench"].commit
        assert card_source(tmp_path / "built") == {"repo_id": "openkg/MHaluBench", "commit": commit}
    finally:
        hub.close()
    rows = load(tmp_path / "built", "text_to_image", tmp_path / "cache")
    assert rows["response"] == [i["response"] for i in json.loads((release / VAL).read_text())[4:]]


def test_each_part_gets_its_prompt_and_the_paper_parts_as_groups(mini_datasets):
    for name, config in [("image_caption_selfcheck", "image_caption"), ("vqa_selfcheck_2shot", "vqa"),
                         ("text_to_image_selfcheck", "text_to_image"), ("selfcheck", "all")]:
        task = get_task(f"mhalubench_official_{name}")
        rows, _ = load_rows(mini_datasets / "mhalubench_official", task)
        assert task.config == config and rows
        for row in rows:
            listed = "\n".join(f"claim{k}: {c['claim']}" for k, c in enumerate(claims(row), 1))
            prompt = task.prompt(row)
            if row["task_type"] == "text-to-image":
                assert prompt == f"{T2I_INSTRUCTIONS}\n\nPrompt: {row['response']}\n\nClaims:\n{listed}\n\nAnswer:"
            else:
                assert prompt.startswith(INSTRUCTIONS) and prompt.endswith(f"Response: {row['response']}\n\nClaims:\n{listed}\n\nAnswer:")
            assert ("Example 2\n" in prompt) == name.endswith("2shot")


def test_metric_reproduces_sklearn_scores_of_adversarial_outputs_exactly():
    """tests/fixtures/mhalubench_official: outputs.jsonl made by generate.py (seed 20260127) for the mini release,
    official_scores.json printed by score_sklearn.py (scikit-learn 1.9.1, the paper's formula; EasyDetect @ ad519a2
    ships no scorer) on them."""
    rows = [json.loads(line) for line in (FIXTURES / "outputs.jsonl").read_text().splitlines()]
    expected = json.loads((FIXTURES / "official_scores.json").read_text())
    metric = evaluate.load(str(Path(__file__).parents[1] / "metrics" / "mhalubench" / "mhalubench.py"))
    result = metric.compute(predictions=[r["output"] for r in rows], references=[r["references"] for r in rows],
                            segment_ids=[r["segment_ids"] for r in rows],
                            groups={"task_type": [r["task_type"] for r in rows]})
    assert len(rows) == 300 and len({r["kind"] for r in rows}) == 11 and expected["all"]["claim_unparsed"] > 0
    for scope, scores in expected.items():
        got = result if scope == "all" else result["by_group"]["task_type"][scope]
        assert {k: got[k] for k in scores} == pytest.approx(scores, abs=1e-12), scope


def test_a_tiny_model_runs_selfcheck_on_every_part_and_writes_results(mini_datasets, tiny_checkpoint, tmp_path):
    tasks = [f"mhalubench_official_{p}_selfcheck" for p in PARTS] + ["mhalubench_official_selfcheck"]
    argv = ["run", "--model", "hf", "--model-args", f"pretrained={tiny_checkpoint('qwen2_vl')},dtype=float32",
            "--tasks", ",".join(tasks), "--data-dir", str(mini_datasets), "--output-dir", str(tmp_path / "run"),
            "--gen-kwargs", "max_new_tokens=8"]
    assert main(argv) == 0
    results = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"]
    records, torn = store.read_jsonl(tmp_path / "run" / "samples.jsonl")
    assert not torn and all(r["error"] is None and r["media"]["image"] for r in records)
    for name in tasks:
        result = results[name]
        assert result["n_selected"] == (6 if name == "mhalubench_official_selfcheck" else 2)
        assert result["n_scored"] + result["n_unparsed"] == result["n_selected"]
        assert {"claim_macro_f1", "segment_macro_f1", "claim_unparsed", "responses_unparsed"} <= set(result["metrics"])
    assert sorted(results["mhalubench_official_selfcheck"]["groups"]) == sorted(PARTS.values())


def test_haldet_answers_in_its_training_format_are_read_per_claim_and_unreadable_ones_counted(mini_datasets, tmp_path,
                                                                                            monkeypatch):
    from test_mhalubench_detection import run_echo

    task = get_task("mhalubench_official_haldet")
    rows, _ = load_rows(mini_datasets / "mhalubench_official", task)
    # the format of MHaluBench_train.json's ref_reason, which HalDet-LLaVA was trained to write
    answers = {task.prompt(row): json.dumps([{f"claim{k}": c["claim_label"], "reason": "Therefore, there's no hallucination."}
                                             for k, c in enumerate(claims(row), 1)]) for row in rows[1:]}
    answers[task.prompt(rows[0])] = "{'claim1': 'unclear'}"
    result = run_echo(mini_datasets, tmp_path / "run", ["mhalubench_official_haldet"], answers, monkeypatch)
    result = result["mhalubench_official_haldet"]
    assert (result["n_selected"], result["n_scored"], result["n_unparsed"]) == (6, 5, 1)
    metrics = result["metrics"]
    assert metrics["claim_unparsed"] == len(claims(rows[0])) and metrics["claim_hallucination_precision"] == 1.0
    assert metrics["claim_accuracy"] == pytest.approx(1 - len(claims(rows[0])) / sum(len(claims(r)) for r in rows))
    assert result["groups"]["text-to-image"]["metrics"]["claim_macro_f1"] == 1.0
    prompt = task.prompt(rows[4])
    assert "\nHere is the claim list: claim1: There are two circles \nclaim2: The circles are red \nclaim3: " in prompt
    assert prompt.endswith("Here is the external knowledge: none information") and task.generation.temperature == 0.8


def test_a_tiny_llava_runs_haldet_through_the_hf_adapter(mini_datasets, tiny_checkpoint, tmp_path):
    argv = ["run", "--model", "hf", "--model-args", f"pretrained={tiny_checkpoint('llava')},dtype=float32",
            "--tasks", "mhalubench_official_haldet", "--data-dir", str(mini_datasets),
            "--output-dir", str(tmp_path / "run"), "--gen-kwargs", "max_new_tokens=8"]
    assert main(argv) == 0
    result = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"]["mhalubench_official_haldet"]
    records, _ = store.read_jsonl(tmp_path / "run" / "samples.jsonl")
    assert len(records) == 6 and all(r["error"] is None for r in records)
    unread = [v is None for r in records for v in (r["parsed"] or [None] * len(r["reference"]))]
    assert (result["metrics"]["claim_n"], result["metrics"]["claim_unparsed"]) == (len(unread), sum(unread))
    assert result["n_unparsed"] == sum(r["parsed"] is None for r in records)
