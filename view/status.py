"""What a run's data is worth, said on every page that shows it: MINI DATA, SUBSET (--limit), mostly unreadable,
left out without media, partial (samples missing from the folder), and whether its per-answer verdicts
re-aggregate to its results.json (`hallubench verify`'s check, harness/verify.py: a folder whose results.json was
edited gets a VERDICTS DIFFER banner, never a quiet "✔ correct"). The words and thresholds are the terminal table's
(harness/report.py): this module calls its functions, so the site cannot drift from it."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hallubench.errors import HallubenchError
from hallubench.harness.command import rescore_hint
from hallubench.harness.report import (FLAG, mini_notice, nothing_scored, subset_notice, unreadable_cell,
                                      unreadable_notice)
from hallubench.harness.results_schema import GroupResult, Results, TaskResult
from hallubench.view.sources import RunFolder

MINI_MARK = {"kind": "mini", "text": "MINI", "title": "embedded synthetic mini benchmark: not a measurement"}


@dataclass
class Banner:
    kind: str  # the CSS class and test hook: mini, subset, unreadable, partial, schema, unfinished
    text: str


@dataclass
class RunStatus:
    """A run folder's typed results (None when it has none or they do not read) and the banners its pages carry."""

    results: Results | None
    banners: list[Banner] = field(default_factory=list)
    held: Counter = field(default_factory=Counter)  # task -> records in the run folder
    differing: dict[str, list[str]] = field(default_factory=dict)  # task -> how results.json differs from verdicts

    def marks(self, task: str) -> list[dict[str, str]]:
        """The short marks of one task's score (a cell of the models x benchmarks board), each with its reason."""
        result = self.results.tasks[task] if self.results else None
        if result is None:
            return []
        out = []
        if task in self.results.run.mini_data:
            out.append(MINI_MARK)
        if result.n_selected < result.n_total:
            out.append({"kind": "subset", "text": "SUBSET",
                        "title": f"{result.n_selected} of {result.n_total} samples (--limit)"})
        if result.mostly_unreadable:
            out.append({"kind": "unreadable", "text": FLAG,
                        "title": f"mostly unreadable: {unreadable_cell(result)} of the answers could not be read"})
        if result.n_without_media:
            out.append({"kind": "media", "text": "no media",
                        "title": f"{result.n_without_media} samples left out without media"})
        if task in self.differing:
            out.append({"kind": "verify", "text": "≠ verdicts",
                        "title": "results.json differs from its per-answer verdicts: " + "; ".join(self.differing[task])})
        if self.held[task] < result.n_selected:
            out.append({"kind": "partial", "text": "partial",
                        "title": f"{self.held[task]} of {result.n_selected} samples in the run folder"})
        return out


def typed_results(raw: dict[str, Any]) -> Results:
    """results.json as the harness's typed schema (ValueError when it does not match)."""
    return Results.from_dict(raw)


def run_status(run: RunFolder) -> RunStatus:
    held = Counter(str(record.get("task")) for record in run.records)
    if not run.results:
        return RunStatus(None, [Banner("unfinished", "This run folder has no results.json yet: the run has not "
                                                     "finished (or is being written), so no metrics are shown.")], held)
    try:
        results = typed_results(run.results)
    except ValueError as err:
        return RunStatus(None, [Banner("schema", f"results.json cannot be read by this hallubench ({err}): its data "
                                                 "status (mini data, subset, unreadable answers) is unknown.")], held)
    banners = [Banner(kind, text) for kind, text in (("mini", mini_notice(results)), ("subset", subset_notice(results)),
                                                     ("unreadable", unreadable_notice(results))) if text]
    missing = [f"task {name} has {held[name]} of its {task.n_selected} samples in the run folder"
               for name, task in sorted(results.tasks.items()) if held[name] < task.n_selected]
    if missing:
        banners.append(Banner("partial", "PARTIAL: " + "; ".join(missing) + " (the scores are of what is there)."))
    differing, unchecked = verify_folder(run)
    if differing:
        said = "; ".join(f"{task}: {'; '.join(found)}" for task, found in sorted(differing.items()))
        banners.insert(0, Banner("verify", f"VERDICTS DIFFER: {run.folder}/results.json is not what its per-answer "
                                           f"verdicts re-aggregate to (`hallubench verify`): {said}. Its scores and "
                                           f"verdicts here are not to be trusted; re-score it with "
                                           f"{rescore_hint(run.folder)}."))
    elif unchecked:
        banners.append(Banner("unverified", f"Not verified: {unchecked}"))
    return RunStatus(results, banners, held, differing)


def verify_folder(run: RunFolder) -> tuple[dict[str, list[str]], str | None]:
    """(task -> what differs, for each task whose results.json is not what its verdicts re-aggregate to; why the
    folder could not be checked, or None), by `hallubench verify`'s own check."""
    from hallubench.harness.verify import verify_run  # loads the metrics (a second): only for a finished run

    try:
        checks = verify_run(run.folder)
    except (HallubenchError, ValueError) as err:  # e.g. a task not installed here, a sample id repeated
        return {}, str(err)
    return {check.task: check.differences for check in checks if check.differences}, None


def group_rows(name: str, task: TaskResult) -> list[dict[str, Any]]:
    """The terminal table's rows of one task (harness/report.py: the whole task, then each group)."""
    def row(group: str, result: GroupResult) -> dict[str, Any]:
        return {"group": group, "n": result.n_selected, "scored": result.n_scored, "unreadable": unreadable_cell(result),
                "mostly_unreadable": result.mostly_unreadable, "errors": result.n_errors,
                "without_media": result.n_without_media, "metrics": result.metrics,
                "nothing_scored": nothing_scored(result)}

    return [row("all", task)] + [row(group, result) for group, result in task.groups.items()]


def ranking_banners(data: dict[str, Any]) -> list[Banner]:
    """A ranking's status (crosscheck.json's `mini_data`: model -> its tasks on the mini benchmarks), for its
    leaderboard and every item page."""
    mini = data.get("mini_data") or {}
    if not mini:
        return []
    which = "; ".join(f"{name} ({', '.join(tasks)})" for name, tasks in sorted(mini.items()))
    return [Banner("mini", f"MINI DATA: runs made on the embedded synthetic mini benchmarks (--data-dir mini): {which}. "
                           "This ranking is a pipeline check, not a measurement of the models.")]
