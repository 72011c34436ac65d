"""The papers' own numbers (view/published/*.yaml), shown as rows marked "published (paper, table)" beside the
user's models and never mixed into the columns this site computes. Each file names its source paper, table and
page, its unit, and whether it is comparable to hallubench's scores; a column may say which of our scores is the
same quantity (`ours: {task, metric, group, scale}`), so the user's runs get a row in that table too."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hallubench.errors import ConfigError

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
        return f"published ({self.source['cite']}, {self.source['table']})"


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
