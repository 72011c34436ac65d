"""cchall against scikit-learn on generated outputs, its parser case by case, and its input checks."""
import random

import pytest
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, precision_recall_fscore_support

from hallubench.metrics.cchall.cchall import LABELS, CCHall, canonical_label, parse_cchall

NH, CM, CL, BOTH = LABELS
SOURCES = ["AMBER", "GQA", "XM3600", "xFlickrCO"]


@pytest.fixture(scope="module")
def cchall():
    return CCHall()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("**Final Answer: C. Cross-lingual, non-cross-modal hallucination.**", CL),
        ("Final Answer: A", NH),
        ("Final Answer: (D)", BOTH),
        ("Final Answer: [B]. [Cross-modal, non-cross-lingual hallucination]", CM),
        ("final answer: b. cross-modal, non-cross-lingual", CM),
        ("Analysis: maybe non-hallucination...\nFinal Answer: D. Cross-modal, cross-lingual hallucination.", BOTH),
        ("Both answers are correct: non-hallucination.", NH),
        ("B. Cross-modal, non-cross-lingual hallucination", CM),
        ("Final Answer: A. Cross-modal, cross-lingual hallucination", None),
        ("Non-hallucination or cross-modal, cross-lingual?", None),
        ("A dog is in the picture.", None),
        ("Final Answer: E", None),
        ("", None),
        ("I cannot tell.", None),
    ],
)
def test_parse_with_options(text, expected):
    assert parse_cchall(text, list(LABELS)) == expected


@pytest.mark.parametrize(
    "text, expected",
    [("Final Answer: B", None), ("Final Answer: B. Cross-modal, cross-lingual hallucination", BOTH)],
)
def test_parse_without_options_reads_only_type_text(text, expected):
    assert parse_cchall(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [("Non-hallucination", NH), ("cross-modal, cross-lingual", BOTH), ("Cross-lingual non-cross-modal hallucination", CL),
     ("hallucination", None), ("cross-modal", None), ("Cross-modal, non-cross-lingual hallucination", CM)],
)
def test_canonical_label(text, expected):
    assert canonical_label(text) == expected


def generated(n=400, seed=0):
    """Outputs in the styles models produce, each with the type it means (None: nothing readable)."""
    rng = random.Random(seed)
    items = []
    for _ in range(n):
        options = rng.sample(LABELS, 4)
        truth = rng.choices(LABELS, weights=[4, 3, 2, 1])[0]
        meant = truth if rng.random() < 0.5 else rng.choice(LABELS)
        letter = "ABCD"[options.index(meant)]
        style = rng.randrange(6)
        if style == 0:
            text, parsed = f"Analysis ... **Final Answer: {letter}. {meant}.**", meant
        elif style == 1:
            text, parsed = f"Final Answer: {letter}", meant
        elif style == 2:
            text, parsed = f"Final Answer: {meant.lower()}", meant
        elif style == 3:
            other = rng.choice([label for label in LABELS if label != meant])
            text, parsed = f"Final Answer: {letter}. {other}", None
        elif style == 4:
            text, parsed = "I am not sure which type this is.", None
        else:
            text, parsed = f"{letter}.", meant
        items.append({"text": text, "truth": truth, "parsed": parsed, "options": options,
                      "source": rng.choice(SOURCES), "language": rng.choice(["sw", "fr", "cy"])})
    return items


def sklearn_scores(y_true, y_pred):
    present = [label for label in LABELS if label in y_true or label in y_pred]
    p, r, f, s = precision_recall_fscore_support(y_true, y_pred, labels=list(LABELS), zero_division=0)
    return {
        "accuracy": accuracy_score(y_true, y_pred),
        "macro_f1": f1_score(y_true, y_pred, labels=present, average="macro", zero_division=0),
        "per_class": {label: {"precision": p[k], "recall": r[k], "f1": f[k], "support": s[k]} for k, label in enumerate(LABELS)},
        "confusion_matrix": confusion_matrix(y_true, y_pred, labels=list(LABELS) + ["unparsed"])[:4].tolist(),
    }


def test_matches_sklearn(cchall):
    items = generated()
    y_true = [item["truth"] for item in items]
    y_pred = [item["parsed"] or "unparsed" for item in items]
    result = cchall.compute(
        predictions=[item["text"] for item in items], references=y_true,
        options=[item["options"] for item in items],
        groups={"dataset_source": [item["source"] for item in items], "language": [item["language"] for item in items]},
    )
    expected = sklearn_scores(y_true, y_pred)
    assert result["accuracy"] == pytest.approx(expected["accuracy"])
    assert result["macro_f1"] == pytest.approx(expected["macro_f1"])
    assert result["confusion_matrix"] == expected["confusion_matrix"]
    assert result["labels"] == list(LABELS) + ["unparsed"]
    for label in LABELS:
        assert result["per_class"][label] == pytest.approx(expected["per_class"][label])
    assert result["unparsed_indices"] == [i for i, p in enumerate(y_pred) if p == "unparsed"]
    for column, key in (("dataset_source", "source"), ("language", "language")):
        for value, got in result["by_group"][column].items():
            idx = [i for i, item in enumerate(items) if item[key] == value]
            want = sklearn_scores([y_true[i] for i in idx], [y_pred[i] for i in idx])
            assert (got["accuracy"], got["macro_f1"]) == pytest.approx((want["accuracy"], want["macro_f1"]))
            assert (got["n"], got["unparsed"]) == (len(idx), sum(y_pred[i] == "unparsed" for i in idx))


def test_unparsed_lowers_recall_not_precision(cchall):
    result = cchall.compute(predictions=["Final Answer: Non-hallucination", "no idea"], references=[NH, NH])
    assert result["per_class"][NH] == pytest.approx({"precision": 1.0, "recall": 0.5, "f1": 2 / 3, "support": 2})
    assert result["macro_f1"] == pytest.approx(2 / 3)  # "unparsed" is not a class of the average
    assert result["confusion_matrix"][0] == [1, 0, 0, 0, 1]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(predictions=["a"], references=[NH, NH]), r"references has 2;.*first unpaired index: 1"),
        (dict(predictions=[], references=[]), "empty"),
        (dict(predictions=["a", "b"], references=[NH, "Partial hallucination"]), r"references\[1\] is 'Partial hallucination'"),
        (dict(predictions=["a", float("nan")], references=[NH, NH]), r"predictions\[1\] is nan"),
        (dict(predictions=["a", "b"], references=[NH, NH], options=[list(LABELS)]), r"options has 1 .*first unpaired index: 1"),
        (dict(predictions=["a", "b"], references=[NH, NH], options=[list(LABELS), [NH, NH, CM, CL]]), r"options\[1\]"),
        (dict(predictions=["a", "b"], references=[NH, NH], groups={"language": ["fr", float("nan")]}), r"groups\['language'\]\[1\] is nan"),
    ],
)
def test_bad_input_names_argument_and_index(cchall, kwargs, message):
    with pytest.raises(ValueError, match=message):
        cchall.compute(**kwargs)


def test_weighted_f1_is_sklearns_and_avg_is_the_mean_of_the_per_source_values(cchall):
    rng = random.Random(3)
    references = [rng.choice(LABELS) for _ in range(300)]
    predictions = [rng.choice([*LABELS, "I cannot tell."]) for _ in references]
    sources = [rng.choice(SOURCES[:3]) if i % 5 else SOURCES[3] for i in range(300)]  # unequal source sizes
    out = cchall.compute(predictions=predictions, references=references, groups={"dataset_source": sources})
    parsed = [parse_cchall(p) or "unparsed" for p in predictions]
    assert out["weighted_f1"] == pytest.approx(f1_score(references, parsed, labels=list(LABELS), average="weighted"))
    per_source = out["by_group"]["dataset_source"]
    assert out["accuracy_avg"] == pytest.approx(sum(v["accuracy"] for v in per_source.values()) / 4)
    assert out["macro_f1_avg"] == pytest.approx(sum(v["macro_f1"] for v in per_source.values()) / 4)
    assert out["accuracy_avg"] != pytest.approx(out["accuracy"])  # the AVG weighs each source once, not each item
    assert "accuracy_avg" not in cchall.compute(predictions=predictions, references=references)


@pytest.mark.parametrize("prior, macro, weighted", [((0.25, 0.25, 0.25, 0.25), 0.25, 0.25),
                                                    ((0.7, 0.1, 0.1, 0.1), 0.1992, 0.3008)])
def test_uniform_guesses_give_the_random_row_only_as_weighted_f1_of_skewed_labels(prior, macro, weighted):
    """The card's closed form (per type F1 = 2 p / 4 / (p + 1/4)) against the metric on 40,000 uniform guesses:
    over balanced labels every F1 is 25, as the paper's accuracy; its Random macro-F1 of 29.9 needs weighted-F1 and
    one type holding about 70 % of the items."""
    import numpy as np

    from hallubench.metrics.cchall.cchall import score_labels

    rng = np.random.default_rng(0)
    out = score_labels(rng.choice(4, 40_000, p=prior), rng.integers(0, 4, 40_000), {}, {})
    f1 = [2 * p / 4 / (p + 0.25) for p in prior]
    assert (sum(f1) / 4, sum(p * f for p, f in zip(prior, f1))) == pytest.approx((macro, weighted), abs=1e-3)
    assert (out["accuracy"], out["macro_f1"], out["weighted_f1"]) == pytest.approx((0.25, macro, weighted), abs=0.01)
