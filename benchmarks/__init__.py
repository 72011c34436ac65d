"""Benchmark tasks and their parsers. Importing this package imports each of its modules, and each module
registers what its benchmark owns (`hallubench.registry.register_task`, `register_parser`); adding a
task is one file.

Lookup is by exact name; an unknown name raises an error listing the valid ones.
"""
from __future__ import annotations

from typing import Any, Callable

from hallubench.benchmarks.task import MediaSpec, Task
from hallubench.registry import PARSERS, TASKS, discover_modules

__all__ = ["MediaSpec", "Task", "all_tasks", "get_parser", "get_task", "task_names"]


def all_tasks() -> dict[str, Task]:
    """Every registered task, by name."""
    return dict(TASKS)


def task_names() -> list[str]:
    """Sorted names of all registered tasks."""
    return sorted(TASKS)


def get_task(name: str) -> Task:
    """The task called exactly `name`; KeyError listing the valid names otherwise."""
    return TASKS.lookup(name)


def get_parser(name: str) -> Callable[..., Any]:
    """The parser called exactly `name` (raw text + the task's metric_inputs -> answer, None if unparseable)."""
    return PARSERS.lookup(name)


discover_modules(__name__, __path__)
