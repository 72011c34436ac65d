"""mhalubench on the released annotations and against scikit-learn on generated verdicts."""
import json
import random

import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_recall_fscore_support

from hallubench.metrics.mhalubench.mhalubench import LABELS, MHaluBench, segment_label

H, N = LABELS


@pytest.fixture(scope="module")
def mhalubench():
    return MHaluBench()


def released_claims(shared_data):
    items = json.loads((shared_data / "mhalubench" / "image_to_text_annotated.json").read_text())
    claims, segments = [], {}
    for i, item in enumerate(items):
        for j, segment in enumerate(item["annotation"]):
            segments[f"{i}/{j}"] = segment["segment_label"]
            claims += [(f"{i}/{j}", claim["claim_label"]) for claim in segment["claims"]]
    return claims, segments


def test_released_labels_score_one_and_derive_the_segment_labels(mhalubench, shared_data):
    claims, segments = released_claims(shared_data)
    assert (len(claims), len(segments)) == (1142, 661)
    ids = [segment for segment, _ in claims]
    labels = [label for _, label in claims]
    derived = {segment: segment_label([label for s, label in claims if s == segment]) for segment in segments}
    assert derived == segments
    result = mhalubench.compute(predictions=labels, references=labels, segment_ids=ids)
    assert (result["claim"]["n"], result["segment"]["n"]) == (1142, 661)
    for level in ("claim", "segment"):
        assert result[level]["accuracy"] == result[level]["macro_f1"] == 1.0
        for label in LABELS:
            assert [result[level][label][k] for k in ("precision", "recall", "f1")] == [1.0, 1.0, 1.0]
    assert result["segment"][H]["support"] == sum(label == H for label in segments.values()) == 434


def sklearn_level(y_true, y_pred):
    p, r, f, s = precision_recall_fscore_support(y_true, y_pred, labels=list(LABELS), zero_division=0)
    return {
        "per_class": {label: {"precision": p[k], "recall": r[k], "f1": f[k], "support": s[k]} for k, label in enumerate(LABELS)},
        "accuracy": accuracy_score(y_true, y_pred),
        "macro_f1": f1_score(y_true, y_pred, labels=list(LABELS), average="macro", zero_division=0),
    }


def test_matches_sklearn_at_both_levels(mhalubench):
    rng = random.Random(0)
    n_segments = 120
    ids = [segment for s in range(n_segments) for segment in [f"doc{s % 40}/{s}"] * rng.randint(1, 4)]
    rng.shuffle(ids)  # claims of a segment need not be adjacent
    refs = [rng.choice(LABELS) for _ in ids]
    preds = [rng.choice([H, N, N, None]) for _ in ids]
    result = mhalubench.compute(predictions=preds, references=refs, segment_ids=ids)

    claim_pred = [p or "unparsed" for p in preds]
    seg_true, seg_pred = [], []
    for segment in dict.fromkeys(ids):
        members = [i for i, s in enumerate(ids) if s == segment]
        seg_true.append(H if any(refs[i] == H for i in members) else N)
        votes = [preds[i] for i in members]
        seg_pred.append(H if H in votes else "unparsed" if None in votes else N)
    for level, (y_true, y_pred) in {"claim": (refs, claim_pred), "segment": (seg_true, seg_pred)}.items():
        expected = sklearn_level(y_true, y_pred)
        for label in LABELS:
            assert result[level][label] == pytest.approx(expected["per_class"][label])
        assert (result[level]["accuracy"], result[level]["macro_f1"]) == pytest.approx((expected["accuracy"], expected["macro_f1"]))
        assert (result[level]["unparsed"], result[level]["n"]) == (y_pred.count("unparsed"), len(y_true))
    assert result["segment"]["n"] == n_segments


@pytest.mark.parametrize(
    "claims, expected",
    [([N, H], H), ([N, N], N), ([N, None], None), ([None, H], H), ([N], N)],
)
def test_segment_label(claims, expected):
    assert segment_label(claims) == expected


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(predictions=[H], references=[H, N], segment_ids=["a", "a"]), r"references has 2;.*first unpaired index: 1"),
        (dict(predictions=[H, N], references=[H, N], segment_ids=["a"]), r"segment_ids has 1;.*first unpaired index: 1"),
        (dict(predictions=[], references=[], segment_ids=[]), "empty"),
        (dict(predictions=[H, N], references=[H, "hallucinated"], segment_ids=["a", "b"]), r"references\[1\] is 'hallucinated'"),
        (dict(predictions=[H, float("nan")], references=[H, N], segment_ids=["a", "b"]), r"predictions\[1\] is nan"),
        (dict(predictions=[H, N], references=[H, N], segment_ids=["a", None]), r"segment_ids\[1\] is None"),
    ],
)
def test_bad_input_names_argument_and_index(mhalubench, kwargs, message):
    with pytest.raises(ValueError, match=message):
        mhalubench.compute(**kwargs)
