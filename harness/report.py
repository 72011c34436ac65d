"""The results table printed at the end of a run (a pipe table, one row per task and group, as lm-eval prints
its results): terminal text, so nothing in it is escaped for markdown."""
from __future__ import annotations

from typing import Any

from hallubench.harness.results_schema import MOSTLY_UNREADABLE, GroupResult, Results
from hallubench.harness.uncertainty import STDERR


def _metrics(metrics: dict[str, Any]) -> str:
    """name=value, with ±stderr where the metric has one."""
    flat = []
    for k, v in metrics.items():
        if k.endswith(STDERR) or not isinstance(v, (int, float, str)):
            continue
        stderr = metrics.get(k + STDERR)
        flat.append(f"{k}={v:.4f}" + (f"±{stderr:.4f}" if stderr is not None else "") if isinstance(v, float)
                    else f"{k}={v}")
    return ", ".join(flat) or "-"


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """A markdown table; cells are shown with str()."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


FLAG = "⚠"
NOTHING = "–"  # the cell of a score where no answer was scored


def nothing_scored(result: GroupResult) -> str | None:
    """Why no answer of `result` was scored ("0 of 3 scored: 3 unreadable"), or None when one was: what the table,
    results.json (`not_scored`, its metrics then null) and the site show in place of a score."""
    if result.n_scored:
        return None
    causes = [(result.n_unreadable, "unreadable"), (result.n_errors, "error" + "s" * (result.n_errors != 1)),
              (result.n_without_media, "without media")]
    why = ", ".join(f"{n} {cause}" for n, cause in causes if n) or "no samples"
    return f"0 of {result.n_selected} scored: {why}"


def unreadable_cell(result: GroupResult) -> str:
    """The unreadable answers: count, share of the answered ones, and the flag when they make most of the score."""
    if result.unreadable_share is None:
        return str(result.n_unreadable)
    return f"{result.n_unreadable} ({result.unreadable_share:.0%})" + (f" {FLAG}" if result.mostly_unreadable else "")


def _row(name: str, group: str, result: GroupResult, note: str | None = None) -> list[Any]:
    errors = str(result.n_errors) + (f" (+{result.n_without_media} without media)" if result.n_without_media else "")
    return [name, group, result.n_selected, result.n_scored, unreadable_cell(result), errors,
            _score_cell(result, note)]


def _score_cell(result: GroupResult, note: str | None) -> str:
    """The metrics, "– (why)" where no answer was scored, or the note of a task scored elsewhere."""
    why = nothing_scored(result)
    return f"{NOTHING} ({why})" if why else note or _metrics(result.metrics)


def unreadable_notice(results: Results) -> str | None:
    """The footnote explaining the flag and the left-out rows, where the table has them; None otherwise."""
    results_and_groups = [r for task in results.tasks.values() for r in (task, *task.groups.values())]
    notes = []
    if any(r.mostly_unreadable for r in results_and_groups):
        notes.append(f"{FLAG}: more than {MOSTLY_UNREADABLE:.0%} of the answers there could not be read (the metric "
                     "counts them by the paper's rule, e.g. as wrong or inconsistent, or leaves them out): the score is "
                     "mostly noise.")
    if any(r.n_without_media for r in results_and_groups):
        notes.append("without media: rows left out of the scores because --modality removes the medium they are "
                     "asked about.")
    return "\n".join(notes) or None


def mini_notice(results: Results) -> str | None:
    """The warning shown above results made on the embedded synthetic mini benchmarks; None otherwise."""
    if not results.run.mini_data:
        return None
    return (f"MINI DATA: {', '.join(results.run.mini_data)} ran on the embedded synthetic mini benchmarks "
            "(--data-dir mini): a pipeline check, not a measurement of the model.")


def subset_notice(results: Results) -> str | None:
    """The note shown above results of a `--limit` run (a count or a share): scores of a subset; None otherwise."""
    subsets = [f"{name} {task.n_selected} of {task.n_total}" for name, task in sorted(results.tasks.items())
               if task.n_selected < task.n_total]
    if not subsets:
        return None
    limit = results.run.options.get("limit")
    why = [f"--limit {limit}"] * (limit is not None) + ["a torn last line dropped"] * bool(results.run.torn_lines)
    return (f"SUBSET ({'; '.join(why) or 'samples missing from the run folder'}): {', '.join(subsets)} samples: not "
            "the benchmark's score")


def table(results: Results) -> str:
    rows = []
    for name, task in sorted(results.tasks.items()):
        note = f"scored by {task.scored_by}" if task.metric is None else None
        rows.append(_row(name, "all", task, note))
        rows += [_row("", group, result) for group, result in task.groups.items()]
    text = markdown_table(["task", "group", "n", "scored", "unreadable", "errors", "metrics"], rows)
    if footnote := unreadable_notice(results):
        text += "\n\n" + footnote
    notices = [f"{notice}\n\n" for notice in (mini_notice(results), subset_notice(results)) if notice]
    return "".join(notices) + text
