"""pa_hr against the CMM release's own scorer (re-implemented below from its published code) and scikit-learn."""
import json
import random

import pytest
from sklearn.metrics import accuracy_score, recall_score

from hallubench.metrics.pa_hr.pa_hr import PaHr, parse_official, parse_yes_no

from cmm_support import cmm_calculate_score

SUB_CATEGORIES = ["visual-language", "audio-language", "overrely_visual_ignore_audio"]
GRANULARITIES = ["object-level", "event-level"]
ANSWER_POOL = [
    "Yes", "yes.", "No", "no, there is none.", "**Yes**.", "Answer: no", " No.", "I know there is a dog.",
    "Not sure.", "Yes/No", "yesterday it rained", "nobody is there", "", "Nope", "noyes", "The answer is yes.",
    "  YES, clearly", "n/a", "Yes or no: no",
]


@pytest.fixture(scope="module")
def pa_hr():
    return PaHr()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Yes", "yes"), ("**Yes**.", "yes"), ("Answer: no", "no"), (" No.", "no"), ("'Yes', it is.", "yes"),
        ("The answer is NO!", "no"), ("Answer (yes/no): no", "no"), ("Yes or no? Yes.", "yes"),
        ("no-one is there, but yes", "yes"), ("No, yes", "no"),
        ("I know", None), ("nobody", None), ("yesterday", None), ("Yes/No", None), ("yes or no", None),
        ("", None), ("Yeah", None), ("Nope", None), ("not at all", None), ("no-one", None),
    ],
)
def test_parse_yes_no(text, expected):
    assert parse_yes_no(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [("Yes", "yes"), ("I know", "no"), ("Not sure", "no"), ("Yes/No", "yes"), (" nobody", "no"),
     ("Sure, yes", None), ("", None), ("  YES", "yes")],
)
def test_parse_official(text, expected):
    assert parse_official(text) == expected


def generated(n=300, seed=0):
    rng = random.Random(seed)
    return [
        {"answer": rng.choice(["yes", "no", " Yes "]), "pred": rng.choice(ANSWER_POOL),
         "sub_category": rng.choice(SUB_CATEGORIES), "granularity": rng.choice(GRANULARITIES)}
        for _ in range(n)
    ]


def test_official_mode_reproduces_the_cmm_scorer(pa_hr):
    samples = generated()
    overall, by_sub, by_gran = cmm_calculate_score([json.dumps(s) for s in samples])
    pairs = [f"{s['granularity']}|{s['sub_category']}" for s in samples]
    result = pa_hr.compute(
        predictions=[s["pred"] for s in samples], references=[s["answer"] for s in samples], mode="official",
        groups={"sub_category": [s["sub_category"] for s in samples], "pair": pairs},
    )
    assert (result["pa"], result["hr"], result["accuracy"]) == pytest.approx(overall)
    for sub, expected in by_sub.items():
        got = result["by_group"]["sub_category"][sub]
        assert (got["pa"], got["hr"], got["accuracy"]) == pytest.approx(expected)
    for (gran, sub), expected in by_gran.items():
        got = result["by_group"]["pair"][f"{gran}|{sub}"]
        assert (got["pa"], got["hr"], got["accuracy"]) == pytest.approx(expected)
    heads = [s["pred"].strip().lower()[:5] for s in samples]
    assert result["unparsed_indices"] == [i for i, h in enumerate(heads) if "yes" not in h and "no" not in h]


def test_default_mode_matches_sklearn(pa_hr):
    samples = generated(seed=1)
    y_true = [s["answer"].strip().lower() for s in samples]
    y_pred = [parse_yes_no(s["pred"]) or "unparsed" for s in samples]
    result = pa_hr.compute(predictions=[s["pred"] for s in samples], references=[s["answer"] for s in samples])
    pa, hr = recall_score(y_true, y_pred, labels=["yes", "no"], average=None)
    assert (result["pa"], result["hr"]) == pytest.approx((pa, hr))
    assert result["accuracy"] == pytest.approx(accuracy_score(y_true, y_pred))
    parsed = [p for p in y_pred if p != "unparsed"]
    assert result["yes_ratio"] == pytest.approx(parsed.count("yes") / len(parsed))
    assert result["unparsed_indices"] == [i for i, p in enumerate(y_pred) if p == "unparsed"]
    assert result["unparsed"] == len(result["unparsed_indices"]) > 0


def test_yes_ratio_leaves_unparsed_predictions_out_and_they_count_wrong(pa_hr):
    result = pa_hr.compute(predictions=["yes", "", "no", "Yes!", "I know"], references=["yes", "yes", "no", "no", "no"])
    assert result["yes_ratio"] == pytest.approx(2 / 3)
    assert (result["pa"], result["hr"], result["accuracy"]) == pytest.approx((0.5, 1 / 3, 0.4))
    assert (result["unparsed"], result["unparsed_indices"]) == (2, [1, 4])


def test_group_breakdown_and_missing_class(pa_hr):
    result = pa_hr.compute(
        predictions=["yes", "no", "yes", "nobody"], references=["yes", "yes", "no", "no"],
        groups={"modality": ["video", "video", "audio", "audio"]},
    )
    video, audio = result["by_group"]["modality"]["video"], result["by_group"]["modality"]["audio"]
    assert (video["pa"], video["hr"], video["n"], video["yes_ratio"]) == (0.5, None, 2, 0.5)
    assert (audio["pa"], audio["hr"], audio["unparsed"], audio["yes_ratio"]) == (None, 0.0, 1, 1.0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(predictions=["yes", "no"], references=["yes"]), r"references has 1;.*first unpaired index: 1"),
        (dict(predictions=[], references=[]), "empty"),
        (dict(predictions=["yes", "no"], references=["yes", "maybe"]), r"references\[1\] is 'maybe'"),
        (dict(predictions=["yes", float("nan")], references=["yes", "no"]), r"predictions\[1\] is nan"),
        (dict(predictions=[None], references=["yes"]), r"predictions\[0\] is None"),
        (dict(predictions=["yes"], references=["yes"], mode="strict"), "mode is 'strict'"),
        (dict(predictions=["yes", "no"], references=["yes", "no"], groups={"sub_category": ["a"]}),
         r"groups\['sub_category'\] has 1 values .*first unpaired index: 1"),
        (dict(predictions=["yes", "no"], references=["yes", "no"], groups={"sub_category": ["a", None]}),
         r"groups\['sub_category'\]\[1\] is None"),
    ],
)
def test_bad_input_names_argument_and_index(pa_hr, kwargs, message):
    with pytest.raises(ValueError, match=message):
        pa_hr.compute(**kwargs)


def test_official_mode_scores_a_class_without_references_0_like_the_cmm_scorer(pa_hr):
    samples = [{"answer": "yes", "pred": "Yes", "sub_category": "visual-language", "granularity": "object-level"},
               {"answer": "no", "pred": "No.", "sub_category": "audio-language", "granularity": "event-level"}]
    _, by_sub, _ = cmm_calculate_score([json.dumps(s) for s in samples])
    result = pa_hr.compute(predictions=[s["pred"] for s in samples], references=[s["answer"] for s in samples],
                           mode="official", groups={"sub_category": [s["sub_category"] for s in samples]})
    visual, audio = (result["by_group"]["sub_category"][k] for k in ("visual-language", "audio-language"))
    assert (visual["pa"], visual["hr"]) == by_sub["visual-language"][:2] == (1.0, 0)
    assert (audio["pa"], audio["hr"]) == by_sub["audio-language"][:2] == (0, 1.0)
