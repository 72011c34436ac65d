"""Score saved outputs with the packaged evaluate modules (loaded from their folders by path, offline).

Works from sample records alone, so `--from-outputs` re-scores a run folder without the model. The
metric gets the raw outputs of the samples without errors and reads them by its rule (task args applied);
each answer's verdict under that rule (`item_verdicts`, the metric contract) goes into results.json's
`verdicts`, and the unparsed, scored and unreadable counts, per task and per group, are the verdicts' (the
task parser's reading, the record's `parsed`, where the metric gives no verdict). Every fraction the metric declares (`fractions`; a task that `summarize`s declares its
summary's) gets `<name>_stderr` beside it (harness/uncertainty.py says how), and each task its version and each
metric's direction (`higher_is_better`: the metric's declaration, and the task's for what its summary adds). A multi-step task may feed its
metric other per-item arguments than the outputs (`Task.score_inputs`, e.g. SAC3's judge strings) and report a
summary of its output (`Task.summarize`); the metric args are the task's with the run's `--task-args` applied.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from hallubench.benchmarks import get_parser
from hallubench.benchmarks.task import Task
from hallubench.harness import store
from hallubench.harness.answer_probs import summarize as summarize_answer_probs
from hallubench.harness.plan import task_arguments
from hallubench.harness.report import nothing_scored
from hallubench.harness.results_schema import MOSTLY_UNREADABLE, GroupResult, TaskResult
from hallubench.harness.uncertainty import METHOD, STDERR, bootstrap_stderr
from hallubench.registry import METRICS

# What every metric class declares for the harness (ARCHITECTURE.md, "The metric contract").
CONTRACT = ("fractions", "higher_is_better", "example_inputs", "item_verdicts")
ERROR = {"verdict": "error", "reading": None}  # a record with a model/media error: not scored
# Per-item bookkeeping in metric outputs that results.json reports in its own fields.
_NOT_METRICS = ("by_group", "unparsed", "unparsed_indices", "n")


@lru_cache(maxsize=None)
def load_metric(name: str):
    """The evaluate module of packaged metric `name`, loaded from its folder by path. Its inputs stay in memory:
    scoring runs in one process, and evaluate's default Arrow cache file is locked per metric name, so concurrent
    runs scoring the same metric would wait on each other's lock (up to a second a computation)."""
    from hallubench.metrics.install import load

    metric = load(name, METRICS.lookup(name), keep_in_memory=True)  # its cached copy checked, a full disk named
    missing = [attribute for attribute in CONTRACT if not hasattr(metric, attribute)]
    if missing:
        raise TypeError(f"metric {name!r} ({METRICS.lookup(name)}) declares no {', '.join(missing)}: every metric "
                        "declares them (ARCHITECTURE.md, \"The metric contract\"; tests/test_metric_contract.py)")
    return metric


def _plain(value: Any) -> Any:
    """Metric outputs as JSON types (numpy scalars and arrays become floats and lists)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value.tolist() if hasattr(value, "tolist") else value


def parse_record(task: Task, record: dict[str, Any]) -> Any:
    """The task parser's reading of a record without error: of its answer text (with the task's metric_inputs),
    or, for a multi-step task, of the whole record (its steps)."""
    parse = get_parser(task.parser)
    if task.program is not None:
        return parse(record)
    return parse(record["outputs"][0], **(record.get("metric_inputs") or {}))


def parse_records(task: Task, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`records` with `parsed` set again from their stored outputs by the task's parser (for re-scoring, where
    the parser may have changed since generation); generation stores the same reading the first time."""
    return [{**r, "parsed": parse_record(task, r)} if r.get("error") is None else r for r in records]


def without_media(record: dict[str, Any]) -> bool:
    """Whether the record is a row left out because the run's --modality removes the medium it is asked about."""
    return (record.get("error") or {}).get("class") == "MediumRemovedError"


def unread_by_rule(record: dict[str, Any], verdicts: dict[str, dict[str, Any]]) -> bool:
    """Whether the rule behind the score read nothing in an answered record: its verdict's reading is null, or,
    where the metric gives no verdict for it, the task's parser read nothing."""
    verdict = verdicts.get(str(record["id"]))
    return record.get("parsed") is None if verdict is None else verdict["reading"] is None


# How the counts take each record (a record's `verdict.counted`): exactly one of these, so that
# n_scored + n_unreadable + n_errors + n_without_media = n_selected.
SCORED, UNREADABLE, ERRORED, WITHOUT_MEDIA = "scored", "unreadable", "error", "without media"


def counted_as(task: Task, record: dict[str, Any], verdicts: dict[str, dict[str, Any]]) -> str:
    """How the counts take `record`: "without media" (a row --modality leaves out), "error" (a model or media
    error), "unreadable" (answered, but the rule behind the score read nothing in it, or, for a task that says so
    (`Task.unreadable`, e.g. SAC3's unread judge strings), read it only in part), else "scored"."""
    if without_media(record):
        return WITHOUT_MEDIA
    if record.get("error") is not None:
        return ERRORED
    parsed = record.get("parsed")
    if unread_by_rule(record, verdicts) or (task.unreadable is not None and parsed is not None and task.unreadable(parsed)):
        return UNREADABLE
    return SCORED


def count(task: Task, records: list[dict[str, Any]], into: GroupResult, verdicts: dict[str, dict[str, Any]]) -> None:
    """Fill the counts of `into` from the records' verdicts (the stored parses where there are none)."""
    taken = Counter(counted_as(task, r, verdicts) for r in records)
    answered = [r for r in records if r.get("error") is None]
    into.n_selected, into.n_without_media, into.n_errors = len(records), taken[WITHOUT_MEDIA], taken[ERRORED]
    into.n_unparsed = sum(unread_by_rule(r, verdicts) for r in answered)
    into.n_scored, into.n_unreadable = taken[SCORED], taken[UNREADABLE]
    into.unreadable_share = into.n_unreadable / len(answered) if answered else None
    into.mostly_unreadable = bool(answered) and into.unreadable_share > MOSTLY_UNREADABLE
    into.not_scored = nothing_scored(into)


def record_verdict(task: Task, record: dict[str, Any], verdicts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A sample record's `verdict`: how the score took it. `verdict` and `reading` are results.json's verdict of
    it (null where the metric gives none), `counted` how the counts took it (`counted_as`)."""
    given = verdicts.get(str(record["id"])) or {"verdict": None, "reading": None}
    return {"verdict": given["verdict"], "reading": given["reading"], "counted": counted_as(task, record, verdicts)}


def with_verdicts(tasks: list[Task], scored: Iterable[dict[str, Any]], held: dict[str, dict[str, Any]],
                  results: dict[str, TaskResult]) -> dict[str, dict[str, Any]]:
    """The records `held` (by key, as the run folder holds them), each with the `verdict` (`record_verdict`) its
    task's result in `results` gave it, as `scored` (the same records with the parse scoring read) were scored."""
    by_name = {task.name: task for task in tasks}
    return {r["key"]: {**held[r["key"]], "verdict": record_verdict(by_name[r["task"]], r, results[r["task"]].verdicts)}
            for r in scored}


def store_verdicts(run_dir: Path, tasks: list[Task], scored: Iterable[dict[str, Any]], held: dict[str, dict[str, Any]],
                   results: dict[str, TaskResult]) -> None:
    """Write each record's verdict (`with_verdicts`) into the run folder's samples.jsonl in one atomic write, before
    results.json: the records digest leaves verdicts out (harness/digest.py), so the folder stays readable between."""
    store.merge(run_dir, replace=with_verdicts(tasks, scored, held, results))


def group_names(record: dict[str, Any]) -> list[str]:
    """The groups a record counts in: one per breakdown (a task's `group` may give one name or several)."""
    group = record.get("group")
    return [] if group is None else [group] if isinstance(group, str) else list(group)


def _per_item_kwargs(task: Task, ok: list[dict[str, Any]]) -> dict[str, Any]:
    """The metric arguments with one value per scored item (`groups` a dict of such lists)."""
    kwargs: dict[str, Any] = {} if task.score_inputs else \
        {"predictions": [r["outputs"][0] for r in ok], "references": [r["reference"] for r in ok]}
    if task.group is not None:
        names = [group_names(r) for r in ok]
        kwargs["groups"] = {str(level): [n[level] for n in names] for level in range(len(names[0]))}
    inputs = [task.score_inputs(record) if task.score_inputs else record.get("metric_inputs") or {} for record in ok]
    per_item = {name: [given.get(name) for given in inputs] for name in dict.fromkeys(k for given in inputs for k in given)}
    # An argument some items lack (None, or absent in records written before the task gave it) is left out for
    # all: the metric then uses its fallback.
    kwargs.update({name: values for name, values in per_item.items() if None not in values})
    return kwargs


def _pure_computation(metric, per_item: dict[str, Any], metric_args: dict[str, Any]):
    """What the bootstrap recomputes: (function, its per-item arguments, the rest). The metric's pure `_compute`
    (`compute` would round-trip every resample through Arrow), or, where the metric splits it into `_prepare`
    (check and parse the items once) and `_compute_prepared`, the latter on the prepared per-item arrays."""
    if hasattr(metric, "_prepare"):
        prepared, fixed = metric._prepare(**per_item, **metric_args)
        return metric._compute_prepared, prepared, fixed
    return metric._compute, per_item, metric_args


def _values(output: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in _plain(output).items() if k not in _NOT_METRICS}


def metric_records(task: Task, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records the metric takes: those without error, and where the task feeds the metric parsed inputs
    (`score_inputs`), only those its parser could read (the rest are counted unparsed)."""
    ok = [r for r in records if r.get("error") is None]
    return [r for r in ok if r.get("parsed") is not None] if task.score_inputs is not None else ok


def task_verdicts(task: Task, records: list[dict[str, Any]], task_args: dict[str, Any] | None = None
                  ) -> dict[str, dict[str, Any]]:
    """The `verdicts` scoring gives `records` (parsed) of `task` under the run's `task_args`."""
    ok, metric_args = metric_records(task, records), task_arguments(task, task_args or {})[1]
    metric = load_metric(task.metric) if task.metric is not None and ok else None
    if metric is None or metric.item_verdicts is None:
        return {}
    return record_verdicts(records, ok, metric.item_verdicts(**_per_item_kwargs(task, ok), **metric_args))


# A number in a group name ("x10", "4.5"), signed where the "-" follows no letter or digit ("audio_snr=-10", not
# "a-1"), and "inf" standing alone.
_NUMBER = re.compile(r"((?:(?<![A-Za-z0-9.])-)?(?<![0-9.])\d+(?:\.\d+)?|(?:(?<![A-Za-z0-9.])-)?(?<![A-Za-z])inf(?![A-Za-z]))")


def natural_key(name: str) -> tuple:
    """Sort key ordering the numbers in group names by value (video_blur=0, 4, 16; audio_snr=-10, 20, inf), the
    rest as text (natsort's rule; not worth a dependency for one key). The split alternates text and number, so
    two keys compare text with text and number with number."""
    return tuple(float(part) if index % 2 else part for index, part in enumerate(_NUMBER.split(name)))


def score_task(task: Task, records: list[dict[str, Any]], n_total: int,
               task_args: dict[str, Any] | None = None) -> TaskResult:
    """TaskResult of `task` from its sample records, with per-group counts and metrics; `task_args` are the run's
    `--task-args` (the metric args among them replace the task's)."""
    records = sorted(records, key=lambda r: str(r["id"]))
    program_args, metric_args = task_arguments(task, task_args or {})
    result = TaskResult(task=task.name, benchmark=task.benchmark, config=task.config, split=task.split,
                        source=task.source, parser=task.parser, metric=task.metric, scored_by=task.scored_by,
                        n_total=n_total, version=task.version, task_args={**program_args, **metric_args})
    if records:
        result.generation = records[0]["generation"]
        result.sample_generation = records[0].get("sample_generation")
    ok = metric_records(task, records)
    result.verdicts = task_verdicts(task, records, task_args)
    count(task, records, result, result.verdicts)
    result.answer_probs = summarize_answer_probs(records)
    by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if task.group is not None:
        for record in records:
            for name in group_names(record):
                by_group[name].append(record)
        for name in sorted(by_group, key=natural_key):
            result.groups[name] = GroupResult()
            count(task, by_group[name], result.groups[name], result.verdicts)
    if task.metric is not None and ok:
        metric, per_item = load_metric(task.metric), _per_item_kwargs(task, ok)
        summarize = task.summarize or (lambda out: out)
        output = summarize(metric.compute(**per_item, **metric_args))
        compute, resampled, fixed = _pure_computation(metric, per_item, metric_args)
        declared = task.fractions if task.summarize else metric.fractions
        stderr, group_stderr = bootstrap_stderr(lambda **kwargs: summarize(compute(**kwargs)), resampled, fixed,
                                                [tuple(group_names(r)) for r in ok], output, declared,
                                                progress=f"stderr of {task.name}")
        result.metrics = _with_stderr(_values(output), stderr)
        for breakdown in output.get("by_group", {}).values():
            for name, values in breakdown.items():
                result.groups[name].metrics = _with_stderr(_values(values), group_stderr[name])
        result.stderr_method = METHOD
        directions = {**metric.higher_is_better, **task.higher_is_better}
        result.higher_is_better = {name: directions.get(name) for name in result.metrics
                                   if not name.endswith(STDERR) and name in (*declared, *directions)}
    outcomes = getattr(load_metric(task.metric), "outcome_counts", ()) if task.metric is not None else ()
    for scored in (result, *result.groups.values()):  # no score where no answer was scored: null, and why
        if scored.not_scored is not None:
            scored.metrics = {name: value if is_count(value) and name not in outcomes else None
                              for name, value in scored.metrics.items()}
    return result


def is_count(value: Any) -> bool:
    """Whether a metric output is a count (an int, such as SAC3's `num_unparseable`), which stays where nothing was
    scored unless the metric names it among its `outcome_counts` (POPE's tp/fp/tn/fn: counted from readings of
    answers reported unreadable); every other output (a score, its stderr, a table of scores) is then null."""
    return isinstance(value, int) and not isinstance(value, bool)


def record_verdicts(records: list[dict[str, Any]], scored: list[dict[str, Any]],
                    given: list[tuple[str, str | None] | None] | None) -> dict[str, dict[str, Any]]:
    """results.json's `verdicts` of a task: per sample id, how the headline counted it. `given` is the metric's
    `item_verdicts` of the `scored` records (None for an item it gives no verdict, e.g. an AMBER description), or
    None when the metric gives none at all (then `{}`). A record with an error is "error"; an answered one the
    metric did not take (its task's parser read nothing, where the task feeds the metric parsed inputs) is
    "unreadable"."""
    if given is None:
        return {}
    repeated = sorted(i for i, n in Counter(str(record["id"]) for record in records).items() if n > 1)
    if repeated:
        raise ValueError(f"sample ids {repeated[:5]} repeat within one task: verdicts are kept per sample id")
    counted = {str(record["id"]): verdict for record, verdict in zip(scored, given)}
    verdicts: dict[str, dict[str, Any]] = {}
    for record in records:
        key = str(record["id"])
        if record.get("error") is not None:
            verdicts[key] = dict(ERROR)
        elif key not in counted:
            verdicts[key] = {"verdict": "unreadable", "reading": None}
        elif counted[key] is not None:
            verdict, reading = counted[key]
            verdicts[key] = {"verdict": verdict, "reading": reading}
    return verdicts


def _with_stderr(values: dict[str, Any], stderr: dict[str, float | None]) -> dict[str, Any]:
    """Each metric followed by its `<name>_stderr`."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        out[name] = value
        if name in stderr:
            out[name + STDERR] = stderr[name]
    return out
