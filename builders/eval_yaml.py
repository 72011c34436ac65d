"""The benchmark's `eval.yaml` (https://huggingface.co/docs/hub/eval-results), written by `build` next to the card,
so a pushed dataset folder is a Hub benchmark whose leaderboard collects the models' `.eval_results` entries.

Its task ids are `<hallubench task>_<score>` for every task of the benchmark scored by a metric of its own and
every score of that metric (counts and ratios such as `yes_ratio` describe a run and are not published).
`hallubench publish` uses the same ids (publish/eval_results.py), so entries always name a task defined here.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

FILE = "eval.yaml"


def published_scores(higher_is_better: Mapping[str, bool | None]) -> list[str]:
    """The values that are scores (higher is better: a task's `higher_is_better`) and go to the Hub."""
    return [name for name, better in higher_is_better.items() if better]


def task_id(task: str, score: str) -> str:
    return f"{task}_{score}"


def scored_tasks(benchmark: str) -> list:
    """The hallubench tasks of `benchmark` scored by a metric of their own with published scores."""
    from hallubench.benchmarks import all_tasks

    return [task for task in all_tasks().values()
            if task.benchmark == benchmark and task.metric is not None and published_scores(task.higher_is_better)]


def eval_yaml(benchmark: str, name: str) -> str | None:
    """eval.yaml text for `benchmark`, or None when no task of it is scored on its own (e.g. CrossCheck-ranked)."""
    tasks = scored_tasks(benchmark)
    if not tasks:
        return None
    description = (f"{name}, converted from the official release by `hallubench build {benchmark}`. Evaluate a model "
                   f"with `hallubench run --tasks {','.join(t.name for t in tasks)} --data-dir <this repo>` and "
                   "publish the scores with `hallubench publish`.")
    entries: list[dict[str, Any]] = [{"id": task_id(task.name, score), "config": task.config, "split": task.split}
                                     for task in tasks for score in published_scores(task.higher_is_better)]
    return yaml.safe_dump({"name": name, "description": description, "evaluation_framework": "hallubench",
                           "tasks": entries}, sort_keys=False, allow_unicode=True)
