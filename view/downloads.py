"""What a reader takes away: every CrossCheck board and the models x benchmarks grid as CSV and JSON files in the
site's data/ folder (the numbers the pages show, unrounded, with the model names the pages use)."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Sequence

BOARD_FIELDS = ("rank", "model", "crosscheck", "ci_low", "ci_high", "sign_test_p", "sign_test_wins", "sign_test_losses",
                "sign_test_ties", "selfcheck", "refcheck", "sentences", "items")


def _board_rows(board: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for row in board["rows"]:
        test = row["sign_test"] or {}
        out.append({"rank": row["rank"], "model": row["model"], "crosscheck": row["crosscheck"], "ci_low": row["ci_low"],
                    "ci_high": row["ci_high"], "sign_test_p": test.get("p"), "sign_test_wins": test.get("wins"),
                    "sign_test_losses": test.get("losses"), "sign_test_ties": test.get("ties"),
                    "selfcheck": row["selfcheck"], "refcheck": row["refcheck"], "sentences": row["sentences"],
                    "items": row["documents"]})
    return out


def _grid_rows(grid: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """The grid as flat rows: per column its value, its interval (low, high) and its marks."""
    fields = ["model", "full"]
    for column in grid["columns"]:
        name = f"{column['task']}/{column['metric']}"
        fields += [name, f"{name}/ci_low", f"{name}/ci_high", f"{name}/marks"]
    rows = []
    for row in grid["rows"]:
        out: dict[str, Any] = {"model": row["model"], "full": row["full"]}
        for column, cell in zip(grid["columns"], row["cells"]):
            name = f"{column['task']}/{column['metric']}"
            if cell is None:
                continue
            if cell.get("nothing"):  # no answer scored: no number, the reason instead
                out[f"{name}/marks"] = cell["nothing"]
                continue
            low, high = cell["ci"] if cell.get("ci") else (
                (cell["value"] - cell["half"], cell["value"] + cell["half"]) if cell["half"] is not None else (None, None))
            out.update({name: cell["value"], f"{name}/ci_low": low, f"{name}/ci_high": high,
                        f"{name}/marks": " ".join(m["text"] for m in cell["marks"])})
        rows.append(out)
    return fields, rows


def _csv(fields: Sequence[str], rows: list[dict[str, Any]]) -> str:
    text = io.StringIO()
    writer = csv.DictWriter(text, fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return text.getvalue()


def write_downloads(out: Path, boards: Sequence[dict[str, Any]], grid: dict[str, Any] | None,
                    about: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Write data/board-<n>.{csv,json} and data/grid.{csv,json}; what -> format -> site-relative path. Each JSON file
    says what made it (`about`: version, date, command)."""
    folder = out / "data"
    folder.mkdir(exist_ok=True)
    made = {"hallubench": about["version"], "date": about["date"], "command": about["command"]}
    links: dict[str, dict[str, str]] = {}
    tables = [(f"board-{b['number']}", BOARD_FIELDS, _board_rows(b), {"board": b["name"]}) for b in boards]
    if grid is not None and grid["rows"]:
        fields, rows = _grid_rows(grid)
        tables.append(("grid", fields, rows, {"columns": [{k: c[k] for k in ("task", "metric", "higher_is_better")}
                                                          for c in grid["columns"]]}))
    for name, fields, rows, extra in tables:
        (folder / f"{name}.csv").write_text(_csv(fields, rows), encoding="utf-8")
        (folder / f"{name}.json").write_text(json.dumps({**made, **extra, "rows": rows}, indent=1),
                                             encoding="utf-8")
        links[name] = {"csv": f"data/{name}.csv", "json": f"data/{name}.json"}
    return links
