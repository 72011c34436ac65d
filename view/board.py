"""The models x benchmarks board: one row per model, one column per task score with a direction (the headlines
results.json's `higher_is_better` marks better up or down), each cell its value ± a 95 % interval (1.96 bootstrap
standard errors), the run's data marks (MINI, SUBSET, ⚠ ...) and a link to the run page. Below it, the papers'
published tables, with the user's models as rows of their own where a column says which of our scores it is."""
from __future__ import annotations

from typing import Any, Sequence

from hallubench.harness.uncertainty import STDERR
from hallubench.publish.eval_results import hub_model_id
from hallubench.view.pages import model_label, short_label
from hallubench.view.published import PublishedTable
from hallubench.view.sources import RunFolder
from hallubench.view.status import MINI_MARK, RunStatus, run_status

Z95 = 1.96  # a normal 95 % interval from a standard error


def _columns(states: Sequence[RunStatus]) -> list[dict[str, Any]]:
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for state in states:
        for name, task in sorted(state.results.tasks.items()):
            for metric, better in task.higher_is_better.items():
                if better is not None and isinstance(task.metrics.get(metric), (int, float)):
                    seen.setdefault((name, metric), {"task": name, "metric": metric, "higher_is_better": better})
    return sorted(seen.values(), key=lambda c: (c["task"], c["metric"]))


def _cell(state: RunStatus, href: str, column: dict[str, Any]) -> dict[str, Any] | None:
    task = state.results.tasks.get(column["task"])
    value = task.metrics.get(column["metric"]) if task else None
    if not isinstance(value, (int, float)):
        return None
    stderr = task.metrics.get(column["metric"] + STDERR)
    return {"value": value, "half": Z95 * stderr if isinstance(stderr, (int, float)) else None, "href": href,
            "marks": state.marks(column["task"])}


def ranking_columns(data: dict[str, Any]) -> list[dict[str, Any]]:
    """One column per board of a ranking (crosscheck.json): each model's CrossCheck score with its 95 % interval
    (the ranking's bootstrap percentiles) and the MINI mark, linking to the board."""
    mini = data.get("mini_data") or {}
    out = []
    for number, (name, board) in enumerate(data["boards"].items()):
        cells = {model: {"value": board["scores"][model], "half": None, "ci": board["uncertainty"]["intervals"][model],
                         "href": f"#board-{number}", "marks": [MINI_MARK] if model in mini else []}
                 for model in board["ranking"]}
        out.append({"task": name, "metric": "CrossCheck", "higher_is_better": False, "cells": cells})
    return out


def _add_ranking(columns: list, rows: dict[Any, dict], ranked: Sequence[dict[str, Any]],
                 links: dict[str, dict]) -> None:
    """The ranking's columns after the runs' ones; a ranked model joins the row of its given run folder (`links`:
    model -> its run page and Hub id), else gets a row of its own."""
    pages = {href: row for row in rows.values() for href, _ in row["runs"]}
    joined: set[int] = set()  # rows that have their ranking cells: a row takes one ranked model's
    for model in dict.fromkeys(m for column in ranked for m in column["cells"]):
        link = links.get(model) or {}
        row = pages.get(link.get("href"))
        if row is None or id(row) in joined:
            row = rows[("ranking", model)] = {"model": model, "full": model, "hub_id": link.get("hub_id"),
                                              "cells": [None] * len(columns), "runs": []}
        joined.add(id(row))
        row["cells"] = row["cells"] + [column["cells"].get(model) for column in ranked]
    for row in rows.values():
        row["cells"] += [None] * (len(columns) + len(ranked) - len(row["cells"]))
    columns += [{k: column[k] for k in ("task", "metric", "higher_is_better")} for column in ranked]


def board_context(runs: Sequence[tuple[str, RunFolder]], tables: Sequence[PublishedTable],
                  ranked: Sequence[dict[str, Any]] = (), links: dict[str, dict] | None = None) -> dict[str, Any]:
    """`runs`: (run page path, run folder). One row per model (its label; a second run of a model on a task it
    already has gets a row of its own, named by its folder), then the published tables. `ranked`: a ranking's
    columns (`ranking_columns`), joined to the rows by `links` (model -> run page, Hub id)."""
    read = [(href, run, run_status(run)) for href, run in runs]
    scored = [(href, run, state) for href, run, state in read if state.results is not None]
    columns = _columns([state for _, _, state in scored])
    rows: dict[Any, dict[str, Any]] = {}  # model label (or ("ranking", name)) -> its row
    for href, run, state in scored:
        label = model_label(run.results) or run.folder.name
        cells = [_cell(state, href, column) for column in columns]
        row = rows.get(label)
        if row is not None and any(a and b for a, b in zip(row["cells"], cells)):
            label = f"{label} ({run.folder.name})"
            row = None
        if row is None:
            row = rows[label] = {"model": short_label(label), "full": label, "hub_id": hub_model_id(state.results),
                                 "cells": [None] * len(columns), "runs": []}
        row["cells"] = [old or new for old, new in zip(row["cells"], cells)]
        row["runs"].append((href, run.folder.name))
    if ranked:
        _add_ranking(columns, rows, ranked, links or {})
    benchmarks = {task.benchmark for _, _, state in scored for task in state.results.tasks.values()}
    published = [_published(table, scored) for table in tables]
    return {"columns": columns, "rows": list(rows.values()),
            "unscored": [(href, run.folder.name, state.banners) for href, run, state in read if state.results is None],
            "published": [t for t in published if t["benchmark"] in benchmarks or t["ours"]],
            "other_published": [t for t in published if not (t["benchmark"] in benchmarks or t["ours"])]}


def _ours(state: RunStatus, ours: dict[str, Any] | None) -> dict[str, Any] | None:
    """Our score that a published column names, on the paper's scale, with its interval and marks."""
    task = state.results.tasks.get(str((ours or {}).get("task")))
    if task is None:
        return None
    group = ours.get("group")
    result = task.groups.get(str(group)) if group is not None else task
    value = result.metrics.get(ours["metric"]) if result is not None else None
    if not isinstance(value, (int, float)):
        return None
    scale, stderr = ours.get("scale", 1), result.metrics.get(ours["metric"] + STDERR)
    return {"value": value * scale, "half": Z95 * stderr * scale if isinstance(stderr, (int, float)) else None,
            "marks": state.marks(str(ours["task"]))}


def _published(table: PublishedTable, scored) -> dict[str, Any]:
    ours = []
    for href, run, state in scored:
        cells = [_ours(state, column.get("ours")) for column in table.columns]
        if any(cells):
            label = model_label(run.results) or run.folder.name
            ours.append({"model": short_label(label), "full": label, "href": href, "cells": cells})
    return {"name": table.name, "mark": table.mark, "source": table.source, "benchmark": table.benchmark,
            "unit": table.unit, "comparable": table.comparable, "columns": table.columns, "rows": table.rows,
            "ours": ours}
