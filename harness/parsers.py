"""Answer extractors by name (the lm-eval `filters` idea): raw model text -> parsed answer or None.

None means unparseable. The yes/no and CCHall parsers are the metric modules' own, so the parsed
answer in the samples log is exactly what the metric scores. Parsers receive the task's per-item
`metric_inputs` as keyword arguments.
"""
from __future__ import annotations

from typing import Any, Callable

Parser = Callable[..., Any]


def _yes_no(text: str) -> str | None:
    from hallubench.metrics.pa_hr.pa_hr import parse_yes_no

    return parse_yes_no(text)


def _cchall_option(text: str, options: list[str] | None = None) -> str | None:
    from hallubench.metrics.cchall.cchall import parse_cchall

    return parse_cchall(text, options)


def _text(text: str) -> str | None:
    """Free-form answers: the stripped text; an empty answer is unparseable."""
    return text.strip() or None


PARSERS: dict[str, Parser] = {"yes_no": _yes_no, "cchall_option": _cchall_option, "text": _text}


def get_parser(name: str) -> Parser:
    """The parser called exactly `name`; KeyError listing the valid names otherwise."""
    if name not in PARSERS:
        raise KeyError(f"unknown parser {name!r}; valid parsers: {', '.join(sorted(PARSERS))}")
    return PARSERS[name]
