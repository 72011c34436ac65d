"""Scoring saved records through the packaged evaluate modules: counts, groups, per-item options."""
import math
import random

import pytest

from hallubench.benchmarks import get_task
from hallubench.benchmarks.cchall import metric_inputs
from hallubench.harness.scoring import parse_records, score_task
from hallubench.harness.uncertainty import STDERR

CHOICE = ("A. Non-hallucination\nB. Cross-modal, non-cross-lingual hallucination\n"
          "C. Cross-lingual, non-cross-modal hallucination\nD. Cross-modal, cross-lingual hallucination")


def _score(task, records, n_total):
    """Score records as a run folder holds them: parsed once by the task's parser (generation does the same)."""
    return score_task(task, parse_records(task, records), n_total=n_total)


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
    result = _score(get_task("cmm"), records, n_total=10)
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
    result = _score(get_task("cchall"), records, n_total=3)
    # 1 and 2 are right; 3's letter and text disagree, so it is unparsed (and wrong)
    assert result.metrics["accuracy"] == pytest.approx(2 / 3) and result.n_unparsed == 1
    assert result.groups["GQA"].metrics["accuracy"] == pytest.approx(1.0) and result.groups["AMBER"].n_unparsed == 1


def test_cross_run_tasks_are_counted_but_not_scored():
    records = [_record("1", "A red ball rolls.", None, None), _record("2", "   ", None, None)]
    result = _score(get_task("mhalubench"), records, n_total=2)
    assert (result.n_scored, result.n_unparsed) == (1, 1) and result.metrics == {} and "crosscheck" in result.scored_by


def _cmm_records(n, seed):
    rng = random.Random(seed)
    answers = ["Yes", "No.", "There is no dog.", "I know", "yes, a dog"]
    return [_record(f"{i:04d}", rng.choice(answers), rng.choice(["yes", "no"]),
                    [sub, f"{sub} / {gran}"])
            for i, (sub, gran) in enumerate((rng.choice(["visual-language", "audio-language"]),
                                             rng.choice(["object-level", "event-level"])) for _ in range(n))]


def test_every_fraction_metric_and_group_carries_a_stderr_close_to_the_binomial_one():
    result = _score(get_task("cmm"), _cmm_records(600, seed=3), n_total=600)
    for metrics, n in [(result.metrics, result.n_selected)] + [(g.metrics, g.n_selected) for g in result.groups.values()]:
        for name in ("pa", "hr", "accuracy", "yes_ratio"):
            assert metrics[f"{name}_stderr"] is not None and metrics[f"{name}_stderr"] > 0
        p = metrics["accuracy"]
        assert metrics["accuracy_stderr"] == pytest.approx(math.sqrt(p * (1 - p) / n), rel=0.2)
    assert len(result.groups) == 6 and "bootstrap" in result.stderr_method and "200 resamples" in result.stderr_method
    assert result.higher_is_better == {"pa": True, "hr": True, "accuracy": True, "yes_ratio": None}
    assert result.version == get_task("cmm").version == 3


def test_stderr_is_the_same_on_a_rescore_and_shrinks_with_more_items():
    task = get_task("cmm")
    small = _score(task, _cmm_records(100, seed=5), n_total=100)
    assert _score(task, _cmm_records(100, seed=5), n_total=100) == small
    large = _score(task, _cmm_records(1600, seed=5), n_total=1600)
    assert large.metrics["accuracy_stderr"] < small.metrics["accuracy_stderr"] / 2


def test_cchall_reports_stderr_for_accuracy_and_macro_f1_and_their_direction():
    inputs = metric_inputs({"choice": CHOICE})
    texts = ["Final Answer: A", "Final Answer: B", "Final Answer: D", "no idea"]
    labels = ["Non-hallucination", "Cross-modal, non-cross-lingual hallucination",
              "Cross-modal, cross-lingual hallucination"]
    rng = random.Random(0)
    records = [_record(str(i), rng.choice(texts), rng.choice(labels), "GQA", inputs=inputs) for i in range(60)]
    result = _score(get_task("cchall_cot"), records, n_total=60)
    assert result.metrics["accuracy_stderr"] > 0 and result.metrics["macro_f1_stderr"] > 0
    assert result.groups["GQA"].metrics["macro_f1_stderr"] > 0
    assert result.higher_is_better == {"accuracy": True, "macro_f1": True, "weighted_f1": True, "accuracy_avg": True,
                                      "macro_f1_avg": True} and result.version == 3
    assert result.metrics["accuracy_avg"] == result.metrics["accuracy"]  # one source: its AVG is the pooled value


def test_only_declared_fractions_are_fractions():
    """`unparsed` and `n` are counts: a value of 0 or 1 gets no standard error, nor does a share the metric does
    not declare a fraction; an undefined fraction (None) is left out."""
    from hallubench.harness.uncertainty import fractions

    values = {"pa": 0.5, "hr": 1.0, "yes_ratio": None, "other": 0.3, "unparsed": 1, "n": 0, "unparsed_indices": [2]}
    assert fractions(values, ("pa", "hr", "yes_ratio", "accuracy")) == {"pa": 0.5, "hr": 1.0}


def _straightforward_stderr(task, records):
    """The bootstrap recomputed the plain way: the metric's whole `_compute` (checks, parsing) on each resample of
    the raw per-item inputs, drawn as harness/uncertainty.py draws them; {(group or None, metric): stderr}."""
    import numpy as np

    from hallubench.harness.scoring import _per_item_kwargs, group_names, load_metric
    from hallubench.harness.uncertainty import RESAMPLES, SEED, fractions

    ok = sorted(records, key=lambda r: str(r["id"]))
    per_item = _per_item_kwargs(task, ok)
    blocks = {}
    for i, record in enumerate(ok):
        blocks.setdefault(tuple(group_names(record)), []).append(i)
    rng, samples = np.random.default_rng(SEED), {}
    for _ in range(RESAMPLES):
        picks = np.concatenate([np.asarray(b)[rng.integers(0, len(b), len(b))] for b in blocks.values()])
        resampled = {name: {c: [v[i] for i in picks] for c, v in values.items()} if isinstance(values, dict)
                     else [values[i] for i in picks] for name, values in per_item.items()}
        metric = load_metric(task.metric)
        out = metric._compute(**resampled, **task.metric_args)
        tables = [(None, out)] + [(g, v) for breakdown in out["by_group"].values() for g, v in breakdown.items()]
        for group, values in tables:
            for name, value in fractions(values, metric.fractions).items():
                samples.setdefault((group, name), []).append(value)
    return {key: float(np.std(values, ddof=1)) for key, values in samples.items()}


def _cchall_records(n, seed):
    """Items with shuffled options, outputs by letter, by type text, disagreeing and unreadable, in four sources."""
    from hallubench.metrics.cchall.cchall import LABELS

    rng = random.Random(seed)
    records = []
    for i in range(n):
        options = rng.sample(LABELS, 4)
        meant = rng.choice(LABELS)
        letter = "ABCD"[options.index(meant)]
        output = rng.choice([f"Final Answer: {letter}", f"**Final Answer: {letter}. {meant}.**", f"Final Answer: {meant}",
                             f"Final Answer: {letter}. {rng.choice(LABELS)}", "I cannot tell."])
        choice = "\n".join(f"{x}. {o}" for x, o in zip("ABCD", options))
        records.append(_record(f"{i:04d}", output, rng.choice(LABELS), rng.choice(["AMBER", "GQA", "XM3600", "xFlickrCO"]),
                               inputs=metric_inputs({"choice": choice})))
    return records


@pytest.mark.parametrize("task_name, make", [("cchall", _cchall_records), ("cmm", _cmm_records)])
def test_stderr_is_exactly_that_of_recomputing_the_metric_on_each_raw_resample(task_name, make):
    """Metrics that parse once (`_prepare`) and resample arrays must report the very same stderr, bit for bit."""
    task, records = get_task(task_name), make(300, 11)
    result = _score(task, records, n_total=300)
    expected = _straightforward_stderr(task, records)
    tables = [(None, result.metrics)] + [(group, g.metrics) for group, g in result.groups.items()]
    got = {(group, name.removesuffix(STDERR)): v for group, metrics in tables for name, v in metrics.items()
           if name.endswith(STDERR)}
    assert got == expected and len(got) >= 10 and all(v > 0 for v in got.values())


def test_rows_without_media_are_counted_apart_and_unreadable_answers_are_flagged():
    removed = {"type": "media", "class": "MediumRemovedError", "message": "--modality visual-only removes the audio"}
    records = [
        _record("1", "Yes.", "yes", "visual-language"),
        _record("2", "I cannot tell.", "no", "visual-language"),
        _record("3", "Yes.", "yes", "visual-language"),
        _record("4", "Yes.", "yes", "visual-language"),
        _record("5", "Yes.", "yes", "visual-language"),
        _record("6", None, "no", "audio-language", error=removed),
        _record("7", None, "yes", "audio-language", error=removed),
    ]
    result = _score(get_task("cmm"), records, n_total=7)
    # the audio probes are neither errors nor in the headline: pa over the 4 visual "yes" probes only
    assert (result.n_selected, result.n_errors, result.n_without_media, result.n_scored) == (7, 0, 2, 4)
    assert result.metrics["pa"] == pytest.approx(1.0) and result.metrics["hr"] == pytest.approx(0.0)
    assert (result.n_unreadable, result.unreadable_share, result.mostly_unreadable) == (1, 0.2, False)  # 20 %: not more
    audio = result.groups["audio-language"]
    assert (audio.n_without_media, audio.n_errors, audio.unreadable_share, audio.metrics) == (2, 0, None, {})
    records[0]["outputs"] = ["maybe"]
    result = _score(get_task("cmm"), records, n_total=7)
    assert (result.n_unreadable, result.unreadable_share, result.mostly_unreadable) == (2, 0.4, True)


# Readings of every shape a task's parser gives (a word, a code, per-claim lists, SAC3's summary), and verdicts.
PARSES = [None, "yes", "no", 0, 1, 2, ["yes", None], {"unparseable_judgments": 0}, {"unparseable_judgments": 2}]
VERDICTS = [None, ("correct", "yes"), ("wrong", "no"), ("unreadable", None), ("correct", None)]


def test_every_sample_counts_once_in_scored_unreadable_or_errors_for_every_registered_task():
    """n = scored + unreadable + errors (+ without media), overall and per group, for every registered task (walked
    from the registry), whatever its records' readings and verdicts; the record's `counted` is the column it is in."""
    from hallubench.benchmarks import all_tasks
    from hallubench.harness.report import nothing_scored
    from hallubench.harness.results_schema import GroupResult
    from hallubench.harness.scoring import count, counted_as

    rng = random.Random(40)
    for name, task in sorted(all_tasks().items()):
        def readable(parsed, task=task):
            try:
                return task.unreadable is None or isinstance(task.unreadable(parsed), bool)
            except (TypeError, KeyError, AttributeError, IndexError):
                return False
        parses = [parsed for parsed in PARSES if parsed is None or readable(parsed)]
        records, verdicts = [], {}
        for i in range(rng.randint(0, 12)):
            error = rng.choice([None, None, None, {"class": "GenerationError"}, {"class": "MediumRemovedError"}])
            records.append({"key": f"k{i}", "task": name, "id": f"i{i}", "error": error, "parsed": rng.choice(parses),
                            "group": rng.choice([None, "a", ["a", "b"]])})
            given = rng.choice(VERDICTS)
            if error is None and given is not None:
                verdicts[f"i{i}"] = {"verdict": given[0], "reading": given[1]}
        result = GroupResult()
        count(task, records, result, verdicts)
        columns = [counted_as(task, r, verdicts) for r in records]
        assert (result.n_scored, result.n_unreadable, result.n_errors, result.n_without_media) == tuple(
            columns.count(column) for column in ("scored", "unreadable", "error", "without media")), name
        assert result.n_scored + result.n_unreadable + result.n_errors + result.n_without_media == \
            result.n_selected == len(records), name
        assert result.n_unparsed <= result.n_unreadable, name
        assert result.not_scored == nothing_scored(result) and (result.not_scored is None) == (result.n_scored > 0)
        for record, column in zip(records, columns):
            unread = (record["parsed"] is None if record["id"] not in verdicts
                      else verdicts[record["id"]]["reading"] is None)
            if record["error"] is None:
                partly = task.unreadable is not None and record["parsed"] is not None and task.unreadable(record["parsed"])
                assert (column == "unreadable") == (unread or partly), name


def test_where_no_pope_answer_is_read_its_confusion_counts_are_null_with_its_scores():
    """POPE's rule reads an answer without a no-word as "yes", so unread answers would still fill tp and fp: where
    nothing was scored those counts are outcomes of nothing (the metric's `outcome_counts`), null with the scores."""
    records = [_record(str(i), "I cannot tell.", reference, "adversarial") for i, reference in
               enumerate(["yes", "no", "yes", "no"])]
    result = _score(get_task("pope"), records, n_total=4)
    assert result.not_scored == "0 of 4 scored: 4 unreadable"
    assert {result.metrics[name] for name in ("accuracy", "tp", "fp", "tn", "fn")} == {None}
    read = _score(get_task("pope"), [*records, _record("9", "No.", "no", "adversarial")], n_total=5)
    assert read.n_scored == 1 and read.metrics["tp"] == 2 and read.metrics["fp"] == 2  # the authors' rule, as before
