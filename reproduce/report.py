"""The reproductions as the terminal table, reproductions.json / .md, `--list`, and the table of
docs/topics/reproductions.md (generated from the declarations: `python -m hallubench.reproduce PAGE`)."""
from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hallubench.markup import escape_markdown
from hallubench.registry import REPRODUCTIONS
from hallubench.reproduce.references import pins
from hallubench.reproduce.reproduction import Reproduction

PAGE_START = "<!-- the table below is generated from hallubench/reproduce: python -m hallubench.reproduce docs/topics/reproductions.md -->"
PAGE_END = "<!-- end of the generated table -->"
COLUMNS = ("paper", "table", "cell", "published", "ours", "verdict")


def terminal_rows(results: Iterable[dict[str, Any]]) -> list[tuple[str, ...]]:
    """One row a cell (paper and table on a reproduction's first), one for a row with no computation."""
    rows = []
    for result in results:
        reproduction: Reproduction = REPRODUCTIONS[result["name"]]
        table = reproduction.table.split(", ")[0]
        if not result["cells"]:
            rows.append((reproduction.paper, table, "", reproduction.published_text[:40], "—", result["verdict"]))
        for k, cell in enumerate(result["cells"]):
            declared = next(c for c in reproduction.cells if c.label == cell["cell"])
            ours = declared.shown(cell["ours"]) + (f" (page: {declared.ours:g})" if declared.drifted(cell["ours"]) else "")
            rows.append((reproduction.paper if k == 0 else "", table if k == 0 else "", cell["cell"],
                         declared.printed(), ours, cell["verdict"]))
    return rows


def print_table(results: Sequence[dict[str, Any]], out=sys.stdout) -> None:
    rows = [COLUMNS, *terminal_rows(results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    for row in rows:
        print("  ".join(value.ljust(width) for value, width in zip(row, widths)).rstrip(), file=out)
    counts = {verdict: sum(r["verdict"] == verdict for r in results) for verdict in dict.fromkeys(
        r["verdict"] for r in results)}
    print(f"{len(results)} reproductions: " + ", ".join(f"{n} {verdict}" for verdict, n in counts.items()), file=out)
    drifted = [f"{r['name']} {c['cell']}" for r in results for c in r["cells"]
               if next(d for d in REPRODUCTIONS[r["name"]].cells if d.label == c["cell"]).drifted(c["ours"])]
    if drifted:
        print(f"{len(drifted)} cell(s) differ from docs/topics/reproductions.md: {', '.join(drifted)}", file=out)


def _cells_text(result: dict[str, Any], key: str) -> str:
    reproduction: Reproduction = REPRODUCTIONS[result["name"]]
    if not result["cells"]:
        return reproduction.published_text if key == "published" else "—"
    if key == "ours" and all(cell["verdict"] == "exact" for cell in result["cells"]):
        return "the same"
    declared = {cell.label: cell for cell in reproduction.cells}
    return "; ".join(f"{escape_markdown(cell['cell'])} " + (declared[cell["cell"]].printed() if key == "published"
                                                          else declared[cell["cell"]].shown(cell["ours"]))
                     for cell in result["cells"])


def markdown_table(results: Iterable[dict[str, Any]]) -> str:
    """The page's table: a row per reproduction, its cells published and ours, the verdict, the files and why."""
    lines = ["| paper, table | published | ours | verdict | from which released files, and why where not reproduced |",
             "|---|---|---|---|---|"]
    for result in results:
        reproduction: Reproduction = REPRODUCTIONS[result["name"]]
        tests = f" (`{reproduction.name}`)" if reproduction.compute else ""
        lines.append(f"| <a id=\"{reproduction.name}\"></a>{reproduction.paper} {reproduction.table} | {_cells_text(result, 'published')} | "
                     f"{_cells_text(result, 'ours')} | {result['verdict']} | {reproduction.source}{tests} |")
    return "\n".join(lines) + "\n"


def declared_results() -> list[dict[str, Any]]:
    """Every reproduction as the page states it (each cell's declared `ours`), in registry order."""
    results = []
    for name in REPRODUCTIONS:
        reproduction: Reproduction = REPRODUCTIONS[name]
        cells = [{"cell": c.label, "published": c.published, "ours": c.ours, "verdict": c.verdict(c.ours)}
                 for c in reproduction.cells]
        results.append(reproduction.summary(verdict=reproduction.declared_verdict(), cells=cells))
    return results


def page_with_table(page: str) -> str:
    """`page` with the text between its two markers replaced by the generated table."""
    head, start, rest = page.partition(PAGE_START)
    _, end, tail = rest.partition(PAGE_END)
    if not (start and end):
        raise ValueError(f"the page has no generated-table markers ({PAGE_START!r} ... {PAGE_END!r})")
    return f"{head}{PAGE_START}\n{markdown_table(declared_results())}{PAGE_END}{tail}"


def listing(names: Iterable[str]) -> list[str]:
    """`reproduce --list`: each reproduction, its verdict on the page, and the upstream files it reads."""
    lines = []
    for name in names:
        reproduction: Reproduction = REPRODUCTIONS[name]
        lines.append(f"{name}: {reproduction.paper} {reproduction.table} [{reproduction.declared_verdict()}]")
        by_source: dict[str, list[str]] = {}
        for local in reproduction.files:
            pin = pins()[local]
            by_source.setdefault(f"{pin.repo}@{pin.commit[:7]}", []).append(pin.path)
        for source, paths in by_source.items():
            shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
            lines.append(f"    {source}: {shown}")
        if not reproduction.files:
            lines.append("    no released file (" + (reproduction.status or "simulated") + ")")
    return lines


def write_outputs(results: Sequence[dict[str, Any]], folder: Path) -> None:
    """reproductions.json and reproductions.md in `folder`, written whole."""
    from hallubench.harness.atomic import write_files

    write_files(folder, {
        "reproductions.json": lambda path: path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n",
                                                           encoding="utf-8"),
        "reproductions.md": lambda path: path.write_text(markdown_table(results), encoding="utf-8"),
    }, "reproductions")
