"""What a built dataset folder holds, read back through the one dataset reader: rows and label counts per config."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from hallubench.builders import builder_for
from hallubench.builders.dataset_reader import DatasetFolder
from hallubench.builders.folder import SPLIT


def _counts(values: list) -> str:
    return ", ".join(f"{value} {count}" for value, count in sorted(Counter(map(str, values)).items()))


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
