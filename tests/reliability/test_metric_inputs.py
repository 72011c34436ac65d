"""Metric inputs: NaN, inf, numeric strings, bools and wrong containers are a ValueError naming the argument
(and index) in all six metrics (checked before evaluate's features cast "0.5" or True to a number); a call with
no inputs at all is a ValueError naming them; None is accepted exactly where the cards document it."""
import math

import evaluate
import pytest

JUDGMENTS = dict(systems=["a", "a", "b", "b"], documents=["q"] * 4, evidence=["a", "b", "a", "b"],
                 judgments=[[0.0], [0.5], [0.5], [0.1]])
SAC3 = dict(self_judgments=[["Yes"], ["No"]], perturbed_judgments=[["Yes"], ["No"]])


@pytest.fixture(scope="module")
def metric():
    loaded = {}

    def get(name):
        if name not in loaded:
            loaded[name] = evaluate.load(f"metrics/{name}")
        return loaded[name]
    return get


BAD = [
    ("sac3", {**SAC3, "threshold": math.nan}, r"`threshold` is nan"),
    ("sac3", {**SAC3, "threshold": math.inf}, r"`threshold` is inf"),
    ("sac3", {**SAC3, "lambda_weight": "1"}, r"`lambda_weight` is '1'"),
    ("sac3", {**SAC3, "lambda_weight": True}, r"`lambda_weight` is True"),
    ("sac3", {**SAC3, "self_judgments": ["Yes", "No"]}, r"`self_judgments\[0\]` is a single string"),
    ("sac3", {**SAC3, "labels": [True, math.nan]}, r"`labels\[1\]` is nan"),
    ("crosscheck", {**JUDGMENTS, "temperature": math.nan}, r"`temperature` is nan"),
    ("crosscheck", {**JUDGMENTS, "temperature": "0.1"}, r"`temperature` is '0.1'"),
    ("crosscheck", {**JUDGMENTS, "selfcheck_scores": {"a": math.nan}}, r"`selfcheck_scores\['a'\]` is nan"),
    ("crosscheck", {**JUDGMENTS, "selfcheck_scores": {"b": math.inf}}, r"`selfcheck_scores\['b'\]` is inf"),
    ("crosscheck", {**JUDGMENTS, "judgments": [[0.0], [math.nan], [0.5], [0.1]]}, r"`judgments\[1\]\[0\]`|judgments"),
    ("crosscheck", {**JUDGMENTS, "judgments": [[0.0], ["0.5"], [0.5], [0.1]]}, r"`judgments\[1\]\[0\]` is '0.5'"),
    ("crosscheck", {**JUDGMENTS, "judgments": [[0.0], [0.5], ["1e-1"], [0.1]]}, r"`judgments\[2\]\[0\]` is '1e-1'"),
    ("crosscheck", {**JUDGMENTS, "judgments": [[True], [0.5], [0.5], [0.1]]}, r"`judgments\[0\]\[0\]` is True"),
    ("crosscheck", {**JUDGMENTS, "judgments": ["0.5", [0.5], [0.5], [0.1]]}, r"`judgments\[0\]` is '0.5'"),
    ("sac3", {**SAC3, "labels": [1, False]}, r"`labels\[0\]` is 1"),
    ("sac3", {**SAC3, "labels": [True]}, r"`labels` has 1 items but `self_judgments` has 2"),
    ("pa_hr", dict(predictions=["yes"], references=["yes"], groups={"g": 5}), r"groups\['g'\] is 5"),
    ("pa_hr", dict(predictions=["yes", "no"], references=["yes", "no"], groups={"g": "ab"}), r"groups\['g'\] is 'ab'"),
    ("cchall", dict(predictions=["A"], references=["Non-hallucination"], groups={"g": 5}), r"groups\['g'\] is 5"),
    ("pa_hr", dict(predictions=None, references=["yes"]), "predictions must be a list, got NoneType"),
    ("pa_hr", dict(predictions=["yes", 1.0], references=["yes", "no"]), r"predictions\[1\] is 1.0"),
    ("pa_hr", dict(predictions=["yes"], references=[math.nan]), r"references\[0\] is nan"),
    ("cchall", dict(predictions=None, references=["A"]), "predictions must be a list, got NoneType"),
    ("cchall", dict(predictions=["A"], references=None), "references must be a list, got NoneType"),
    ("mhalubench", dict(predictions=None, references=["hallucination"], segment_ids=["s"]),
     "predictions must be a list, got NoneType"),
    ("mhalubench", dict(predictions=["hallucination", math.nan], references=["hallucination"] * 2,
                        segment_ids=["s", "s"]), r"predictions\[1\] is nan"),
    ("sentence_detection", dict(predictions=[[0.1, math.nan]], references=[["accurate"] * 2]),
     r"`predictions\[0\]\[1\]` is nan"),
    ("sentence_detection", dict(predictions=[[math.inf]], references=[["accurate"]]), r"`predictions\[0\]\[0\]` is inf"),
    ("sentence_detection", dict(predictions=[[0.1]], references=[[math.nan]]), r"`references\[0\]\[0\]` is"),
    ("sentence_detection", dict(predictions=[[0.1]], references=[["accurate"]], drop_all_major="yes"),
     r"`drop_all_major` is 'yes'"),
]


@pytest.mark.parametrize("name,kwargs,message", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_is_a_value_error_naming_it(metric, name, kwargs, message):
    with pytest.raises(ValueError, match=message):
        metric(name).compute(**kwargs)


@pytest.mark.parametrize("name", ["pa_hr", "cchall", "mhalubench", "sac3", "crosscheck"])
def test_no_inputs_at_all_is_named(metric, name):
    with pytest.raises(ValueError, match=r"^no inputs: pass (predictions|self_judgments|systems)"):
        metric(name).compute()


@pytest.mark.parametrize("position", [0, 1])
def test_mhalubench_unparsed_none_counts_wherever_it_is(metric, position):
    predictions = ["hallucination", "hallucination"]
    predictions[position] = None
    result = metric("mhalubench").compute(predictions=predictions, references=["hallucination"] * 2,
                                          segment_ids=["s", "t"])
    assert result["claim_unparsed"] == 1 and result["claim_accuracy"] == 0.5
    assert result["segment_unparsed"] == 1  # its segment has an unknown claim: unparsed, never correct


def test_finite_numbers_still_work(metric):
    # Scores lie in [0, 1]; "strictly above the threshold" predicts hallucinated.
    assert metric("sac3").compute(**SAC3, threshold=1, lambda_weight=2)["predictions"]["sac3_q"] == [False, False]
    assert metric("sac3").compute(**SAC3, threshold=-1)["predictions"]["sac3_q"] == [True, True]
    scores = metric("crosscheck").compute(**JUDGMENTS, temperature=1, selfcheck_scores={"a": 0, "b": 0.5})["scores"]
    assert set(scores) == {"a", "b"}
