"""The papers' own numbers (view/published/*.yaml), on a page of their own (published.html), never mixed into the
columns this site computes. Each file names its source paper, table and page, its unit, and whether it is
comparable to hallubench's scores (said once above its table); a column may say which of our scores is the same
quantity (`ours: {task, metric, group, scale}`), so the site's models get a row in that table too."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import yaml

from hallubench.errors import ConfigError
from hallubench.harness.uncertainty import STDERR
from hallubench.view.board import Z95
from hallubench.view.names import SiteModel
from hallubench.view.status import RunStatus

FOLDER = Path(__file__).parent / "published"


@dataclass(frozen=True)
class PublishedTable:
    name: str  # the file's stem
    source: dict[str, str]  # paper, cite (short), table, page, and an optional note
    benchmark: str
    unit: str
    comparable: str
    columns: list[dict[str, Any]]  # key, label, higher_is_better, optional ours
    rows: list[tuple[str, list[Any]]]  # model, one value (number, text or None) per column

    @property
    def mark(self) -> str:
        return f"{self.source['cite']}, {self.source['table']}"


def read_table(path: Path) -> PublishedTable:
    """One published file; ConfigError naming the file and what is wrong."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        columns, rows = data["columns"], data["rows"]
        source = {key: str(data["source"][key]) for key in ("paper", "cite", "table", "page")}
        source["note"] = str(data["source"].get("note") or "")
        table = PublishedTable(path.stem, source, str(data["benchmark"]), str(data["unit"]), str(data["comparable"]),
                               columns, [(str(row[0]), list(row[1:])) for row in rows])
    except (OSError, yaml.YAMLError, KeyError, TypeError, IndexError) as err:
        raise ConfigError(f"{path}: not a published-results file ({err!r}); it needs source (paper, table, page), "
                          "benchmark, unit, comparable, columns and rows") from None
    for number, (model, values) in enumerate(table.rows, start=1):
        if len(values) != len(columns):
            raise ConfigError(f"{path}: row {number} ({model}) has {len(values)} values for {len(columns)} columns")
    return table


def published_tables(folder: Path = FOLDER) -> list[PublishedTable]:
    return [read_table(path) for path in sorted(folder.glob("*.yaml"))]


def _ours(state: RunStatus, ours: dict[str, Any] | None) -> dict[str, Any] | None:
    """Our score that a published column names, on the paper's scale, with its interval and marks."""
    task = state.results.tasks.get(str((ours or {}).get("task"))) if state.results else None
    if task is None:
        return None
    group = ours.get("group")
    result = task.groups.get(str(group)) if group is not None else task
    value = result.metrics.get(ours["metric"]) if result is not None and result.n_scored else None
    if not isinstance(value, (int, float)):
        return None
    scale, stderr = ours.get("scale", 1), result.metrics.get(ours["metric"] + STDERR)
    return {"value": value * scale, "half": Z95 * stderr * scale if isinstance(stderr, (int, float)) else None,
            "marks": state.marks(str(ours["task"]))}


def published_context(tables: Sequence[PublishedTable], models: Sequence[SiteModel]) -> list[dict[str, Any]]:
    """Each table with the site's models as rows of their own where a column names our score; the tables of
    benchmarks the site's runs have first."""
    benchmarks = {task.benchmark for model in models for _, _, state in model.runs if state.results
                  for task in state.results.tasks.values()}
    out = []
    for table in tables:
        ours = []
        for model in models:
            for href, _, state in model.runs:
                cells = [_ours(state, column.get("ours")) for column in table.columns]
                if any(cells):
                    ours.append({"model": model.name, "full": model.full, "href": href, "cells": cells})
        out.append({"name": table.name, "mark": table.mark, "source": table.source, "benchmark": table.benchmark,
                    "unit": table.unit, "comparable": table.comparable, "columns": table.columns, "rows": table.rows,
                    "ours": ours, "here": table.benchmark in benchmarks or bool(ours)})
    return sorted(out, key=lambda t: not t["here"])
