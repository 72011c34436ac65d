"""`hallubench tasks [NAME]`: every registered task with its one-line description, grouped by benchmark, with what
it needs (the media its prompts carry, the helper roles of its steps) and what scores it; `NAME` (a task or a
group) for the detail. `hallubench run --tasks list` prints the same listing (lm-eval's spelling). Read from the
TASKS registry (benchmarks/catalog.py), plug-ins included: no list of tasks is kept here."""
from __future__ import annotations

import argparse
import dataclasses
import json

from hallubench.benchmarks.catalog import TaskSummary, catalog
from hallubench.errors import ConfigError, did_you_mean
from hallubench.registry import MINI_RELEASES

WIDTH = 70  # a description longer than this is cut in the listing (the detail prints it whole)
RUN = "hallubench run --model hf --model-args pretrained=CHECKPOINT --tasks {} --data-dir DATA"


def _cut(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


def _helpers(summary: TaskSummary) -> str:
    return ", ".join(f"{role} ({default})" for role, default in summary.helpers.items()) or "-"


def _scored_by(summary: TaskSummary) -> str:
    return "crosscheck (hallubench rank)" if summary.cross_checkable and summary.scored_by.startswith("crosscheck") \
        else summary.scored_by.split()[0]


def _table(rows: list[list[str]], indent: str = "  ") -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(indent + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)


def listing() -> str:
    """Every task, by group: a group's line says the benchmark and how to build its dataset; a task's row its
    medium, its helper roles (what answers each without `--helper ROLE`), what scores it and, when its description
    is not its group's, its own."""
    groups = catalog()
    lines = [f"{sum(map(len, groups.values()))} tasks in {len(groups)} groups. Run some with `hallubench run --tasks "
             "NAME[,NAME...]`; one task's or group's detail: `hallubench tasks NAME`.", ""]
    for group, tasks in groups.items():
        about = next((task.description for task in tasks if task.name == group), tasks[0].description)
        mini = ", or --data-dir mini" if group in MINI_RELEASES else ""
        lines.append(f"{group}: {_cut(about, 100)} (dataset: hallubench build {group}{mini})")
        rows = [["task", "medium", "helper roles (without --helper)", "scored by", "note"]]
        rows += [[task.name, task.medium, _helpers(task), _scored_by(task),
                  _cut(task.description) if task.description != about else ""] for task in tasks]
        lines += [_table(rows), ""]
    return "\n".join(lines).rstrip()


def detail(summary: TaskSummary) -> str:
    """One task: its whole description and each thing it needs, with the command that runs it."""
    helpers = "; ".join(f"--helper {role} \"adapter=...,pretrained=...\" (without it: {default})"
                        for role, default in summary.helpers.items()) or "none"
    return "\n".join([
        f"{summary.name} (group {summary.group})",
        f"  {summary.description}",
        f"  dataset:   benchmark {summary.group}, config {summary.config} (hallubench build {summary.group}"
        + ("; --data-dir mini holds a synthetic mini copy)" if summary.group in MINI_RELEASES else ")"),
        f"  medium:    {summary.medium}",
        f"  helpers:   {helpers}",
        f"  scored by: {summary.scored_by}",
        f"  samples:   {'draws stochastic samples (CrossCheck evidence: rank its runs with hallubench rank)' if summary.cross_checkable else 'none'}",
        f"  run:       {RUN.format(summary.name)}",
    ])


def _summaries(name: str) -> list[TaskSummary]:
    """The task `name`, or every task of the group `name`; ConfigError with the closest names otherwise."""
    groups = catalog()
    tasks = {task.name: task for group in groups.values() for task in group}
    if name in tasks:
        return [tasks[name]]
    if name in groups:
        return groups[name]
    raise ConfigError(f"no task or group {name!r}{did_you_mean(name, [*tasks, *groups])}; `hallubench tasks` lists "
                      f"the {len(tasks)} tasks")


def _tasks(args: argparse.Namespace) -> int:
    summaries = [summary for name in args.names for summary in _summaries(name)] if args.names else None
    if args.json:
        chosen = summaries or [task for group in catalog().values() for task in group]
        print(json.dumps([dataclasses.asdict(summary) for summary in chosen], indent=2))
    elif summaries:
        print("\n\n".join(detail(summary) for summary in summaries))
    else:
        print(listing())
    return 0


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    parser = subparsers.add_parser("tasks", help=summary, description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="a task or a group (benchmark): print its detail instead of the listing")
    parser.add_argument("--json", action="store_true", help="print the tasks as JSON (one object per task)")
    parser.set_defaults(func=_tasks)
