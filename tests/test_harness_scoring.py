"""Scoring saved records through the packaged evaluate modules: counts, groups, per-item options."""
import pytest

from hallubench.benchmarks import get_task
from hallubench.benchmarks.cchall import metric_inputs
from hallubench.harness.scoring import score_task

CHOICE = ("A. Non-hallucination\nB. Cross-modal, non-cross-lingual hallucination\n"
          "C. Cross-lingual, non-cross-modal hallucination\nD. Cross-modal, cross-lingual hallucination")


def _record(sid, output, reference, group, error=None, inputs=None):
    return {"task": "t", "id": sid, "outputs": [] if error else [output], "reference": reference, "group": group,
            "error": error, "metric_inputs": inputs, "generation": {"temperature": 0.2}}


def test_cmm_counts_errors_and_unparsed_and_breaks_down_by_sub_category():
    records = [
        _record("1", "Yes, there is.", "yes", "visual-language"),
        _record("2", "No.", "yes", "visual-language"),
        _record("3", "no", "no", "audio-language"),
        _record("4", "I cannot tell.", "no", "audio-language"),
        _record("5", None, "yes", "audio-language", error={"type": "media", "message": "gone"}),
    ]
    result = score_task(get_task("cmm"), records, n_total=10)
    assert (result.n_total, result.n_selected, result.n_errors, result.n_unparsed, result.n_scored) == (10, 5, 1, 1, 3)
    # pa over "yes" references (1 right of 2), hr over "no" references (1 right of 2, unparsed counts as wrong)
    assert result.metrics["pa"] == pytest.approx(0.5) and result.metrics["hr"] == pytest.approx(0.5)
    audio = result.groups["audio-language"]
    assert (audio.n_selected, audio.n_errors, audio.n_unparsed, audio.n_scored) == (3, 1, 1, 1)
    assert audio.metrics["hr"] == pytest.approx(0.5) and result.groups["visual-language"].metrics["pa"] == pytest.approx(0.5)
    assert result.generation == {"temperature": 0.2}


def test_cchall_reads_option_letters_through_each_items_choice():
    inputs = metric_inputs({"choice": CHOICE})
    records = [
        _record("1", "Both agree with the image. Final Answer: A. Non-hallucination.", "Non-hallucination", "GQA", inputs=inputs),
        _record("2", "**Final Answer: D**", "Cross-modal, cross-lingual hallucination", "GQA", inputs=inputs),
        _record("3", "Final Answer: B. Cross-lingual, non-cross-modal hallucination", "Non-hallucination", "AMBER", inputs=inputs),
    ]
    result = score_task(get_task("cchall"), records, n_total=3)
    # 1 and 2 are right; 3's letter and text disagree, so it is unparsed (and wrong)
    assert result.metrics["accuracy"] == pytest.approx(2 / 3) and result.n_unparsed == 1
    assert result.groups["GQA"].metrics["accuracy"] == pytest.approx(1.0) and result.groups["AMBER"].n_unparsed == 1


def test_cross_run_tasks_are_counted_but_not_scored():
    records = [_record("1", "A red ball rolls.", None, None), _record("2", "   ", None, None)]
    result = score_task(get_task("mhalubench"), records, n_total=2)
    assert (result.n_scored, result.n_unparsed) == (1, 1) and result.metrics == {} and "crosscheck" in result.scored_by
