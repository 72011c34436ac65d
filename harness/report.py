"""The results table printed at the end of a run (markdown, one row per task and group)."""
from __future__ import annotations

from typing import Any

from hallubench.harness.results_schema import GroupResult, Results
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


def _row(name: str, group: str, result: GroupResult, note: str | None = None) -> list[Any]:
    return [name, group, result.n_selected, result.n_scored, result.n_unparsed, result.n_errors,
            note or _metrics(result.metrics)]


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
    return (f"SUBSET (--limit {limit}): {', '.join(subsets)} samples: not the benchmark's score")


def table(results: Results) -> str:
    rows = []
    for name, task in sorted(results.tasks.items()):
        note = f"scored by {task.scored_by}" if task.metric is None else None
        rows.append(_row(name, "all", task, note))
        rows += [_row("", group, result) for group, result in task.groups.items()]
    text = markdown_table(["task", "group", "n", "scored", "unparsed", "errors", "metrics"], rows)
    notices = [f"**{notice}**\n\n" for notice in (mini_notice(results), subset_notice(results)) if notice]
    return "".join(notices) + text
