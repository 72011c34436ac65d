"""Answer extractors shared by several benchmarks (the lm-eval `filters` idea): raw model text -> parsed
answer or None (unparseable, counted as such). The yes/no parser is the `pa_hr` metric's own, so the
parsed answer in the samples log is exactly what the metric scores. Metric modules import `evaluate`
(seconds), so parsers import them on first use: listing the tasks (e.g. for `--help`) stays instant."""
from __future__ import annotations

from hallubench.registry import register_parser


@register_parser("yes_no")
def yes_no(text: str) -> str | None:
    """The `pa_hr` metric's own parse (`parse_yes_no`): "yes", "no", or None when unparseable."""
    from hallubench.metrics.pa_hr.pa_hr import parse_yes_no

    return parse_yes_no(text)


@register_parser("text")
def text(text: str) -> str | None:
    """Free-form answers: the stripped text; an empty answer is unparseable."""
    return text.strip() or None
