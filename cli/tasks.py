"""`hallubench tasks [NAME]`: every registered task with its one-line description, grouped by benchmark, with what
it needs (the media its prompts carry, the helper roles of its steps) and what scores it; `NAME` (a task or a
group) for the detail. `hallubench run --tasks list` prints the same listing (lm-eval's spelling). Read from the
TASKS registry (benchmarks/catalog.py), plug-ins included: no list of tasks is kept here."""
from __future__ import annotations

import argparse
import dataclasses
import json

from hallubench.benchmarks.catalog import TaskSummary, catalog
from hallubench.cli.listing import WIDTH, cut, paragraph, table
from hallubench.errors import ConfigError, did_you_mean
from hallubench.registry import MINI_RELEASES

RUN = "hallubench run --model hf --model-args pretrained=CHECKPOINT \\\n             --tasks {} --data-dir DATA"


def _helpers(summary: TaskSummary) -> str:
    return ", ".join(f"{role} ({default})" for role, default in summary.helpers.items())


def _scored_by(summary: TaskSummary) -> str:
    return "crosscheck (hallubench rank)" if summary.cross_checkable and summary.scored_by.startswith("crosscheck") \
        else summary.scored_by.split()[0]


def _shared(tasks: list[TaskSummary], trait) -> str | None:
    values = {trait(task) for task in tasks}
    return values.pop() if len(values) == 1 else None


def listing() -> str:
    """Every task, by group: the group's benchmark, how to build its dataset and what its tasks share (medium,
    scorer); then one line per task, its own description and whatever of those it does not share, and the helper
    roles of its steps (what answers each without `--helper ROLE`)."""
    groups = catalog()
    lines = [paragraph(f"{sum(map(len, groups.values()))} tasks in {len(groups)} groups. Run some with `hallubench "
                       "run --tasks NAME[,NAME...]`; one task's or group's detail: `hallubench tasks NAME`; all of "
                       "it: `hallubench tasks --json`.", hanging=""), ""]
    for group, tasks in groups.items():
        about = next((task.benchmark_about for task in tasks if task.name == group), tasks[0].benchmark_about)
        medium, scorer = _shared(tasks, lambda t: t.medium), _shared(tasks, _scored_by)
        lines.append(cut(f"{group}: {about}", WIDTH))
        shared = [medium, scorer and f"scored by {scorer}",
                  f"dataset: hallubench build {group}" + (", or --data-dir mini" if group in MINI_RELEASES else "")]
        lines.append(paragraph(" · ".join(part for part in shared if part), indent="  "))
        rows = []
        for task in tasks:
            own = [task.medium if medium is None else "", "" if scorer else f"scored by {_scored_by(task)}",
                   _helpers(task) and f"helpers: {_helpers(task)}"]
            rows.append([task.name, task.description + "".join(f" [{part}]" for part in own if part)])
        lines += [table(rows), ""]
    return "\n".join(lines).rstrip()


def detail(summary: TaskSummary) -> str:
    """One task: its whole description and each thing it needs, with the command that runs it."""
    helpers = "; ".join(f"--helper {role} \"adapter=...,pretrained=...\" (without it: {default})"
                        for role, default in summary.helpers.items()) or "none"
    mini = "; --data-dir mini holds a synthetic mini copy" if summary.group in MINI_RELEASES else ""
    samples = ("draws stochastic samples (CrossCheck evidence: rank its runs with hallubench rank)"
               if summary.cross_checkable else "none")
    fields = [("dataset", f"benchmark {summary.group}, config {summary.config} (hallubench build {summary.group}{mini})"),
              ("medium", summary.medium), ("helpers", helpers), ("scored by", summary.scored_by),
              ("samples", samples)]
    return "\n".join([f"{summary.name} (group {summary.group})", paragraph(summary.description, "  ", "  "),
                      *(paragraph(text, f"  {name + ':':<11}", " " * 13) for name, text in fields),
                      f"  run:       {RUN.format(summary.name)}"])


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
