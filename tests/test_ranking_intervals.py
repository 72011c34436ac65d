"""Bootstrap intervals (documents resampled, the same draw for every system) and adjacent sign tests."""
import math

import numpy as np
import pytest
from scipy.stats import binomtest

from hallubench.ranking.intervals import board_uncertainty, sign_test, system_intervals


def test_sign_test_counts_lower_scores_as_wins_drops_ties_and_matches_scipy():
    better = {"d1": 0.1, "d2": 0.2, "d3": 0.5, "d4": 0.0, "d5": 0.3, "only_a": 0.9}
    worse = {"d1": 0.4, "d2": 0.6, "d3": 0.5, "d4": 0.1, "d5": 0.2, "only_b": 0.0}
    test = sign_test(better, worse)
    assert (test["wins"], test["losses"], test["ties"]) == (3, 1, 1)
    assert test["p"] == pytest.approx(binomtest(3, 4).pvalue)
    assert sign_test({"d": 0.2}, {"d": 0.2})["p"] == 1.0


def test_one_sentence_documents_give_about_mean_plus_minus_1_96_standard_errors():
    rng = np.random.default_rng(4)
    values = rng.random(400)
    low, high = system_intervals({"a": {f"d{i}": [v] for i, v in enumerate(values)}})["a"]
    half = 1.96 * values.std(ddof=1) / math.sqrt(len(values))
    assert low < values.mean() < high
    assert (high - low) / 2 == pytest.approx(half, rel=0.15)


def test_every_system_gets_the_same_document_draws_and_pooled_sentences():
    rng = np.random.default_rng(5)
    a = {f"d{i}": list(rng.random(int(rng.integers(1, 5)))) for i in range(60)}
    shifted = {doc: [x + 0.25 for x in scores] for doc, scores in a.items()}
    constant = {doc: [0.5] * len(scores) for doc, scores in a.items()}
    intervals = system_intervals({"a": a, "shifted": shifted, "constant": constant})
    assert np.subtract(intervals["shifted"], intervals["a"]) == pytest.approx([0.25, 0.25])
    assert intervals["constant"] == pytest.approx((0.5, 0.5))


def test_fewer_documents_give_a_wider_interval():
    rng = np.random.default_rng(6)
    docs = {f"d{i}": [float(x)] for i, x in enumerate(rng.random(400))}
    few = dict(list(docs.items())[:25])
    wide, narrow = system_intervals({"a": few})["a"], system_intervals({"a": docs})["a"]
    assert wide[1] - wide[0] > 2 * (narrow[1] - narrow[0])


def test_board_uncertainty_tests_each_system_against_the_next_in_rank_order():
    results = {"ranking": ["b", "a", "c"],
               "document_scores": {"a": {"q1": 0.3, "q2": 0.4}, "b": {"q1": 0.1, "q2": 0.2}, "c": {"q1": 0.9, "q2": 0.1}},
               "sentence_scores": {"a": {"q1": [0.3], "q2": [0.4]}, "b": {"q1": [0.1], "q2": [0.2]},
                                   "c": {"q1": [0.9], "q2": [0.1]}}}
    sure = board_uncertainty(results)
    assert [(t["better"], t["worse"]) for t in sure["adjacent_sign_tests"]] == [("b", "a"), ("a", "c")]
    assert (sure["adjacent_sign_tests"][1]["wins"], sure["adjacent_sign_tests"][1]["losses"]) == (1, 1)
    assert set(sure["intervals"]) == {"a", "b", "c"} and "sign test" in sure["method"]
