"""The contract between a metric and the harness (ARCHITECTURE.md, "The metric contract"), checked on every metric in
the METRICS registry from what the metric itself declares: `fractions`, `higher_is_better`, `example_inputs` and
`item_verdicts` (with `verdict_shares`). A new metric folder is covered without editing this file."""
from __future__ import annotations

import copy
import inspect
import json
import random

import numpy as np
import pytest

from hallubench.benchmarks import all_tasks
from hallubench.harness.scoring import load_metric
from hallubench.harness.uncertainty import bootstrap_stderr
from hallubench.registry import METRICS

SIZES = (1, 7, 40)
SEEDS = (0, 1, 2)


def _plain(value):
    """A metric output as comparable text (numpy values as lists, NaN as text)."""
    return json.dumps(value, sort_keys=True, default=lambda v: v.tolist() if hasattr(v, "tolist") else repr(v))


def _is_fraction(value) -> bool:
    return value is None or (isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
                             and 0.0 <= float(value) <= 1.0)


def _inputs(metric, seed: int, size: int) -> dict:
    return metric.example_inputs(random.Random(seed), size)


@pytest.fixture(scope="module", params=sorted(METRICS))
def metric(request):
    return load_metric(request.param)


def test_declarations(metric):
    """Every metric says which outputs are fractions and which way each is better, and gives example inputs."""
    assert isinstance(metric.fractions, tuple) and all(isinstance(name, str) for name in metric.fractions)
    assert isinstance(metric.higher_is_better, dict)
    assert set(metric.fractions) <= set(metric.higher_is_better), "every fraction needs a direction"
    assert all(better in (True, False, None) for better in metric.higher_is_better.values())
    assert callable(metric.example_inputs)
    assert metric.item_verdicts is None or callable(metric.item_verdicts)
    if metric.item_verdicts is not None:
        assert isinstance(metric.verdict_shares, dict)
        assert all(name in metric.fractions and (label is None or isinstance(label, str))
                   for name, label in metric.verdict_shares.items()), "a verdict share is a declared fraction"


VERDICTS = ("correct", "wrong", "unreadable")


def _check_verdicts(verdicts, out, shares, references, where=""):
    """`verdicts` (one per item, or None for an item without one) re-aggregate to `out`: `n`, `unparsed` (the items
    the rule read nothing in) and each declared share of "correct" verdicts (over the items with its reference)."""
    assert out["n"] == len(verdicts), where
    given = [v for v in verdicts if v is not None]
    for verdict, reading in given:
        assert verdict in VERDICTS and (reading is None or isinstance(reading, str)), (where, verdict, reading)
        assert verdict != "unreadable" or reading is None, f"{where}: an unreadable verdict with reading {reading!r}"
    if given:
        assert out["unparsed"] == sum(reading is None for _, reading in given), where
    for name, label in shares.items():
        if name not in out:
            continue
        members = [v[0] for v, ref in zip(verdicts, references) if v is not None
                   and (label is None or str(ref).strip().lower() == label)]
        if not members:
            assert out[name] in (None, 0.0), f"{where}{name}: no item to count it over, yet {out[name]!r}"
            continue
        assert out[name] == members.count("correct") / len(members), f"{where}{name}"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("size", SIZES)
def test_item_verdicts_reaggregate_to_the_outputs(metric, seed, size):
    """Per-item verdicts, under the rule `_compute` uses, re-aggregate to its outputs exactly: n, unparsed and each
    share of correct answers, overall and per group; a metric without them says so with `item_verdicts = None`."""
    if metric.item_verdicts is None:
        return
    inputs = _inputs(metric, seed, size)
    verdicts = metric.item_verdicts(**inputs)
    references = inputs.get("references", [None] * len(verdicts))
    _check_verdicts(verdicts, metric._compute(**inputs), metric.verdict_shares, references)
    if "groups" in inspect.signature(metric._compute).parameters:
        column = [random.Random(seed).choice("xy") for _ in verdicts]
        out = metric._compute(**inputs, groups={"letter": column})
        for value, scores in out["by_group"]["letter"].items():
            idx = [i for i, v in enumerate(column) if v == value]
            _check_verdicts([verdicts[i] for i in idx], scores, metric.verdict_shares, [references[i] for i in idx],
                            f"group {value}: ")


def test_the_verdict_check_catches_a_verdict_the_outputs_disagree_with():
    """A planted disagreement (one answer's verdict flipped, one reading dropped) fails the check."""
    metric = load_metric("pa_hr")
    inputs = {"predictions": ["Yes.", "no", "There is no dog.", ""], "references": ["yes", "no", "no", "yes"]}
    verdicts, out = metric.item_verdicts(**inputs), metric._compute(**inputs)
    _check_verdicts(verdicts, out, metric.verdict_shares, inputs["references"])
    for planted in ([("wrong", "yes"), *verdicts[1:]], [*verdicts[:3], ("wrong", "yes")]):
        with pytest.raises(AssertionError):
            _check_verdicts(planted, out, metric.verdict_shares, inputs["references"])


def test_item_verdicts_under_each_tasks_metric_args():
    """The same under every task's metric args (CMM's mode=official, AMBER's mode...): the verdicts follow the
    rule the task's headline uses."""
    for name, task in all_tasks().items():
        if task.metric is None or load_metric(task.metric).item_verdicts is None or task.summarize is not None:
            continue
        metric = load_metric(task.metric)
        for seed in SEEDS:
            inputs = _inputs(metric, seed, 30)
            verdicts = metric.item_verdicts(**inputs, **task.metric_args)
            _check_verdicts(verdicts, metric._compute(**inputs, **task.metric_args), metric.verdict_shares,
                            inputs.get("references", [None] * len(verdicts)), f"{name} seed {seed}: ")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("size", SIZES)
def test_outputs(metric, seed, size):
    """`n` and `unparsed` are counts of the items given; every declared fraction present is in [0, 1] or None."""
    inputs = _inputs(metric, seed, size)
    out = metric._compute(**inputs)
    items = len(next(iter(inputs.values())))
    assert out["n"] == items
    assert isinstance(out["unparsed"], int) and 0 <= out["unparsed"] <= items
    for name in metric.fractions:
        assert _is_fraction(out.get(name)), f"{name} = {out.get(name)!r} is declared a fraction"


@pytest.mark.parametrize("seed", SEEDS)
def test_compute_is_pure(metric, seed):
    """`_compute` (which the bootstrap calls 200 times) gives the same output twice and leaves its inputs alone;
    a metric split into `_prepare` and `_compute_prepared` gives the same output through them."""
    inputs = _inputs(metric, seed, 20)
    kept = copy.deepcopy(inputs)
    first = _plain(metric._compute(**inputs))
    assert _plain(inputs) == _plain(kept), "_compute changed its inputs"
    assert _plain(metric._compute(**inputs)) == first
    if hasattr(metric, "_prepare"):
        prepared, fixed = metric._prepare(**inputs)
        assert _plain(metric._compute_prepared(**prepared, **fixed)) == first


@pytest.mark.parametrize("seed", SEEDS)
def test_groups(metric, seed):
    """A metric that takes `groups` returns `by_group[column][value]` for each group value, with that group's `n`,
    `unparsed` and declared fractions; one that does not take them returns no breakdown."""
    rng = random.Random(seed)
    inputs = _inputs(metric, seed, 30)
    items = len(next(iter(inputs.values())))
    if "groups" not in inspect.signature(metric._compute).parameters:
        assert not metric._compute(**inputs).get("by_group")
        return
    column = [rng.choice("xyz") for _ in range(items)]
    out = metric._compute(**inputs, groups={"letter": column})
    breakdown = out["by_group"]["letter"]
    assert set(breakdown) == set(column)
    for value, scores in breakdown.items():
        assert scores["n"] == column.count(value)
        assert 0 <= scores["unparsed"] <= scores["n"]
        for name in metric.fractions:
            assert _is_fraction(scores.get(name)), f"by_group {value}: {name} = {scores.get(name)!r}"
    assert sum(scores["unparsed"] for scores in breakdown.values()) == out["unparsed"]


def test_tasks_agree_with_their_metric():
    """A task's `higher_is_better` (read by builders and publish) never contradicts its metric's; a task that
    summarizes the metric's output declares the summary's fractions, in [0, 1] on the metric's example inputs."""
    for name, task in all_tasks().items():
        if task.metric is None:
            continue
        metric = load_metric(task.metric)
        for value, better in task.higher_is_better.items():
            assert metric.higher_is_better.get(value, better) == better, f"{name}: {value}"
        if task.summarize is None:
            assert not task.fractions, f"{name}: fractions are the metric's unless the task summarizes"
            continue
        summary = task.summarize(metric._compute(**_inputs(metric, 0, 20), **task.metric_args))
        for value in task.fractions:
            assert _is_fraction(summary.get(value)), f"{name}: {value} = {summary.get(value)!r}"


def test_bootstrap_takes_only_declared_fractions():
    """The bootstrap reads the declaration: a value in [0, 1] not declared gets no stderr, a declared one does."""
    def compute(flags):
        share = sum(flags) / len(flags)
        return {"share": share, "count_share": share, "n": len(flags)}

    flags = [True, False, True, True, False, False, True, False]
    stderr, _ = bootstrap_stderr(compute, {"flags": flags}, {}, [0] * len(flags), compute(flags), ("share",))
    assert set(stderr) == {"share"} and stderr["share"] > 0


UNDECLARED = '''import datasets
import evaluate


class Undeclared(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(description="", citation="", inputs_description="",
                                   features=datasets.Features({"predictions": datasets.Value("string")}))

    def _compute(self, predictions):
        return {"n": len(predictions), "unparsed": 0}
'''


def test_the_harness_refuses_a_metric_without_the_declarations(tmp_path, monkeypatch):
    script = tmp_path / "undeclared" / "undeclared.py"
    script.parent.mkdir()
    script.write_text(UNDECLARED)
    monkeypatch.setitem(METRICS, "undeclared", script)
    with pytest.raises(TypeError, match="declares no fractions, higher_is_better, example_inputs.*metric contract"):
        load_metric("undeclared")
