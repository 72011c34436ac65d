"""mhalubench on the released annotations, against scikit-learn on generated verdicts, and per response: raw
detector answers read by `parse_verdicts` score as their verdicts given per claim."""
import json
import random

import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_recall_fscore_support

from hallubench.metrics.mhalubench.mhalubench import LABELS, MHaluBench, parse_verdicts, segment_label

H, N = LABELS
FRACTIONS = ["accuracy", "macro_precision", "macro_recall", "macro_f1"] + [
    f"{label}_{score}" for label in ("hallucination", "non_hallucination") for score in ("precision", "recall", "f1")]


def level(result, name):
    """One level's metrics without the level prefix."""
    return {key[len(name) + 1:]: value for key, value in result.items() if key.startswith(name + "_")}


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
    assert (result["claim_n"], result["segment_n"]) == (1142, 661)
    floats = {name: value for name, value in result.items() if isinstance(value, float)}
    assert floats == {f"{level}_{name}": 1.0 for level in ("claim", "segment") for name in FRACTIONS}
    assert result["segment_hallucination_support"] == sum(label == H for label in segments.values()) == 434


def sklearn_level(y_true, y_pred):
    p, r, f, s = precision_recall_fscore_support(y_true, y_pred, labels=list(LABELS), zero_division=0)
    expected = {"accuracy": accuracy_score(y_true, y_pred)}
    for k, label in enumerate(LABELS):
        name = label.replace("-", "_")
        expected.update({f"{name}_precision": p[k], f"{name}_recall": r[k], f"{name}_f1": f[k], f"{name}_support": s[k]})
    for score, values in (("precision", p), ("recall", r), ("f1", f)):
        expected[f"macro_{score}"] = sum(values) / 2  # both classes occur in these references
    assert expected["macro_f1"] == pytest.approx(f1_score(y_true, y_pred, labels=list(LABELS), average="macro", zero_division=0))
    return expected


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
    for name, (y_true, y_pred) in {"claim": (refs, claim_pred), "segment": (seg_true, seg_pred)}.items():
        got = level(result, name)
        assert {k: got[k] for k in sklearn_level(y_true, y_pred)} == pytest.approx(sklearn_level(y_true, y_pred))
        assert (got["unparsed"], got["n"]) == (y_pred.count("unparsed"), len(y_true))
    assert result["segment_n"] == n_segments


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


@pytest.mark.parametrize("text, n, expected", [
    ('[{"claim1":"hallucination", "reason":"No dog. Therefore, there\'s a hallucination."},'
     ' {"claim2":"non-hallucination", "reason":"A cat; there\'s no hallucination."}]', 2, [H, N]),
    ("Claim 1: Non-Hallucination - the cat is there.\nClaim 2: hallucination", 2, [N, H]),
    ("**claim1**: hallucinatory\n**Claim #2** - nonhallucination\n`claim3`= Non hallucination", 3, [H, N, N]),
    ("1. hallucination (no dog)\n2) non-hallucination\n3: hallucination", 3, [H, N, H]),
    ('{"claim_1": "non-hallucination", "claim-2": "hallucination"}', 2, [N, H]),
    ("{'claim1': 'hallucination', 'claim3': 'hallucination'}", 3, [H, None, H]),  # claim 2 missing: partial
    ('"claim1": "hallucination", "claim1": "non-hallucination", "claim2": "hallucination"', 2, [None, H]),  # conflict
    ('"claim1": "hallucination", "claim1": "hallucination"', 1, [H]),  # a repeated, agreeing verdict
    ('"claim1": "no hallucination", "claim2": "The dog is a hallucination."', 2, None),  # no label right after the number
    ("claim1: The dog is there, so non-hallucination.", 1, None),
    ('"claim4": "hallucination"', 3, None),  # only a claim the response does not have
    ("", 2, None),
])
def test_parse_verdicts_reads_only_the_label_right_after_each_claim_number(text, n, expected):
    assert parse_verdicts(text, n) == expected


def answer(verdicts, style):
    """A detector answer giving `verdicts` (None: leave that claim out) in one of the styles it may use."""
    lines = {
        "json": [f'{{"claim{k}": "{v}", "reason": "so there is no hallucination"}}' for k, v in verdicts],
        "lines": [f"Claim {k}: **{v.title()}** because I say so." for k, v in verdicts],
        "numbered": [f"{k}. {v}" for k, v in verdicts],
    }[style]
    return "[" + ",\n".join(lines) + "]" if style == "json" else "\n".join(lines)


def test_per_response_answers_score_as_their_verdicts_given_per_claim(mhalubench):
    rng = random.Random(1)
    texts, refs, segs, groups = [], [], [], []
    flat_preds, flat_refs, flat_segs, flat_groups = [], [], [], []
    partial = unparsed = 0
    for i in range(80):
        n = rng.randint(1, 7)
        labels = [rng.choice(LABELS) for _ in range(n)]
        segments = sorted(str(rng.randint(0, 2)) for _ in range(n))
        verdicts = [rng.choice([H, N, N, None]) for _ in range(n)]
        if rng.random() < 0.1:
            verdicts = [None] * n
        texts.append(answer([(k + 1, v) for k, v in enumerate(verdicts) if v is not None], rng.choice(["json", "lines", "numbered"])))
        refs.append(labels)
        segs.append(segments)
        groups.append(rng.choice(["image-caption", "vqa"]))
        flat_preds += verdicts
        flat_refs += labels
        flat_segs += [f"{i}/{s}" for s in segments]
        flat_groups += [groups[-1]] * n
        unparsed += all(v is None for v in verdicts)
        partial += None in verdicts and any(v is not None for v in verdicts)
    per_response = mhalubench.compute(predictions=texts, references=refs, segment_ids=segs, groups={"task_type": groups})
    per_claim = mhalubench.compute(predictions=flat_preds, references=flat_refs, segment_ids=flat_segs,
                                   groups={"task_type": flat_groups})
    assert (per_response.pop("responses_unparsed"), per_response.pop("responses_partial")) == (unparsed, partial)
    assert unparsed > 0 and partial > 0
    # the contract's n and unparsed count the items given: responses here, claims there
    assert (per_response.pop("n"), per_response.pop("unparsed")) == (len(texts), unparsed)
    assert (per_claim.pop("n"), per_claim.pop("unparsed")) == (len(flat_preds), flat_preds.count(None))
    for breakdown in [*per_response["by_group"]["task_type"].values(), *per_claim["by_group"]["task_type"].values()]:
        for key in ("responses_unparsed", "responses_partial", "n", "unparsed"):
            breakdown.pop(key, None)
    assert per_response == per_claim
    assert per_response["claim_unparsed"] == flat_preds.count(None) > 0


def test_per_response_references_and_segments_are_checked(mhalubench):
    ok = dict(predictions=["claim1: hallucination"], references=[[H]], segment_ids=[["0"]])
    with pytest.raises(ValueError, match=r"references\[0\]\[1\] is 'hallucinated'"):
        mhalubench.compute(**{**ok, "references": [[H, "hallucinated"]], "segment_ids": [["0", "0"]]})
    with pytest.raises(ValueError, match=r"references\[0\] has 2 claim labels and segment_ids\[0\] 1"):
        mhalubench.compute(**{**ok, "references": [[H, N]]})
    with pytest.raises(ValueError, match=r"segment_ids\[0\]\[0\] is 0; expected a string id"):
        mhalubench.compute(**{**ok, "segment_ids": [[0]]})
    with pytest.raises(ValueError, match=r"predictions\[0\] is None, not a string"):
        mhalubench.compute(**{**ok, "predictions": [None]})
    with pytest.raises(ValueError, match=r"groups\['t'\] has 2 values for 1 predictions"):
        mhalubench.compute(**ok, groups={"t": ["a", "b"]})


def test_scores_by_claim_category_are_the_claim_scores_of_each_categorys_claims(mhalubench):
    rng = random.Random(7)
    kinds = [["object"], ["attribute"], ["object", "attribute"], ["scene-text"], ["fact"]]
    references = [rng.choice(LABELS) for _ in range(200)]
    predictions = [rng.choice([H, N, None]) for _ in references]
    categories = [rng.choice(kinds) for _ in references]
    segment_ids = [str(i // 3) for i in range(200)]
    out = mhalubench.compute(predictions=predictions, references=references, segment_ids=segment_ids,
                             claim_categories=categories)
    assert list(out["by_claim_category"]) == list(dict.fromkeys(c for cs in categories for c in cs))
    for category, scores in out["by_claim_category"].items():
        idx = [i for i, cs in enumerate(categories) if category in cs]  # a two-category claim counts in both
        alone = mhalubench.compute(predictions=[predictions[i] for i in idx], references=[references[i] for i in idx],
                                   segment_ids=[str(i) for i in idx])
        assert scores == level_with_prefix(alone, "claim") and scores["claim_n"] == len(idx)
    per_response = mhalubench.compute(  # the same claims as two responses' raw answers
        predictions=['{"claim1": "hallucination"}', 'claim1: non-hallucination\nclaim2: hallucination'],
        references=[[H], [N, H]], segment_ids=[["0"], ["0", "0"]], claim_categories=[[["fact"]], [["object"], ["fact"]]])
    assert per_response["by_claim_category"]["fact"]["claim_n"] == 2
    assert per_response["by_claim_category"]["object"]["claim_accuracy"] == 1.0
    with pytest.raises(ValueError, match="claim_categories"):
        mhalubench.compute(predictions=[H], references=[H], segment_ids=["0"], claim_categories=["object"])


def level_with_prefix(result, name):
    return {key: value for key, value in result.items() if key.startswith(name + "_")}
