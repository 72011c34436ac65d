"""What a run has to do: one WorkItem per (task, sample), with its key, seed and settings.

A sample's key hashes everything its output depends on (task, id, the prompt text, model fingerprint,
generation settings, media options, seed), so a rerun recognises finished samples and a changed setting or
an edited task prompt redoes them.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hallubench.benchmarks.task import Task
from hallubench.harness.data import dataset_dir, load_rows
from hallubench.harness.options import RunOptions
from hallubench.harness.sharding import sample_seed, stable_hash
from hallubench.models.protocol import GenerationSettings


@dataclass(frozen=True)
class WorkItem:
    task: Task
    row: dict[str, Any]
    dataset_dir: Path
    key: str
    seed: int
    generation: GenerationSettings
    sample_generation: GenerationSettings | None

    @property
    def id(self) -> str:
        return str(self.row["id"])


def effective_settings(task: Task, options: RunOptions) -> tuple[GenerationSettings, GenerationSettings | None]:
    """The task's settings with `--gen-kwargs` applied; `--num-samples` sets (0 drops) the extra samples.

    `max_new_tokens` from --gen-kwargs also caps the extra samples; their temperature/top-p stay the paper's.
    """
    main = dataclasses.replace(task.generation, **options.gen_kwargs)
    extra = task.samples
    if extra is not None and options.num_samples is not None:
        extra = dataclasses.replace(extra, n=options.num_samples) if options.num_samples > 0 else None
    if extra is not None and "max_new_tokens" in options.gen_kwargs:
        extra = dataclasses.replace(extra, max_new_tokens=options.gen_kwargs["max_new_tokens"])
    return main, extra


def plan(tasks: list[Task], data_dir: Path, options: RunOptions, fingerprint: str) -> tuple[list[WorkItem], dict[str, int]]:
    """All work items in (task, id) order and each task's split size (without the rows it excludes)."""
    items: list[WorkItem] = []
    totals: dict[str, int] = {}
    for task in tasks:
        folder = dataset_dir(data_dir, task)
        rows, totals[task.name] = load_rows(folder, task, None if task.exclude else options.limit)
        if task.exclude is not None:
            rows = [row for row in rows if not task.exclude(row)]
            totals[task.name] = len(rows)
            rows = rows[:options.limit]
        main, extra = effective_settings(task, options)
        settings = (dataclasses.asdict(main), extra and dataclasses.asdict(extra))
        for row in rows:
            sid = str(row["id"])
            key = stable_hash(task.name, sid, task.prompt(row), fingerprint, settings, options.media_options(),
                              options.seed)[:32]
            items.append(WorkItem(task, row, folder, key, sample_seed(options.seed, task.name, sid), main, extra))
    items.sort(key=lambda item: (item.task.name, item.id))
    return items, totals
