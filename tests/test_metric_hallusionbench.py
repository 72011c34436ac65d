"""The hallusionbench metric against the authors' own scoring, and its input checks.

Parity: `tests/fixtures/hallusionbench/parity_inputs.json` holds 12 runs over the mini release's 24 questions (288
adversarial answers, each with a fixed GPT-4 judgment string); `parity_numbers.json` is what the authors' scorer
printed for them: utils.py of github.com/tianyi-lab/HallusionBench at commit 744007c232c292942c7f80eb61edb2465482da31,
unchanged (assign_correctness, get_eval_all, get_eval_pair_all, get_eval_fig, get_eval_pair_easy/hard,
yes_ratio_stats; VD, VS and all as evaluation.py splits them), run by a scratch script (/tmp/hallusionbench-parity/
parity.py, not committed: it holds the authors' and VLMEvalKit's code) in which `openai.ChatCompletion.create` answers
each judge prompt with the item's fixed judgment (the authors' evaluate_by_chatgpt reads it) and each consistency
prompt with "same". The rule-based numbers come from VLMEvalKit's YOrN_Extraction (vlmeval/dataset/utils/yorn.py and smp
process_punctuation, copied verbatim there, with the period pattern from before VLMEvalKit's commit 928a95b0) mapped
to the authors' codes (1 match, 0 mismatch, 2 Unknown) before the same aggregation; no answer of these runs reads
differently under the current pattern, so both `rule`s must give these numbers. `yorn_parity.json` holds
VLMEvalKit's own YOrN_Extraction under both patterns on 1,200 answers made to tell them apart
(make_yorn_parity.py).
"""
import json
from pathlib import Path

import pytest

from hallubench.metrics.hallusionbench.hallusionbench import (JUDGE_PROMPT, PERIOD_RULES, ROW_FIELDS, HallusionBench,
                                                              extract_yes_no, judge_code)

FIXTURES = Path(__file__).parent / "fixtures" / "hallusionbench"
RUNS = json.loads((FIXTURES / "parity_inputs.json").read_text())
OFFICIAL = json.loads((FIXTURES / "parity_numbers.json").read_text())


@pytest.fixture(scope="module")
def metric():
    return HallusionBench()


def _inputs(run: list[dict], judged: bool) -> dict:
    fields = {name: [r[name] for r in run] for name in ROW_FIELDS}
    extra = {"judgments": [r["judgment"] for r in run]} if judged else {}
    return dict(predictions=[r["model_prediction"] for r in run], references=[r["gt_answer"] for r in run],
                groups={"category": fields["category"]}, **fields, **extra)


@pytest.mark.parametrize("rule", PERIOD_RULES)
@pytest.mark.parametrize("judge", ["rule", "judge"])
@pytest.mark.parametrize("index", range(len(RUNS)))
def test_scores_equal_the_authors_scorer(metric, index, judge, rule):
    official = OFFICIAL[index][judge]
    result = metric.compute(**_inputs(RUNS[index], judge == "judge"), rule=rule)
    by_category = result["by_group"]["category"]
    for where, ours in (("all", result), ("VD", by_category["VD"]), ("VS", by_category["VS"])):
        # where no answer is wrong, the authors' yes_ratio_stats divides by zero (the script records None for both
        # of its numbers); ours gives the yes bias still and a None FP ratio
        expected = {name: value for name, value in official[where].items() if value is not None or name != "yes_bias"}
        assert {name: ours[f"{name}_{judge}"] for name in expected} == pytest.approx(expected), where
    assert result["unparsed"] == official["unclear"] == len(result["unparsed_indices"])


def test_the_parity_runs_exercise_what_they_check():
    assert sum(len(run) for run in RUNS) >= 250
    numbers = [run[judge]["all"] for run in OFFICIAL for judge in ("rule", "judge")]
    assert len({n["qacc"] for n in numbers}) > 4 and len({n["facc"] for n in numbers}) > 4
    assert any(n["fp_ratio"] is None for n in numbers) and any(run["rule"]["unclear"] for run in OFFICIAL)
    # the rule and the judge disagree on some runs: the two are different judges, never the same numbers renamed
    assert any(run["rule"]["all"] != run["judge"]["all"] for run in OFFICIAL)


@pytest.mark.parametrize("text, expected", [
    ("Yes", "yes"), ("NO!", "no"), ("**Yes**", None), ("Yes, no doubt.", None), ("Yes/No", None), ("", None),
    ("no-one is there", "no"), ("yes-man", "yes"), ("Yes.No", None), ("nope", None), ("[yes]", "yes"),
])
def test_rule_matcher_is_vlmevalkits(text, expected):
    # YOrN_Extraction splits on its punctuation list, hyphens included ("no-one" reads "no") but not asterisks
    # ("**yes**" is no word "yes"), and refuses answers holding both words
    assert extract_yes_no(text) == expected



@pytest.mark.parametrize("rule", PERIOD_RULES)
def test_rule_matcher_equals_vlmevalkits_own_on_adversarial_answers(rule):
    """VLMEvalKit's YOrN_Extraction itself (fixtures/hallusionbench/make_yorn_parity.py: its code at 928a95b0^ and at
    e8e78f05) on 1,200 answers; the two rules differ on some of them, so each is checked against its own version."""
    parity = json.loads((FIXTURES / "yorn_parity.json").read_text())
    official = {"Yes": "yes", "No": "no", "Unknown": None}
    expected = [official[answer] for answer in parity[rule]]
    assert [extract_yes_no(text, rule) for text in parity["answers"]] == expected
    assert sum(a != b for a, b in zip(parity["vlmevalkit"], parity["vlmevalkit-2024"])) >= 20


def test_the_default_rule_is_vlmevalkits_current_one(metric):
    numbered = " ".join(f"{i}." for i in range(1, 34)) + " no."
    assert (extract_yes_no(numbered), extract_yes_no(numbered, "vlmevalkit-2024")) == ("no", None)
    rows = dict(category=["VD"], subcategory=["ocr"], set_id=["0"], figure_id=["0"], question_id=["0"],
                visual_input=["1"])
    assert metric.compute(predictions=[numbered], references=["0"], **rows)["aacc_rule"] == 1.0
    assert metric.compute(predictions=[numbered], references=["0"], rule="vlmevalkit-2024", **rows)["unparsed"] == 1
    with pytest.raises(ValueError, match="rule is 'vlmevalkit-2023'"):
        metric.compute(predictions=[numbered], references=["0"], rule="vlmevalkit-2023", **rows)

@pytest.mark.parametrize("text, code", [
    ("Correct.", 1), ("incorrect", 0), ("Incorrect, though partly correct", 0), ("unclear", 2), ("", 2),
    ("uncorrect", 1), ("wrong", 2),
])
def test_judgments_read_as_the_authors_do(text, code):
    assert judge_code(text) == code


def test_judge_prompt_is_the_authors(metric):
    prompt = JUDGE_PROMPT.format(question="Q?", gt_answer_details="A.", prediction="P")
    assert prompt.startswith("Imagine you are an intelligent teacher. Thoroughly read the question, reference answer")
    assert prompt.endswith('please generate "unclear". \n\n Question:Q?\nReference answer: A.\nPrediction answer:P\nOutput:')


def test_unclear_counts_right_only_without_a_figure(metric):
    rows = dict(category=["VS", "VS"], subcategory=["map"] * 2, set_id=["0"] * 2, figure_id=["0", "1"],
                question_id=["0", "0"], visual_input=["0", "1"])
    result = metric.compute(predictions=["I am not sure", "I am not sure"], references=["1", "1"], **rows)
    assert result["aacc_rule"] == 0.5 and result["unparsed"] == 2 and result["facc_rule"] == 0.0


def test_bad_inputs_are_named(metric):
    rows = dict(category=["VD"] * 2, subcategory=["ocr"] * 2, set_id=["0"] * 2, figure_id=["0"] * 2,
                question_id=["0", "0"], visual_input=["1"] * 2)
    with pytest.raises(ValueError, match="rows 0 and 1 are the same question"):
        metric.compute(predictions=["Yes", "No"], references=["1", "0"], **rows)
    with pytest.raises(ValueError, match=r"references\[1\] is 'no'"):
        metric.compute(predictions=["Yes", "No"], references=["1", "no"], **{**rows, "question_id": ["0", "1"]})
    with pytest.raises(ValueError, match="pass the rows' visual_input"):
        metric.compute(predictions=["Yes"], references=["1"], **{k: v[:1] for k, v in rows.items() if k != "visual_input"})
    with pytest.raises(ValueError, match=r"judgments has 1 values for 2 predictions"):
        metric.compute(predictions=["Yes", "No"], references=["1", "0"], judgments=["correct"],
                       **{**rows, "question_id": ["0", "1"]})
