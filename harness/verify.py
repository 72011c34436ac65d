"""`hallubench verify RUN_DIR`: do a run folder's per-answer verdicts re-aggregate to its results.json?

For each task of results.json whose metric gives per-item verdicts (ARCHITECTURE.md, "The metric contract"):
- the verdicts, results.json's and each sample record's `verdict` (harness/records.py), are the ones the metric gives
  the folder's samples now (a stale, edited or forged verdict is named);
- the counts (`n_errors`, `n_unparsed`, `n_scored`, `n_unreadable`, `unreadable_share`, `mostly_unreadable`,
  `n_without_media`, `not_scored`), overall and per group, are those the records' verdicts give;
- each score the metric declares a share of "correct" verdicts (`verdict_shares`: accuracy, PA, HR, recall...),
  overall and per group, is that share, counted here from the records' verdicts; every score is null where no answer
  was scored.
Records scored before they carried a verdict (schema 4 and older) are checked against results.json's verdicts.
`mismatches` is the same check as one list of lines (what `hallubench view` flags).
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hallubench.benchmarks.task import Task
from hallubench.errors import RunFolderNotFoundError
from hallubench.harness import run_state
from hallubench.harness.command import rescore_hint
from hallubench.harness.results_schema import SCHEMA_VERSION, GroupResult, Results, TaskResult
from hallubench.harness.preflight import resolve_tasks
from hallubench.harness.scoring import (UNREADABLE, unread_by_rule, count, counted_as, group_names, is_count, load_metric,
                                        metric_records, parse_records, record_verdict, task_verdicts)

COUNTS = ("n_errors", "n_unparsed", "n_scored", "n_unreadable", "unreadable_share", "mostly_unreadable",
          "n_without_media", "not_scored")
SHOWN = 5  # differing sample ids named per task


@dataclass
class TaskCheck:
    """What `verify` found for one task: `checked` the values compared, `differences` those that differ."""

    task: str
    metric: str | None
    samples: int
    has_verdicts: bool
    checked: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)


def verify_run(run_dir: Path) -> list[TaskCheck]:
    """Each task of `run_dir`'s results.json checked against its verdicts (see the module's docstring)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunFolderNotFoundError(f"verify: {run_dir} is not a run folder")
    with run_state.read_run_folder(run_dir, "verify") as folder:
        if folder.results is None:
            raise RunFolderNotFoundError(f"verify: {run_dir} has no results.json; score it first with "
                                         f"{rescore_hint(run_dir)}")
        try:
            results = Results.from_dict(folder.results)
        except ValueError as err:
            raise RunFolderNotFoundError(f"verify: {run_dir / 'results.json'}: {err}") from None
        records = folder.records
    return check_run(run_dir, results, records)


def check_run(run_dir: Path, results: Results, records: dict[str, dict[str, Any]], command: str = "verify"
              ) -> list[TaskCheck]:
    """Each task of `results` (the run folder `run_dir`'s) checked against the verdicts of `records`; `verify` and
    `publish` (before it uploads anything) both ask this."""
    if results.version < 2:
        raise RunFolderNotFoundError(f"{command}: {run_dir / 'results.json'} is of schema version {results.version}, "
                                     f"written before answers had verdicts; re-score it with "
                                     f"{rescore_hint(run_dir)}, then {command}")
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records.values():
        by_task[record["task"]].append(record)
    tasks = {task.name: task for task in resolve_tasks(sorted(results.tasks), results.run.options.get("include"))}
    return [_check(tasks[name], result, parse_records(tasks[name], by_task[name]), results.version)
            for name, result in sorted(results.tasks.items())]


def mismatches(run_dir: Path) -> list[str]:
    """What `verify` finds wrong in `run_dir`, one line per difference ("<task>: <difference>"); [] when its records'
    verdicts, results.json's verdicts and what the metric gives the samples now agree and re-aggregate to every count
    and score of results.json. Raises what `verify_run` raises for a folder it cannot check."""
    return [f"{check.task}: {difference}" for check in verify_run(run_dir) for difference in check.differences]


def recorded_verdicts(records: list[dict[str, Any]], fallback: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The verdicts the records carry (their `verdict`, written by scoring: harness/records.py), per sample id, in
    results.json's shape; `fallback` (results.json's) for a folder whose records were scored before they had one."""
    if not any("verdict" in record for record in records):
        return fallback
    return {str(r["id"]): {"verdict": r["verdict"]["verdict"], "reading": r["verdict"]["reading"]} for r in records
            if isinstance(r.get("verdict"), dict) and r["verdict"].get("verdict") is not None}


def _check(task: Task, result: TaskResult, records: list[dict[str, Any]], version: int = SCHEMA_VERSION) -> TaskCheck:
    check = TaskCheck(task.name, result.metric, len(records), bool(result.verdicts))
    now = task_verdicts(task, records, result.task_args)
    stale = sorted(key for key in set(now) | set(result.verdicts) if now.get(key) != result.verdicts.get(key))
    check.checked.append("verdicts")
    if stale:
        check.differences.append(f"{len(stale)} verdicts differ from what the metric gives the samples now "
                                 f"({', '.join(_verdict_change(key, result.verdicts, now) for key in stale[:SHOWN])})")
    in_records = [r for r in records if "verdict" in r]
    if in_records:
        check.checked.append("record verdicts")
        forged = [r for r in in_records if r["verdict"] != record_verdict(task, r, now)]
        if forged:
            check.differences.append(
                f"{len(forged)} records' verdicts in samples.jsonl differ from what the metric gives them now ("
                + ", ".join(f"{r['id']}: {r['verdict']!r} recorded, {record_verdict(task, r, now)!r} now"
                            for r in forged[:SHOWN]) + ")")
    verdicts = recorded_verdicts(records, result.verdicts)
    _compare(check, "", result, _recount(task, records, verdicts, version))
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        for name in group_names(record):
            groups[name].append(record)
    for name, members in sorted(groups.items()):
        if name not in result.groups:
            check.differences.append(f"group {name!r}: in the samples, not in results.json")
            continue
        _compare(check, f"group {name!r}: ", result.groups[name], _recount(task, members, verdicts, version))
    if verdicts and task.metric is not None:
        shares = load_metric(task.metric).verdict_shares
        scored = metric_records(task, records)
        _compare_shares(check, "", result, scored, verdicts, shares)
        for name, group in sorted(result.groups.items()):
            members = [r for r in scored if name in group_names(r)]
            _compare_shares(check, f"group {name!r}: ", group, members, verdicts, shares)
    return check


def _verdict_change(key: str, stored: dict[str, dict[str, Any]], now: dict[str, dict[str, Any]]) -> str:
    def shown(verdict: dict[str, Any] | None) -> str:
        return "none" if verdict is None else f"{verdict['verdict']} ({verdict['reading']!r})"
    return f"{key}: {shown(stored.get(key))} in results.json, {shown(now.get(key))} now"


def _recount(task: Task, records: list[dict[str, Any]], verdicts: dict[str, dict[str, Any]],
             version: int = SCHEMA_VERSION) -> GroupResult:
    recounted = GroupResult()
    count(task, records, recounted, verdicts)
    if version < 3:  # version 2 counted the answers read only in part as scored too, and wrote no `not_scored`
        recounted.n_scored += sum(counted_as(task, r, verdicts) == UNREADABLE and not unread_by_rule(r, verdicts)
                                  for r in records)
        recounted.not_scored = None
    return recounted


def _compare(check: TaskCheck, where: str, stored: GroupResult, recounted: GroupResult) -> None:
    for name in COUNTS:
        check.checked.append(where + name)
        if not _equal(getattr(stored, name), getattr(recounted, name)):
            check.differences.append(f"{where}{name} is {getattr(stored, name)!r} in results.json, the verdicts give "
                                     f"{getattr(recounted, name)!r}")


def _compare_shares(check: TaskCheck, where: str, stored: GroupResult, records: list[dict[str, Any]],
                    verdicts: dict[str, dict[str, Any]], shares: dict[str, str | None]) -> None:
    """Each declared share of "correct" verdicts among `records` (those with `reference` where one is named); every
    metric null where no answer was scored."""
    metrics = stored.metrics
    if stored.not_scored is not None:
        check.checked.append(where + "metrics")
        if any(value is not None and not is_count(value) for value in metrics.values()):
            check.differences.append(f"{where}metrics hold numbers in results.json where no answer was scored "
                                     f"({stored.not_scored})")
        return
    for name, reference in shares.items():
        members = [verdicts[str(r["id"])]["verdict"] for r in records if str(r["id"]) in verdicts
                   and (reference is None or str(r.get("reference")).strip().lower() == reference)]
        if name not in metrics or not members:  # not reported by this task, or no item to count it over
            continue
        share = members.count("correct") / len(members)
        check.checked.append(where + name)
        if not _equal(metrics[name], share):
            check.differences.append(f"{where}{name} is {metrics[name]!r} in results.json, the verdicts give {share!r} "
                                     f"({members.count('correct')} correct of {len(members)})")


def _equal(stored: Any, derived: Any) -> bool:
    if isinstance(stored, float) and isinstance(derived, float):
        return math.isclose(stored, derived, rel_tol=1e-12, abs_tol=1e-15)
    return stored == derived
