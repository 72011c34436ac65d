"""Every row a run will use, checked before any model loads: the task can build its prompt, read its reference
(a label its metric scores), its metric inputs and groups, and every media path stays inside the dataset folder.

A dataset from the Hub or from someone else is data we did not write: a bad row is a `DatasetRowError` naming the
folder, task, row id and column, raised before the weights load and long before generation, never a traceback
after all samples were generated.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from hallubench.benchmarks.task import Task
from hallubench.errors import DatasetRowError
from hallubench.harness.media import media_columns, media_file


def check_rows(task: Task, folder: Path, rows: list[dict[str, Any]]) -> None:
    """DatasetRowError for the first row of `rows` the task cannot run or score."""
    readers = {"prompt": task.prompt, "reference": task.reference, "metric inputs": task.metric_inputs,
               "group": task.group}
    fix = (f"Fix the dataset, or rebuild it from the official release with `hallubench build {task.benchmark}` and "
           "pass that folder as --data-dir.")
    for row in rows:
        where = f"{folder}: task {task.name!r} row {row.get('id')!r}"
        for what, read in readers.items():
            if read is None:
                continue
            try:
                read(row)
            except KeyError as err:
                raise DatasetRowError(f"{where}: no column or field {err.args[0]!r}, which the task's {what} reads. "
                                      f"{fix}") from None
            except (ValueError, TypeError, AttributeError, IndexError) as err:
                raise DatasetRowError(f"{where}: its {what} cannot be read: {err}. {fix}") from None
        for column in media_columns(task):
            if column not in row:
                raise DatasetRowError(f"{where}: no column {column!r}, which holds the task's media. {fix}")
            media_file(task, row, column, folder)
