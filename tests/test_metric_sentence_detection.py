"""The sentence_detection evaluate module: SelfCheckGPT's AUC-PR conventions on small hand-checked cases."""
import os

import numpy as np
import pytest
from sklearn.metrics import auc, precision_recall_curve

from metric_doctests import METRICS

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def detection():
    import evaluate

    return evaluate.load(str(METRICS / "sentence_detection"))


def test_tasks_use_selfcheckgpts_thresholds_and_negated_scores_for_factual(detection):
    # passage 2 is all major: SelfCheckGPT's NonFact* leaves it out, CrossCheckGPT's Table 10 keeps it
    predictions = [[0.9, 0.2, 0.7], [0.4, 0.6], [0.5, 0.3, 0.8]]
    references = [["major_inaccurate", "accurate", "minor_inaccurate"], ["major_inaccurate"] * 2,
                  [0, 0.5, 1]]
    kept = detection.compute(predictions=predictions, references=references, drop_all_major=False)
    dropped = detection.compute(predictions=predictions, references=references)
    assert (dropped["num_passages_nonfact_star"], kept["num_passages_nonfact_star"]) == (2, 3)
    assert dropped["positives"] == {"nonfact": 6, "nonfact_star": 2, "factual": 2}
    assert kept["positives"]["nonfact_star"] == 4
    # the accurate sentences (0.2, 0.5) rank 1st and 4th by the negated scores: PR points (recall, precision)
    # (0, 1), (.5, 1), (.5, .5), (.5, 1/3), (1, .5); trapezoids: .5 * 1 + .5 * (1/3 + .5) / 2
    assert dropped["factual_auc_pr"] == pytest.approx(0.5 + 0.5 * (1 / 3 + 0.5) / 2)
    # the two majors outside the dropped passage score highest: a perfect NonFact* detector there
    assert dropped["nonfact_star_auc_pr"] == pytest.approx(1.0)
    # kept: every major (0.9, 0.4, 0.6, 0.8) against the rest (0.2, 0.7, 0.5, 0.3)
    precision, recall, _ = precision_recall_curve([1, 1, 1, 1, 0, 0, 0, 0], [0.9, 0.4, 0.6, 0.8, 0.2, 0.7, 0.5, 0.3])
    assert kept["nonfact_star_auc_pr"] == pytest.approx(auc(recall, precision))
    label_means, score_means = [0.5, 1.0, 0.5], [0.6, 0.5, 0.5333333]
    assert dropped["passage_pearson"] == pytest.approx(np.corrcoef(label_means, score_means)[0, 1], abs=1e-6)


def test_a_task_without_positives_scores_none(detection):
    results = detection.compute(predictions=[[0.1, 0.2]], references=[["accurate", "accurate"]])
    assert results["nonfact_auc_pr"] is None and results["nonfact_star_auc_pr"] is None
    assert results["factual_auc_pr"] == pytest.approx(1.0)
    assert results["passage_pearson"] is None  # one passage


@pytest.mark.parametrize("predictions, references, message", [
    ([[0.1, 0.2]], [["accurate"]], r"passage 0 has 2 scores but 1 labels"),
    ([[0.1], [float("nan")]], [["accurate"], ["accurate"]], r"`predictions\[1\]\[0\]` is nan"),
    ([[0.1]], [["wrong"]], r"`references\[0\]\[0\]` is 'wrong'"),
    ([[0.1]], [[0.7]], r"`references\[0\]\[0\]` is 0.7"),
    ([[]], [[]], r"passage 0 has no sentences"),
])
def test_bad_input_names_the_passage_and_sentence(detection, predictions, references, message):
    with pytest.raises(ValueError, match=message):
        detection.compute(predictions=predictions, references=references)
