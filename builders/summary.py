"""What a built dataset folder holds, read back through the one dataset reader: rows and label counts per config."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from hallubench.builders import builder_for
from hallubench.builders.dataset_reader import DatasetFolder
from hallubench.builders.folder import SPLIT


LABEL_WIDTH = 24  # a label value longer than this (a caption, a free-text answer) is cut
MOST_LABELS = 6  # distinct values shown per column; the rest are counted


def _counts(values: list) -> str:
    """`value count, ...` of a label column: values cut to LABEL_WIDTH characters, at most MOST_LABELS of them (the
    commonest; the others counted), so a column of captions stays one short cell."""
    counts = Counter(map(str, values))
    shown = sorted(counts.most_common(MOST_LABELS)) if len(counts) > MOST_LABELS else sorted(counts.items())
    cells = [f"{_cut(value)} {count}" for value, count in shown]
    if len(counts) > len(shown):
        cells.append(f"{len(counts) - len(shown)} other values")
    return ", ".join(cells)


def _cut(value: str) -> str:
    return value if len(value) <= LABEL_WIDTH else value[:LABEL_WIDTH - 3].rstrip() + "..."


def summarize(benchmark: str, folder: str | Path) -> list[list[str | int]]:
    """One row per config: benchmark, config, rows, and the value counts of the builder's label columns."""
    columns = builder_for(benchmark).SUMMARY_COLUMNS
    dataset = DatasetFolder(folder)
    rows = []
    for config in dataset.configs:
        ds = dataset.load(config, SPLIT)
        labels = "; ".join(f"{column}: {_counts(ds[column])}" for column in columns)
        rows.append([benchmark, config, len(ds), labels])
    return rows
