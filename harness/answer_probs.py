"""The answer-word probabilities of a run's samples (`--answer-probs`), per perturbation level and group.

CMM's Figure 2 plots, against the blur or noise level, the model's probability of a hallucinatory "yes" and of a
correct "no" on probes whose answer is "no". Here every sample answered with `answer_probs` counts: per level
(`unperturbed` without `--perturb`), per group of the task ("all" and each of its groups, e.g. CMM's sub-categories)
and per reference answer, the mean probability of each answer word, with a 95% bootstrap percentile interval of the
mean, and the largest per-sample sum of the words' probabilities (at most 1: the words' token ids are disjoint).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

UNPERTURBED = "unperturbed"
RESAMPLES = 1000
SEED = 0
INTERVAL = (f"95% bootstrap percentile interval of the mean over {RESAMPLES} resamples of the samples with "
            f"replacement (seed {SEED})")


def level_order(label: str) -> tuple[str, float]:
    """Levels from the clean end of each ladder to the degraded one: blur sigma up, signal-to-noise ratio down."""
    if label == UNPERTURBED:
        return ("", 0.0)
    kind, _, level = label.partition("=")
    value = float(level)
    return (kind, -value if kind == "audio_snr" else value)


def _groups(record: dict[str, Any]) -> list[str]:
    """"all" and the record's task groups, without the level prefix a perturbed record's groups carry."""
    group = record.get("group")
    names = [] if group is None else [group] if isinstance(group, str) else list(group)
    label = (record.get("perturbation") or {}).get("label")
    if label is not None:
        names = [name[len(label) + 3:] for name in names if name.startswith(f"{label} / ")]
    return ["all", *names]


def _mean_interval(values: np.ndarray, rng: np.random.Generator) -> tuple[float, list[float]]:
    means = values[rng.integers(0, len(values), (RESAMPLES, len(values)))].mean(axis=1)
    return float(values.mean()), [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]


def _reference(record: dict[str, Any]) -> str:
    reference = record.get("reference")
    return str(reference).strip().lower() if reference is not None else "none"


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """{"words", "interval", "levels" (clean to degraded), "by_level": level -> group -> "reference=<answer>" ->
    {"n", "<word>", "<word>_ci", ..., "max_sum"}}; {} when no record has answer probabilities."""
    cells: dict[tuple[str, str, str], list[dict[str, float]]] = defaultdict(list)
    words: list[str] = []
    for record in records:
        probs = record.get("answer_probs")
        if record.get("error") is not None or not probs:
            continue
        words = words or list(probs)
        label = (record.get("perturbation") or {}).get("label", UNPERTURBED)
        for group in _groups(record):
            cells[(label, group, f"reference={_reference(record)}")].append(probs)
    if not cells:
        return {}
    rng = np.random.default_rng(SEED)
    by_level: dict[str, dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
    for (label, group, reference), rows in sorted(cells.items()):
        values = np.array([[row[word] for word in words] for row in rows], dtype=np.float64)
        cell: dict[str, Any] = {"n": len(rows)}
        for column, word in enumerate(words):
            cell[word], cell[f"{word}_ci"] = _mean_interval(values[:, column], rng)
        cell["max_sum"] = float(values.sum(axis=1).max())
        by_level[label][group][reference] = cell
    levels = sorted(by_level, key=level_order)
    return {"words": words, "interval": INTERVAL, "levels": levels,
            "by_level": {label: {group: dict(refs) for group, refs in by_level[label].items()} for label in levels}}
