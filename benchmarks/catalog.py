"""What each registered task is and needs, read from the task itself (`hallubench tasks`, `run --tasks list`): its
one-line description, its group (the benchmark whose dataset it reads), the media its prompts carry, the helper
roles of its steps, and how it is scored. Nothing here lists tasks: a task registered tomorrow is described too."""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from hallubench.benchmarks.task import Task
from hallubench.registry import TASKS

MEDIA_COLUMNS = ("video", "audio", "image")  # MediaSpec's fields naming a medium's column


@dataclass(frozen=True)
class TaskSummary:
    name: str
    group: str  # the benchmark: `hallubench build <group>` makes its dataset
    config: str
    description: str  # the task's own line (Task.description), else its module's first sentence
    benchmark_about: str  # the first sentence of the module that defines it: what its benchmark is
    medium: str  # "video+audio", "image", ... or "text"
    helpers: dict[str, str]  # role -> what answers it without `--helper ROLE` ("the model" or "skipped")
    scored_by: str  # the metric, or what ranks it across runs
    cross_checkable: bool  # draws stochastic samples (CrossCheck evidence)


def first_sentence(text: str | None) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    paragraph = " ".join((text or "").strip().split("\n\n")[0].split())
    return re.split(r"(?<=[a-z0-9)])\. (?=[A-Z])", paragraph, maxsplit=1)[0].rstrip(".")


def describe(task: Task) -> TaskSummary:
    module = sys.modules.get(getattr(task.prompt, "__module__", "") or "")
    media = [medium for medium in MEDIA_COLUMNS if getattr(task.media, medium)]
    helpers = {role: "the model" if default == "target" else "skipped"
               for role, default in sorted(task.program.helpers.items())} if task.program else {}
    about = first_sentence(getattr(module, "__doc__", None))
    return TaskSummary(name=task.name, group=task.benchmark, config=task.config,
                       description=task.description or about, benchmark_about=about,
                       medium="+".join(media) or "text", helpers=helpers,
                       scored_by=task.metric or task.scored_by or "-", cross_checkable=task.cross_checkable)


def catalog() -> dict[str, list[TaskSummary]]:
    """Every registered task's summary, by group (benchmark), groups and tasks sorted by name."""
    groups: dict[str, list[TaskSummary]] = {}
    for name in sorted(TASKS):
        summary = describe(TASKS[name])
        groups.setdefault(summary.group, []).append(summary)
    return dict(sorted(groups.items()))
