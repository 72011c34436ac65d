"""The one escaping helper for everything hallubench writes as markdown or HTML (dataset cards, leaderboards,
the viewer). A name, answer or id we did not write (a model id, a run-folder name, a model's output) is text:
it can add no heading, table cell, link, line or tag."""
from __future__ import annotations

import html
import re

# Characters with a meaning anywhere in a CommonMark/GFM line, escaped with a backslash (`|` splits table cells);
# `#`, `+`, `-`, `=`, `.` and digits only mean something at a line's start (headings, lists), escaped there alone.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()|~!])")
_LINE_START = re.compile(r"^([#+\-=]|\d+(?=[.)]))")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")


def one_line(text: object) -> str:
    """Text as one plain line, for the terminal: line breaks fold to one space, nothing is escaped (a terminal
    shows `\\_` and `&lt;` as they are, so what is printed is never escaped for markdown or HTML)."""
    return _LINE_BREAKS.sub(" ", str(text)).strip()


def escape_html(text: object) -> str:
    """Text for HTML element content or a quoted attribute value."""
    return html.escape(str(text), quote=True)


def escape_markdown(text: object) -> str:
    """Text for one line of markdown (a heading, a table cell, a list item): line breaks fold to one space,
    markdown punctuation is backslash-escaped and HTML (`<`, `>`, `&`, quotes) is entity-escaped, since
    markdown renderers (the Hub's included) pass raw HTML through."""
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", escape_html(one_line(text)))
    if _LINE_START.match(escaped):  # "1." stays a number as "1\.", "#" stays text as "\#"
        escaped = _LINE_START.sub(lambda m: m.group(0) + "\\" if m.group(0)[0].isdigit() else "\\" + m.group(0), escaped)
    return escaped


def markdown_code(text: object) -> str:
    """Text as inline code on one line: a backtick run longer than any inside it, so nothing can close it early."""
    line = one_line(text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", line)), default=0) + 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{fence}{pad}{line}{pad}{fence}".replace("|", "\\|")
