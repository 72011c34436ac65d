"""The models x benchmarks grid: one row per model of the site (view/names.py), its columns grouped by benchmark
task (the ranking's CrossCheck boards first), each group showing its headline score with the others one click
away; a column no model has a value in is left out. Each cell holds its value ± a 95 % interval (1.96 bootstrap
standard errors; a CrossCheck cell the ranking's bootstrap interval), the run's data marks (MINI, SUBSET, ⚠ ...)
and a link to the run page (a CrossCheck cell to its board)."""
from __future__ import annotations

from typing import Any, Sequence

from hallubench.harness.uncertainty import STDERR
from hallubench.view.names import SiteModel
from hallubench.harness.report import nothing_scored
from hallubench.view.status import MINI_MARK, RunStatus

Z95 = 1.96  # a normal 95 % interval from a standard error
CROSSCHECK = "CrossCheck"


def _task_columns(states: Sequence[RunStatus]) -> list[dict[str, Any]]:
    """Per task (sorted), its scores that have a direction and a value somewhere, in the order the metric declares
    them: the first is the group's headline."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for state in states:
        for name, task in sorted(state.results.tasks.items()):
            for metric, better in task.higher_is_better.items():
                if better is not None and isinstance(task.metrics.get(metric), (int, float)):
                    seen.setdefault((name, metric), {"group": name, "task": name, "metric": metric,
                                                     "higher_is_better": better})
    columns = sorted(seen.values(), key=lambda c: c["task"])  # stable: each task keeps its metric's order
    for k, column in enumerate(columns):
        column["headline"] = k == 0 or columns[k - 1]["task"] != column["task"]
    return columns


def _cell(model: SiteModel, column: dict[str, Any]) -> dict[str, Any] | None:
    """The model's score in `column`, or its reason where the run scored no answer (no number then: "–")."""
    for href, _, state in model.runs:
        task = state.results.tasks.get(column["task"]) if state.results else None
        if task is not None and nothing_scored(task):
            return {"nothing": nothing_scored(task), "href": href, "marks": state.marks(column["task"])}
        value = task.metrics.get(column["metric"]) if task else None
        if isinstance(value, (int, float)):
            stderr = task.metrics.get(column["metric"] + STDERR)
            return {"value": value, "half": Z95 * stderr if isinstance(stderr, (int, float)) else None,
                    "href": href, "marks": state.marks(column["task"])}
    return None


def ranking_columns(data: dict[str, Any]) -> list[dict[str, Any]]:
    """One column per board of a ranking (crosscheck.json): each model's CrossCheck score with its 95 % interval
    (the ranking's bootstrap percentiles) and the MINI mark, linking to the board."""
    mini = data.get("mini_data") or {}
    out = []
    for number, (name, board) in enumerate(data["boards"].items()):
        cells = {model: {"value": board["scores"][model], "half": None, "ci": board["uncertainty"]["intervals"][model],
                         "href": f"#board-{number}", "marks": [MINI_MARK] if model in mini else []}
                 for model in board["ranking"]}
        out.append({"group": CROSSCHECK, "task": name, "metric": CROSSCHECK, "higher_is_better": False,
                    "headline": True, "cells": cells})
    return out


def board_context(models: Sequence[SiteModel], ranked: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The grid of `models` (view/names.py); `ranked`: a ranking's columns (`ranking_columns`)."""
    scored = [state for model in models for _, _, state in model.runs if state.results is not None]
    columns = [{k: v for k, v in c.items() if k != "cells"} for c in ranked] + _task_columns(scored)
    rows = []
    for model in models:
        cells = [column["cells"].get(model.name) if column.get("cells") is not None else None for column in ranked]
        cells += [_cell(model, column) for column in columns[len(ranked):]]
        if not any(cells) and not model.runs:
            continue
        rows.append({"model": model.name, "full": model.full, "hub_id": model.hub_id, "cells": cells,
                     "runs": [(href, run.folder.name) for href, run, _ in model.runs]})
    groups: list[dict[str, Any]] = []
    for k, column in enumerate(columns):
        if not groups or groups[-1]["name"] != column["group"]:
            groups.append({"name": column["group"], "number": len(groups), "columns": []})
        column["group_number"] = groups[-1]["number"]
        groups[-1]["columns"].append(k)
    for group in groups:
        group["extra"] = sum(not columns[k]["headline"] for k in group["columns"])
        group["shown"] = len(group["columns"]) - group["extra"]
    return {"columns": columns, "groups": groups, "rows": [r for r in rows if any(r["cells"])],
            "without_scores": [(r["model"], r["runs"]) for r in rows if not any(r["cells"])],
            "unscored": [(href, run.folder.name, state.banners) for model in models for href, run, state in model.runs
                         if state.results is None]}
