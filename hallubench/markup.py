"""The one escaping helper for everything hallubench writes as markdown, HTML or a terminal line (dataset cards,
leaderboards, the viewer, `verify` and `rank` output). A name, answer or id we did not write (a model id, a
run-folder name, a model's output) is text: it can add no heading, table cell, link, line or tag, and send no
control character to a terminal or a page."""
from __future__ import annotations

import html
import re

# Characters with a meaning anywhere in a CommonMark/GFM line, escaped with a backslash (`|` splits table cells);
# `#`, `+`, `-`, `=`, `.` and digits only mean something at a line's start (headings, lists), escaped there alone.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()|~!])")
_LINE_START = re.compile(r"^([#+\-=]|\d+(?=[.)]))")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")
# Unicode category Cc (C0, DEL and C1) but newline and tab: what a page shows as escapes.
_PAGE_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _python_escape(char: str) -> str:
    return ascii(char)[1:-1]  # "\x1b", "\n", "\u202e": the escape a Python string literal would use


def escape_terminal(text: object) -> str:
    """Text as one terminal line: every character Python does not print (controls, line breaks, bidi and other
    format characters, spaces other than " ") is shown as its Python escape, so the text can start no line, move
    no cursor, change no colour and reorder nothing after it. Nothing is escaped for markdown or HTML: a terminal
    shows `\\_` and `&lt;` as they are."""
    line = str(text)
    return line if line.isprintable() else "".join(char if char.isprintable() else _python_escape(char)
                                                   for char in line)


def escape_page_controls(text: object) -> str:
    """Text for a page with its control characters (a bell, an escape, a NUL from a model's output) shown as
    Python escapes, seen rather than put raw into the page; newlines and tabs stay (a model's answer keeps its
    lines), and so do format characters, which join emoji and shape scripts. HTML escaping is the template's."""
    return _PAGE_CONTROLS.sub(lambda match: _python_escape(match.group()), str(text))


def one_line(text: object) -> str:
    """Text as one line of markdown before it is escaped: line breaks fold to one space."""
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
