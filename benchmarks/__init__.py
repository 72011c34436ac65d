"""Benchmark tasks. Each module here that defines `TASKS` contributes its tasks; adding a task is one file.

Lookup is by exact name; an unknown name raises an error listing the valid ones.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from hallubench.benchmarks.task import MediaSpec, Task

__all__ = ["MediaSpec", "Task", "get_task", "task_names", "all_tasks"]


@lru_cache(maxsize=1)
def all_tasks() -> dict[str, Task]:
    """Every task defined by a module of this package, by name."""
    tasks: dict[str, Task] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for task in getattr(module, "TASKS", ()):
            if task.name in tasks:
                raise ValueError(f"task {task.name!r} is defined twice (second time in {module.__file__})")
            tasks[task.name] = task
    return tasks


def task_names() -> list[str]:
    """Sorted names of all registered tasks."""
    return sorted(all_tasks())


def get_task(name: str) -> Task:
    """The task called exactly `name`; KeyError listing the valid names otherwise."""
    tasks = all_tasks()
    if name not in tasks:
        raise KeyError(f"unknown task {name!r}; valid tasks: {', '.join(sorted(tasks))}")
    return tasks[name]
