"""Standard errors of a task's fraction metrics, for the whole task and each group, by bootstrap.

lm-evaluation-harness reports `<metric>_stderr` beside each metric: closed-form for means, bootstrap for
other aggregations. Our metrics return aggregates only (macro-F1, PA over "yes" references, ...), so every
fraction a metric declares (its `fractions`; never guessed from a value's range) gets the same method: the metric's own computation on resamples of the scored items, drawn
with replacement within each group (CMM's sub-categories have fixed sizes by design), seeded, so a
re-score gives identical numbers. For a plain accuracy this agrees with sqrt(p(1-p)/n). A metric that checks
and parses its items once (`_prepare`, see harness/scoring.py) is resampled as its parsed per-item arrays, so a
resample costs array indexing and the metric's counting, not its parsing.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Hashable, Sequence

import numpy as np

STDERR = "_stderr"  # suffix of a metric's standard error, lm-evaluation-harness' naming
RESAMPLES = 200
SEED = 0
METHOD = (f"bootstrap: standard deviation of the metric over {RESAMPLES} resamples of the scored items with "
          f"replacement within each group (seed {SEED})")


def fractions(values: dict[str, Any], names: Sequence[str]) -> dict[str, float]:
    """The fractions `names` (as the metric or task declares them: ARCHITECTURE.md, "The metric contract") that
    `values` holds a number for; an undefined one (None, e.g. PA without "yes" references) is left out."""
    return {name: float(values[name]) for name in names
            if isinstance(values.get(name), (int, float, np.number)) and not isinstance(values[name], bool)}


def reported_fractions(values: dict[str, Any]) -> dict[str, float]:
    """The fractions of a results.json metrics table: the metrics with a `<name>_stderr` beside them."""
    return fractions(values, [name for name in values if name + STDERR in values])


def _std(samples: dict[str, list[float]], names) -> dict[str, float | None]:
    """Sample standard deviation per metric; None where fewer than two resamples had a value."""
    return {name: float(np.std(samples[name], ddof=1)) if len(samples.get(name, ())) > 1 else None for name in names}


def _take(values: Any, picks: np.ndarray) -> Any:
    """The items `picks` of per-item `values`: a list, a numpy array, or a dict of those (like `groups`)."""
    if isinstance(values, dict):
        return {name: _take(column, picks) for name, column in values.items()}
    return values[picks] if isinstance(values, np.ndarray) else [values[i] for i in picks]


def bootstrap_stderr(compute: Callable[..., dict[str, Any]], per_item: dict[str, list], fixed: dict[str, Any],
                     strata: Sequence[Hashable], original: dict[str, Any], names: Sequence[str],
                     progress: str | None = None) -> tuple[dict[str, float | None], dict[str, dict[str, float | None]]]:
    """Stderr of each fraction `names` declares in `original` (a metric output) and of each group's fractions.

    `compute(**per_item resampled, **fixed)` is the metric's pure computation; `per_item` holds one value per
    scored item (lists or numpy arrays; a dict of them, like `groups`, is resampled inside); `strata` one
    stratum key per item.
    """
    blocks = defaultdict(list)
    for i, key in enumerate(strata):
        blocks[key].append(i)
    blocks = [np.asarray(idx) for idx in blocks.values()]
    rng = np.random.default_rng(SEED)
    overall: dict[str, list[float]] = defaultdict(list)
    by_group: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    from tqdm.auto import tqdm

    # disable=None: tqdm shows the bar on a terminal only (and honours TQDM_DISABLE).
    for _ in tqdm(range(RESAMPLES), desc=progress, disable=True if progress is None else None, leave=False):
        picks = np.concatenate([block[rng.integers(0, len(block), len(block))] for block in blocks])
        out = compute(**{name: _take(values, picks) for name, values in per_item.items()}, **fixed)
        for name, value in fractions(out, names).items():
            overall[name].append(value)
        for breakdown in out.get("by_group", {}).values():
            for group, values in breakdown.items():
                for name, value in fractions(values, names).items():
                    by_group[group][name].append(value)
    groups = {group: _std(by_group[group], fractions(values, names))
              for breakdown in original.get("by_group", {}).values() for group, values in breakdown.items()}
    return _std(overall, fractions(original, names)), groups
