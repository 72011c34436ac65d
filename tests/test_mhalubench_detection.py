"""MHaluBench detection (Self-Check 0-shot and 2-shot): the prompts, the demonstrations taken verbatim from the
release and left out of scoring, and `hallubench run` end to end. A stand-in detector that answers with the
annotated labels scores 1.0 at claim and segment level on the whole released file (and the mini one);
unreadable verdicts are counted, per response and per claim; an untrained tiny model writes results whose
unparsed counts agree with its stored readings."""
from __future__ import annotations

import json
import shutil

import pytest
from builders_support import image_bytes, link

from hallubench.benchmarks import get_task
from hallubench.benchmarks.mhalubench import DEMONSTRATIONS, HIGHER_IS_BETTER, INSTRUCTIONS, claims
from hallubench.builders import build
from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.harness.data import load_rows
from hallubench.models.protocol import TextPart

TASKS = ("mhalubench_selfcheck", "mhalubench_selfcheck_2shot")
RELEASE = "image_to_text_annotated.json"


@pytest.fixture(scope="module")
def real_release(shared_data, tmp_path_factory):
    """The released annotations with a stand-in image per item (the shared folder has none), built."""
    root = tmp_path_factory.mktemp("mhalubench-real")
    release = root / "release"
    release.mkdir()
    shutil.copy(shared_data / "mhalubench" / RELEASE, release)
    png = root / "tiny.png"
    png.write_bytes(image_bytes((120, 90, 30)))
    for item in json.loads((release / RELEASE).read_text()):
        if not (release / "images" / item["image_name"]).exists():
            link(png, release / "images" / item["image_name"])
    return build("mhalubench", release, root / "datasets" / "mhalubench").parent


def row_of(item: dict) -> dict:
    """A released item as a dataset row (the builder's columns)."""
    return {"id": "x", "image_name": item["image_name"], "response": item["repsonse"], "task_type": item["task_type"],
            "segments": item["annotation"]}


def verdict_answer(row: dict, style: str, drop: set[int] = frozenset()) -> str:
    """The row's annotated labels as a detector would write them, claims numbered from 1 (those in `drop` left out)."""
    labels = [(k, c["claim_label"]) for k, c in enumerate(claims(row), 1) if k not in drop]
    if style == "json":
        return json.dumps([{f"claim{k}": label, "reason": "Therefore, there's no hallucination."} for k, label in labels])
    return "Let me check each claim.\n" + "\n".join(f"**Claim {k}:** {label.title()} - as seen." for k, label in labels)


class EchoDetector:
    """Stand-in model: looks each prompt up in `answers` (prompt text -> answer); 'I cannot judge.' otherwise."""

    name, fingerprint, accepts = "echo-detector", "echo-detector-v1", frozenset({"image"})
    answers: dict[str, str] = {}

    def __init__(self, model: str):
        self.seen = []

    def generate(self, conversations, settings, seeds=None):
        texts = [" ".join(p.text for m in c for p in m.content if isinstance(p, TextPart)) for c in conversations]
        return [[self.answers.get(text, "I cannot judge.")] * settings.n for text in texts]


def run_echo(data_dir, out, tasks, answers, monkeypatch, *extra):
    from hallubench import models

    monkeypatch.setitem(models.MODELS, "echo_detector", EchoDetector)
    monkeypatch.setattr(EchoDetector, "answers", answers)
    argv = ["run", "--model", "echo_detector", "--model-args", "pretrained=echo", "--data-dir", str(data_dir),
            "--output-dir", str(out), "--tasks", ",".join(tasks), *extra]
    assert main(argv) == 0
    return json.loads((out / "results.json").read_text())["tasks"]


def all_rows(data_dir, task_name):
    task = get_task(task_name)
    rows, _ = load_rows(data_dir / task.benchmark, task)
    return task, rows


def test_prompt_lists_the_response_and_its_claims_in_order_after_the_instructions(shared_data):
    item = json.loads((shared_data / "mhalubench" / RELEASE).read_text())[0]
    row = row_of(item)
    listed = "\n".join(f"claim{k}: {c['claim']}" for k, c in enumerate(claims(row), 1))
    assert get_task("mhalubench_selfcheck").prompt(row) == \
        f"{INSTRUCTIONS}\n\nResponse: {item['repsonse']}\n\nClaims:\n{listed}\n\nAnswer:"
    assert listed.count("\nclaim") == 5 and listed.endswith('claim6: The person is using a silver knife')
    two_shot = get_task("mhalubench_selfcheck_2shot").prompt(row)
    assert two_shot.startswith(INSTRUCTIONS) and two_shot.endswith(f"Response: {item['repsonse']}\n\nClaims:\n{listed}\n\nAnswer:")
    for k, demo in enumerate(DEMONSTRATIONS, 1):  # each demonstration with its answer, in the format asked for
        answer = two_shot.split(f"Example {k}\n")[1].split("\n\n", 3)[2].removeprefix("Answer: ")
        assert [next(iter(v.values())) for v in json.loads(answer)] == [label for _, label, _ in demo.verdicts]
        assert f"Response: {demo.response}\n" in two_shot
    assert "images are not shown here" in two_shot


def test_demonstrations_are_release_items_verbatim_and_no_task_evaluates_them(shared_data):
    items = json.loads((shared_data / "mhalubench" / RELEASE).read_text())
    for index, demo in zip((25, 49), DEMONSTRATIONS):
        item = items[index]
        assert (item["image_name"], item["repsonse"]) == (demo.image_name, demo.response)
        assert [(c["claim"], c["claim_label"]) for c in claims(row_of(item))] == [(c, label) for c, label, _ in demo.verdicts]
    for name in TASKS:
        excluded = [i for i, item in enumerate(items) if get_task(name).exclude(row_of(item))]
        assert excluded == [25, 49]
    # between them the demonstrations cover every hallucination category of the benchmark
    categories = {cat for i in (25, 49) for c in claims(row_of(items[i])) for cat in c["claim_category"]}
    assert categories == {"object", "attribute", "scene-text", "fact"}


def test_labels_as_answers_score_one_on_every_released_item_at_both_levels(real_release, tmp_path, monkeypatch):
    answers = {}
    for name in TASKS:
        task, rows = all_rows(real_release, name)
        answers |= {task.prompt(row): verdict_answer(row, "json" if i % 2 else "lines") for i, row in enumerate(rows)}
    results = run_echo(real_release, tmp_path / "run", TASKS, answers, monkeypatch)
    for name in TASKS:
        result = results[name]
        # 198 of the 200 items: the two demonstrations are left out of both tasks
        assert (result["n_total"], result["n_selected"], result["n_scored"], result["n_unparsed"]) == (198, 198, 198, 0)
        metrics = result["metrics"]
        assert {k: metrics[k] for k in HIGHER_IS_BETTER} == {k: 1.0 for k in HIGHER_IS_BETTER}
        assert (metrics["claim_n"], metrics["segment_n"]) == (1142 - 9, 661 - 6)
        assert metrics["claim_unparsed"] == metrics["segment_unparsed"] == metrics["responses_partial"] == 0
        assert list(result["groups"]) == ["image-caption"] and result["groups"]["image-caption"]["metrics"]["claim_macro_f1"] == 1.0
        assert result["higher_is_better"] == HIGHER_IS_BETTER and result["metric"] == "mhalubench"
        assert all(metrics[f"{k}_stderr"] == 0.0 for k in HIGHER_IS_BETTER)  # every resample scores 1.0 as well
    records, _ = store.read_jsonl(tmp_path / "run" / "samples.jsonl")
    assert not {"mhalubench-0025", "mhalubench-0049"} & {r["id"] for r in records}
    assert all(r["parsed"] == r["reference"] for r in records)


def test_a_limit_counts_only_the_rows_the_task_evaluates(real_release, tmp_path, monkeypatch):
    results = run_echo(real_release, tmp_path / "run", ["mhalubench_selfcheck_2shot"], {}, monkeypatch, "--limit", "30")
    assert (results["mhalubench_selfcheck_2shot"]["n_selected"], results["mhalubench_selfcheck_2shot"]["n_total"]) == (30, 198)
    records, _ = store.read_jsonl(tmp_path / "run" / "samples.jsonl")
    assert sorted(r["id"] for r in records) == [f"mhalubench-{i:04d}" for i in range(31) if i != 25]


def test_unreadable_verdicts_are_counted_per_response_and_per_claim_never_guessed(mini_datasets, tmp_path, monkeypatch):
    task, rows = all_rows(mini_datasets, "mhalubench_selfcheck")
    assert len(rows) == 6 and {len(claims(r)) for r in rows[:3]} == {4, 3}
    n = [len(claims(row)) for row in rows]
    answers = {task.prompt(rows[0]): "The image looks fine to me, no hallucination.",  # nothing readable
               task.prompt(rows[1]): verdict_answer(rows[1], "json", drop={2}),          # claim 2 missing
               task.prompt(rows[2]): verdict_answer(rows[2], "lines").replace("Claim 1:** Non-Hallucination",
                                                                              "Claim 1:** Unsure")}
    answers |= {task.prompt(row): verdict_answer(row, "json") for row in rows[3:]}
    result = run_echo(mini_datasets, tmp_path / "run", ["mhalubench_selfcheck"], answers, monkeypatch)["mhalubench_selfcheck"]
    assert (result["n_selected"], result["n_unparsed"], result["n_scored"]) == (6, 1, 5)
    metrics = result["metrics"]
    assert (metrics["responses_unparsed"], metrics["responses_partial"]) == (1, 2)
    assert metrics["claim_unparsed"] == n[0] + 1 + 1 and metrics["claim_n"] == sum(n)
    # unread claims are wrong, read ones right: accuracy is the share read
    assert metrics["claim_accuracy"] == pytest.approx(1 - metrics["claim_unparsed"] / sum(n))
    assert metrics["claim_hallucination_precision"] == metrics["claim_non_hallucination_precision"] == 1.0
    records = {r["id"]: r for r in store.read_jsonl(tmp_path / "run" / "samples.jsonl")[0]}
    assert records[rows[0]["id"]]["parsed"] is None
    assert records[rows[1]["id"]]["parsed"][1] is None and records[rows[2]["id"]]["parsed"][0] is None
    # both task types of the mini release get their own breakdown
    assert sorted(result["groups"]) == ["image-caption", "vqa"]
    assert result["groups"]["vqa"]["metrics"]["claim_accuracy"] == 1.0 and result["groups"]["image-caption"]["n_unparsed"] == 1
    # by claim type (UniHD's object, attribute, scene text, fact): a claim with two types counts in both
    by_type = {}
    for row in rows:
        for claim in claims(row):
            for category in claim["claim_category"]:
                by_type[category.replace("-", "_")] = by_type.get(category.replace("-", "_"), 0) + 1
    assert {k: metrics[f"{k}_claim_n"] for k in by_type} == by_type and "by_claim_category" not in metrics
    assert all(0.0 <= metrics[f"{k}_claim_macro_f1"] <= 1.0 and f"{k}_claim_macro_f1_stderr" in metrics for k in by_type)
    assert "attribute_claim_accuracy" in result["groups"]["vqa"]["metrics"]


def test_a_tiny_model_runs_selfcheck_on_the_mini_data_and_writes_results(mini_datasets, tiny_checkpoint, tmp_path):
    out = tmp_path / "run"
    model = tiny_checkpoint("qwen2_vl")
    argv = ["run", "--model", "hf", "--model-args", f"pretrained={model},dtype=float32", "--tasks", "mhalubench_selfcheck",
            "--data-dir", str(mini_datasets), "--output-dir", str(out), "--limit", "3", "--gen-kwargs", "max_new_tokens=8"]
    assert main(argv) == 0
    result = json.loads((out / "results.json").read_text())["tasks"]["mhalubench_selfcheck"]
    records, torn = store.read_jsonl(out / "samples.jsonl")
    assert not torn and len(records) == 3 and all(r["error"] is None and r["media"]["image"] for r in records)
    assert result["n_selected"] == 3 and result["n_scored"] + result["n_unparsed"] == 3
    unread = [v is None for r in records for v in (r["parsed"] or [None] * len(r["reference"]))]
    metrics = result["metrics"]
    assert (metrics["claim_n"], metrics["claim_unparsed"]) == (len(unread), sum(unread))
    assert result["n_unparsed"] == sum(r["parsed"] is None for r in records) == metrics["responses_unparsed"]
    assert set(HIGHER_IS_BETTER) <= set(metrics) and (out / "results.png").exists()


def test_built_mhalubench_defines_the_detection_scores_for_the_hub(mini_datasets):
    import yaml

    spec = yaml.safe_load((mini_datasets / "mhalubench" / "eval.yaml").read_text())
    assert [t["id"] for t in spec["tasks"]] == [f"{name}_{score}" for name in TASKS for score in HIGHER_IS_BETTER]
    assert "--tasks mhalubench_selfcheck,mhalubench_selfcheck_2shot" in spec["description"]
