"""`hallubench run` of a tiny random model on the built mini AMBER ends with the amber metric's scores, and
re-scoring adversarial outputs with --from-outputs gives what the metric gives them directly."""
import json
import os

import evaluate
import pytest
import torch

from hallubench.benchmarks import get_task
from hallubench.builders import build
from hallubench.builders.mini import make_release
from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.harness.plan import task_arguments
from hallubench.harness.results_schema import Results

from metric_doctests import METRICS

os.environ["HF_HUB_OFFLINE"] = "1"
torch.set_num_threads(1)
ADVERSARIAL = {
    "generative": ["Two men fly a kite in the sky over the GRASS, with dogs. A car.", "", "The sun, the sun and a "
                   "mountain; clouds... and trees!", "a moon and stars"],
    "question": ["Yes", "no.", "**No**", "Maybe", "", "Yes/No", "I know", "YES, it is."],
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, tiny_checkpoint):
    root = tmp_path_factory.mktemp("amber")
    data = root / "data"
    build("amber", make_release("amber", root / "release"), data / "amber", mini=True)
    out = root / "run"
    assert main(["run", "--model", "hf", "--model-args", f"pretrained={tiny_checkpoint('qwen2_vl')},dtype=float32",
                 "--data-dir", str(data), "--output-dir", str(out), "--tasks", "amber,amber_existence",
                 "--gen-kwargs", "max_new_tokens=4"]) == 0
    return out


def results(out):
    return Results.from_dict(json.loads((out / "results.json").read_text())).tasks


def test_the_run_ends_with_every_amber_score(run_dir):
    tasks = results(run_dir)
    metrics = tasks["amber"].metrics
    for name in ("chair", "cover", "hal", "cog", "accuracy", "precision", "recall", "f1", "amber_score",
                 "existence_f1", "attribute_f1", "state_f1", "number_f1", "action_f1", "relation_f1"):
        assert 0.0 <= metrics[name] <= 1.0, name
    assert tasks["amber"].n_scored + tasks["amber"].n_unparsed == 49
    assert "chair" not in tasks["amber_existence"].metrics and "existence_f1" in tasks["amber_existence"].metrics
    assert tasks["amber"].higher_is_better["chair"] is False and tasks["amber"].higher_is_better["f1"] is True


def test_rescored_adversarial_outputs_are_the_metrics_numbers(run_dir):
    path = run_dir / "samples.jsonl"
    records, _ = store.read_jsonl(path)
    records = sorted(records, key=lambda r: r["id"])
    count = {"generative": 0, "question": 0}
    for record in records:
        kind = "generative" if record["metric_inputs"]["types"] == "generative" else "question"
        record["outputs"] = [ADVERSARIAL[kind][count[kind] % len(ADVERSARIAL[kind])]]
        count[kind] += 1
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["run", "--from-outputs", str(run_dir)]) == 0
    task = results(run_dir)["amber"]
    mine = [r for r in records if r["task"] == "amber"]
    direct = evaluate.load(str(METRICS / "amber")).compute(
        predictions=[r["outputs"][0] for r in mine], references=[r["reference"] for r in mine],
        types=[r["metric_inputs"]["types"] for r in mine])
    for name in ("chair", "cover", "hal", "cog", "f1", "amber_score", "relation_accuracy"):
        assert task.metrics[name] == direct[name], name
    # unreadable answers and the empty description are counted, never mapped to an answer
    assert task.n_unparsed == direct["unparsed"] + sum(r["outputs"][0] == "" and
                                                       r["metric_inputs"]["types"] == "generative" for r in mine) > 0


def test_task_args_choose_the_scripts_yes_no_match_and_the_authors_nlp():
    _, metric = task_arguments(get_task("amber_relation"), {"mode": "official", "nlp": "authors"})
    assert metric == {"mode": "official", "nlp": "authors"}
