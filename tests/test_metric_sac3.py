"""The sac3 evaluate module against a hand computation on generated judge strings, plus its examples and errors."""
import os

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from hallubench.metrics.sac3 import sac3 as sac3_module
from metric_doctests import METRICS

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def sac3():
    import evaluate

    return evaluate.load(str(METRICS / "sac3"))


def judge_strings(rng, n_items, n_samples, p_yes):
    """Random judge replies and the C values (0 for Yes) they stand for."""
    yes = rng.random((n_items, n_samples)) < p_yes
    probabilities = rng.choice([0.7, 0.9, 1.0], size=yes.shape)
    strings = [
        [f"Guess: {'Yes' if y else 'No'}\nProbability: {p}" for y, p in zip(row, prow)]
        for row, prow in zip(yes, probabilities)
    ]
    return strings, (~yes).astype(float), probabilities


def test_parse_judgment_follows_the_upstream_rule():
    assert sac3_module.parse_judgment("Guess: Yes\nProbability: 0.9") == (0, 0.9)
    assert sac3_module.parse_judgment("Guess: No\nProbability: 1.0") == (1, 1.0)
    assert sac3_module.parse_judgment("Guess:   Yes  \n") == (0, None)
    assert sac3_module.parse_judgment("Guess: Yes.\nProbability: .5") == (None, 0.5)
    assert sac3_module.parse_judgment("Guess: 0.5 \n\nProbability: 0.5") == (None, 0.5)
    assert sac3_module.parse_judgment("I cannot tell") == (None, None)


def test_scores_accuracy_and_auroc_match_a_hand_computation(sac3):
    rng = np.random.default_rng(0)
    n = 60
    names = ["self_judgments", "perturbed_judgments", "verifier_judgments", "perturbed_verifier_judgments"]
    inputs, c_values, probs = {}, {}, {}
    for name, p_yes in zip(names, [0.6, 0.5, 0.4, 0.7]):
        inputs[name], c_values[name], probs[name] = judge_strings(rng, n, 10, p_yes)
    labels = rng.random(n) < 0.5
    results = sac3.compute(**inputs, labels=labels.tolist(), lambda_weight=0.5)

    expected = {
        "sc2": c_values["self_judgments"].mean(axis=1),
        "sac3_q": c_values["perturbed_judgments"].mean(axis=1),
        "sac3_m": c_values["verifier_judgments"].mean(axis=1),
        "sac3_qm": c_values["perturbed_verifier_judgments"].mean(axis=1),
    }
    expected["sac3_all"] = expected["sac3_q"] + 0.5 * (expected["sac3_m"] + expected["sac3_qm"])
    assert set(results["scores"]) == set(expected)
    for name, scores in expected.items():
        np.testing.assert_allclose(results["scores"][name], scores)
        assert results["predictions"][name] == (scores > 0.5).tolist()
        assert results["accuracy"][name] == pytest.approx(np.mean((scores > 0.5) == labels))
        assert results["auroc"][name] == pytest.approx(roc_auc_score(labels, scores))
    np.testing.assert_allclose(results["probabilities"]["self_judgments"], probs["self_judgments"])
    assert results["num_unparseable"] == 0


def test_threshold_is_strict_and_adjustable(sac3):
    judgments = [["Guess: Yes", "Guess: No"], ["Guess: No", "Guess: No"]]
    results = sac3.compute(self_judgments=judgments, perturbed_judgments=judgments)
    assert results["predictions"]["sc2"] == [False, True]
    results = sac3.compute(self_judgments=judgments, perturbed_judgments=judgments, threshold=0.4)
    assert results["predictions"]["sc2"] == [True, True]


def test_sac3_all_needs_both_verifier_arguments(sac3):
    judgments = [["Guess: No"]]
    results = sac3.compute(self_judgments=judgments, perturbed_judgments=judgments, verifier_judgments=judgments)
    assert results["scores"] == {"sc2": [1.0], "sac3_q": [1.0], "sac3_m": [1.0]}


def test_unparseable_strings_are_counted_and_follow_the_policy(sac3):
    self_judgments = [["Guess: Yes", "Guess: Yes.", "no colon here", "Guess: No"]]
    kwargs = dict(self_judgments=self_judgments, perturbed_judgments=[["Guess: Yes"]])
    inconsistent = sac3.compute(**kwargs)
    assert inconsistent["scores"]["sc2"] == [0.75]
    assert inconsistent["num_unparseable"] == 2
    assert [(f["argument"], f["item"], f["sample"]) for f in inconsistent["unparseable"]] == [
        ("self_judgments", 0, 1),
        ("self_judgments", 0, 2),
    ]
    skipped = sac3.compute(**kwargs, unparseable="skip")
    assert skipped["scores"]["sc2"] == [0.5]
    assert skipped["num_unparseable"] == 2
    with pytest.raises(ValueError, match=r"self_judgments\[0\].*no judge string could be parsed"):
        sac3.compute(self_judgments=[["Guess: ?"]], perturbed_judgments=[["Guess: Yes"]], unparseable="skip")


def test_auroc_is_none_with_one_class():
    assert sac3_module.roc_auc([True, True], [0.2, 0.9]) is None
    assert sac3_module.roc_auc([False, True, True], [0.5, 0.5, 0.9]) == pytest.approx(0.75)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(self_judgments=[], perturbed_judgments=[]), r"`self_judgments` is empty"),
        (
            dict(self_judgments=[["Guess: Yes"], []], perturbed_judgments=[["x"], ["x"]]),
            r"`self_judgments\[1\]` holds no",
        ),
        (
            dict(self_judgments=[["Guess: Yes"]] * 2, perturbed_judgments=[["x"]] * 2, verifier_judgments=[["x"]]),
            r"`verifier_judgments` has 1 items.*first index without a partner is 1",
        ),
        (dict(self_judgments=[["x"]] * 2, perturbed_judgments=[["x"]] * 2, labels=[True]), r"`labels` has 1 items"),
        (dict(self_judgments=[["x"]] * 2, perturbed_judgments=[["x"]] * 2, labels=[True, "no"]), r"`labels\[1\]`"),
        (dict(self_judgments=[["x"]], perturbed_judgments=[["x"]], unparseable="ignore"), r"`unparseable`"),
        (dict(self_judgments=[["x"]], perturbed_judgments=[["x"], ["y"]]),
         r"`perturbed_judgments` has 2 items but `self_judgments` has 1; the first index without a partner is 1"),
        (dict(self_judgments=[["Guess: Yes"], ["Guess: No"]], perturbed_judgments=[["x"], []]),
         r"`perturbed_judgments\[1\]` holds no"),
    ],
)
def test_bad_input_names_the_argument(sac3, kwargs, message):
    with pytest.raises(ValueError, match=message):
        sac3.compute(**kwargs)
