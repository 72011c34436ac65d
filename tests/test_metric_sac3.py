"""The sac3 evaluate module against a hand computation on generated judge strings, plus its examples and errors."""
import json
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


def upstream_value(text):
    """The authors' C (sac3/consistency_checker.py): `res.split(':')[1]...`, raising IndexError without a ':'."""
    guess = text.split(':')[1].split('\n')[0].strip()
    return 0 if guess == 'Yes' else 1


# Adversarial judge strings: a second colon, colons on later lines, empty or spaced guesses, other cases and words.
ADVERSARIAL = ["Guess: Yes: they match", "Guess: No: they differ", "Guess:Yes:", "Guess: Yes\nProbability: 0.9: sure",
               "Guess: :Yes", "Guess:\nYes", "Guess: yes", "Guess: YES", "Guess: Yes.", "Guess: Yes, they match",
               "Answer: No\nGuess: Yes", "Guess:  Yes  :  No", ":Yes", "Yes: no", "Guess: No\r\nProbability: 1",
               "Guess: Yes\tProbability", "Guess: \u00a0Yes", "Guess: Oui", "Guess: Noo"]


@pytest.mark.parametrize("text", ADVERSARIAL)
def test_parse_judgment_reads_as_the_authors_code_reads(text):
    value, _ = sac3_module.parse_judgment(text)
    assert (1 if value is None else value) == upstream_value(text)
    assert value is None or value == {"Yes": 0, "No": 1}[text.split(':')[1].split('\n')[0].strip()]


def test_parse_judgment_reads_every_released_judge_string_as_the_authors(shared_data):
    strings = [text for path in sorted((shared_data / "sac3").glob("*.json"))
               for item in json.loads(path.read_text()) for key in ("self_SC", "perb_SC")
               for text in item.get(key) or [] if isinstance(text, str)]
    assert len(strings) > 30000
    assert [1 if (value := sac3_module.parse_judgment(text)[0]) is None else value for text in strings] == \
        [upstream_value(text) for text in strings]


def test_a_string_without_colon_is_unparseable_where_the_authors_code_raises():
    with pytest.raises(IndexError):
        upstream_value("Yes")
    assert sac3_module.parse_judgment("Yes") == (None, None)


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
