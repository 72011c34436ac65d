"""SAC3 Table 3 (Zhang et al., 2023) from the authors' released judge strings, through the sac3 evaluate module."""
import ast
import json
import os

import pytest
from sklearn.metrics import roc_auc_score

from metric_doctests import METRICS

os.environ.setdefault("HF_HUB_OFFLINE", "1")

FILES = {
    "prime": "prime-500-SC.json",
    "senator": "senator-500-SC.json",
    "hotpotqa": "hotpotQA_250_eval_labeled-SC.json",
    "nq_open": "nq_open_250_eval_labeled-SC.json",
}


def as_list(value):
    """`self_SC`/`perb_SC` hold a list, or the Python repr of one in some releases."""
    return value if isinstance(value, list) else ast.literal_eval(value)


def load_set(shared_data, name):
    items = json.loads((shared_data / "sac3" / FILES[name]).read_text())
    # prime and senator carry no label: every target answer there is hallucinated; elsewhere "True" = correct answer
    labels = [item.get("label", "False") == "False" for item in items]
    return {
        "self_judgments": [as_list(item["self_SC"]) for item in items],
        "perturbed_judgments": [as_list(item["perb_SC"]) for item in items],
        "labels": labels,
    }


@pytest.fixture(scope="module")
def sac3():
    import evaluate

    return evaluate.load(str(METRICS / "sac3"))


@pytest.mark.parametrize("name, sc2, sac3_q", [("prime", 48.2, 93.2), ("senator", 29.6, 97.0)])
def test_table3_accuracy(shared_data, sac3, name, sc2, sac3_q):
    results = sac3.compute(**load_set(shared_data, name))
    assert round(results["accuracy"]["sc2"] * 100, 1) == sc2
    assert round(results["accuracy"]["sac3_q"] * 100, 1) == sac3_q
    assert results["auroc"]["sc2"] is None  # one class only


def test_prime_has_one_unparseable_judge_string(shared_data, sac3):
    results = sac3.compute(**load_set(shared_data, "prime"))
    assert results["num_unparseable"] == 1
    assert results["unparseable"][0]["item"] == 298
    assert results["unparseable"][0]["text"].startswith("Guess: 0.5")


@pytest.mark.parametrize("name", ["hotpotqa", "nq_open"])
def test_labeled_sets_auroc_agrees_with_sklearn(shared_data, sac3, name):
    data = load_set(shared_data, name)
    results = sac3.compute(**data)
    for score in ("sc2", "sac3_q"):
        expected = roc_auc_score(data["labels"], results["scores"][score])
        assert results["auroc"][score] == pytest.approx(expected)
        assert results["auroc"][score] > 0.5  # inconsistency must point at the hallucinated answers
        assert results["confidence_auroc"][score] == pytest.approx(roc_auc_score(data["labels"],
                                                                                 results["confidence"][score]))


@pytest.mark.parametrize("name, sc2, sac3_q", [("prime", 51.0, 96.4), ("senator", 30.6, 97.4)])
def test_table3_confidence_column_from_verbalized_probabilities(shared_data, sac3, name, sc2, sac3_q):
    results = sac3.compute(**load_set(shared_data, name))
    assert round(results["confidence_accuracy"]["sc2"] * 100, 1) == sc2
    assert round(results["confidence_accuracy"]["sac3_q"] * 100, 1) == sac3_q


@pytest.mark.parametrize("name, sc2, sac3_q", [("prime", 48.2, 93.2), ("senator", 29.6, 97.0)])
def test_table3_through_the_sac3_tasks_scoring(shared_data, name, sc2, sac3_q):
    """Records whose judge steps hold the released judge strings score to Table 3 through the task's own parser,
    score_inputs and summary, as a run of `sac3_<name>` would."""
    from hallubench.benchmarks import get_task
    from hallubench.harness.scoring import parse_records, score_task

    task = get_task(f"sac3_{name}")
    data = load_set(shared_data, name)
    records = []
    for i, (own, perturbed) in enumerate(zip(data["self_judgments"], data["perturbed_judgments"])):
        steps = {"judge_self": {"outputs": [[text] for text in own]},
                 "judge_perturbed": {"outputs": [[text] for text in perturbed]},
                 "equivalence": {"outputs": []}, "perturbed_answers": {"prompts": [{"text": "q"}] * len(perturbed)}}
        records.append({"key": str(i), "task": task.name, "id": f"{name}-{i:04d}", "error": None, "outputs": ["a"],
                        "reference": True, "steps": steps, "generation": {}})
    result = score_task(task, parse_records(task, records), len(records))
    from hallubench.metrics.sac3.sac3 import parse_judgment

    # an item with a judge string the authors' rule reads as no guess (counted inconsistent) is unreadable, not scored
    unread = sum(any(parse_judgment(text)[0] is None for text in [*own, *perturbed])
                 for own, perturbed in zip(data["self_judgments"], data["perturbed_judgments"]))
    assert (result.n_scored, result.n_unreadable) == (500 - unread, unread) and len(records) == 500
    assert round(result.metrics["sc2_accuracy"] * 100, 1) == sc2
    assert round(result.metrics["sac3_q_accuracy"] * 100, 1) == sac3_q
