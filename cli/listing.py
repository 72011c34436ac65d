"""Listings a person can read on a 100-column terminal (`hallubench tasks`, `hallubench models`): tables whose last
column wraps under itself, and paragraphs wrapped under a hanging indent. The details stay whole behind
`hallubench tasks NAME`, `hallubench models NAME` and `--json`."""
from __future__ import annotations

import textwrap

WIDTH = 100
NARROWEST = 24  # the last column never wraps narrower than this, however wide the others are


def table(rows: list[list[str]], indent: str = "  ", width: int = WIDTH) -> str:
    """Columns padded to their widest cell; the last column wrapped to what is left of `width`."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lead = len(indent) + sum(w + 2 for w in widths)
    lines = []
    for row in rows:
        head = indent + "".join(cell.ljust(w) + "  " for cell, w in zip(row, widths))
        last = textwrap.wrap(row[-1], max(width - lead, NARROWEST), break_long_words=False,
                             break_on_hyphens=False) or [""]
        lines.append((head + last[0]).rstrip())
        lines += [" " * lead + more for more in last[1:]]
    return "\n".join(lines)


def paragraph(text: str, indent: str = "", hanging: str = "    ", width: int = WIDTH) -> str:
    """`text` wrapped to `width`, its first line after `indent`, the others after `hanging`."""
    return textwrap.fill(" ".join(text.split()), width, initial_indent=indent, subsequent_indent=hanging,
                         break_long_words=False, break_on_hyphens=False)


def cut(text: str, width: int) -> str:
    """`text` on one line of at most `width` characters, "..." where it was cut."""
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."
