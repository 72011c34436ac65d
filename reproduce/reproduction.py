"""One reproduction: a published table's cells, the reference files they are computed from, the function that
computes ours, and the rule that gives the verdict.

Verdicts, the same rule for every cell: **exact** when ours, rounded to the paper's precision (its decimals, or its
significant digits for a p-value), equals the published value; **close** within one point of it (the unit of the
table: one percentage point); **not reproduced** otherwise. A reproduction's verdict is its weakest cell's. Rows
whose numbers cannot be computed from released files say so (`not run`, `rule checked`) with the reason.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

def load_metric(name: str) -> Any:
    """A packaged metric through the public API, `evaluate.load` of its folder (no module cache involved)."""
    import evaluate

    from hallubench.metrics.install import script

    return evaluate.load(str(script(name).parent))


VERDICTS = ("exact", "close", "not reproduced")  # best first
CLOSE = 1.0  # one point of the table's unit


@dataclass(frozen=True)
class Cell:
    """One published number: `label` names it within its row, `published` is the paper's value in the paper's unit
    and `ours` what this reproduction gives (the docs page prints it; the tests check the computation equals it)."""

    label: str
    published: float
    ours: float
    decimals: int | None = 2
    significant: int | None = None  # a p-value printed as "4 × 10⁻⁶": compared at one significant digit

    def rounded(self, value: float) -> float:
        if self.significant is not None:
            return float(f"{value:.{self.significant - 1}e}")
        return round(value, self.decimals)

    def verdict(self, value: float) -> str:
        if math.isfinite(value) and self.rounded(value) == self.published:
            return "exact"
        if math.isfinite(value) and abs(value - self.published) <= CLOSE:
            return "close"
        return "not reproduced"

    def shown(self, value: float) -> str:
        """`value` as tables print it: at the paper's decimals, or one significant digit more than the paper's."""
        if self.significant is not None:
            return f"{value:.{self.significant}e}"
        return f"{value:.{self.decimals}f}"

    def printed(self) -> str:
        """The published value as the paper prints it (its decimals, or its significant digits)."""
        if self.significant is not None:
            return f"{self.published:.{self.significant - 1}e}"
        return f"{self.published:.{self.decimals}f}"

    def drifted(self, value: float) -> bool:
        """Whether a computed value no longer equals what the page states (`ours`) as tables print it."""
        return float(self.shown(value)) != self.ours


@dataclass(frozen=True)
class Reproduction:
    """A row of docs/topics/reproductions.md. `compute(references)` returns ours per cell label, in the paper's unit;
    rows with no computation carry `status` ("not run", "rule checked", "not reproduced") and `why`."""

    name: str
    paper: str
    table: str
    files: tuple[str, ...] = ()
    cells: tuple[Cell, ...] = ()
    compute: Callable[[Any], Mapping[str, float]] | None = None
    source: str = ""  # from which released files, and why where not reproduced
    status: str | None = None
    published_text: str = ""  # for rows without cells: what the paper reports
    tests: tuple[str, ...] = field(default=())  # the test files that check more of it

    def __post_init__(self) -> None:
        if (self.compute is None) != (self.status is not None):
            raise ValueError(f"reproduction {self.name!r}: give either compute= and cells= or a status")

    def run(self, references: Any) -> dict[str, Any]:
        """This row computed: each cell with ours and its verdict, and the row's verdict (its weakest cell's)."""
        if self.compute is None:
            return self.summary(verdict=self.status, cells=[])
        values = dict(self.compute(references))
        absent = [cell.label for cell in self.cells if cell.label not in values]
        if absent:
            raise ValueError(f"reproduction {self.name!r} computed no value for {', '.join(absent)}")
        cells = [{"cell": cell.label, "published": cell.published, "ours": values[cell.label],
                  "ours_rounded": cell.rounded(values[cell.label]), "verdict": cell.verdict(values[cell.label])}
                 for cell in self.cells]
        return self.summary(verdict=max((c["verdict"] for c in cells), key=VERDICTS.index), cells=cells)

    def declared_verdict(self) -> str:
        """The verdict of the values the page states (`Cell.ours`): what `run` gives when nothing has drifted."""
        if self.compute is None:
            return self.status
        return max((cell.verdict(cell.ours) for cell in self.cells), key=VERDICTS.index)

    def summary(self, **computed: Any) -> dict[str, Any]:
        return {"name": self.name, "paper": self.paper, "table": self.table, **computed, "files": list(self.files),
                "source": self.source}
