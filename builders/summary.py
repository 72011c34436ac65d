"""What a built dataset folder holds, read back with plain `datasets`: rows and label counts per config."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import datasets

from hallubench.builders import builder_for


def _counts(values: list) -> str:
    return ", ".join(f"{value} {count}" for value, count in sorted(Counter(map(str, values)).items()))


def summarize(benchmark: str, folder: str | Path) -> list[list[str | int]]:
    """One row per config: benchmark, config, rows, and the value counts of the builder's label columns."""
    columns = builder_for(benchmark).SUMMARY_COLUMNS
    rows = []
    for config in datasets.get_dataset_config_names(str(folder)):
        ds = datasets.load_dataset(str(folder), config, split="test")
        labels = "; ".join(f"{column}: {_counts(ds[column])}" for column in columns)
        rows.append([benchmark, config, len(ds), labels])
    return rows
