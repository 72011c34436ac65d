"""A model repo's `.eval_results/*.yaml` files (the Hub's "Evaluation Results") from a run's results.

Format: https://huggingface.co/docs/hub/eval-results: each file is a YAML list of entries
`{dataset: {id, task_id, revision}, value, date, source: {url, name}, notes}`, built here with huggingface_hub's
`EvalResultEntry` and serialised by its `eval_result_entries_to_yaml`. An entry points at the *benchmark*
dataset (a pushed `hallubench build` folder, which carries the `eval.yaml` defining the task ids), never at
the results dataset, and holds one score: task_id `<task>_<score>` as in that eval.yaml (e.g. `cmm_pa`,
`cmm_hr`); counts and ratios such as `yes_ratio` are not scores and stay in results.json. One file per task:
`.eval_results/hallubench_<task>.yaml`. Tasks scored across runs (crosscheck) or whose benchmark has no Hub
id get no file.
"""
from __future__ import annotations

from pathlib import Path

import yaml
from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml
from huggingface_hub.utils import HFValidationError, validate_repo_id

from hallubench.benchmarks import all_tasks
from hallubench.builders.eval_yaml import published_scores, task_id
from hallubench.publish.dataset_card import is_scalar
from hallubench.harness.results_schema import Results, TaskResult


def hub_model_id(results: Results) -> str | None:
    """The model's Hub repo id as recorded in the run's model args, or None for a local path or API name."""
    name = results.model.args.get("pretrained") or results.model.args.get("model")
    if not isinstance(name, str) or name.count("/") != 1 or Path(name).exists():
        return None
    try:
        validate_repo_id(name)
    except HFValidationError:
        return None
    return name


def _notes(results: Results, task: TaskResult) -> str:
    version = results.environment.packages.get("hallubench", "unknown")
    modality = results.run.options.get("modality", "audio-visual")
    # A --limit run scores a subset: say so, since the Hub shows this value next to full-benchmark ones.
    subset = f" of {task.n_total} (a subset)" if task.n_selected < task.n_total else ""
    return (f"hallubench {version}, {modality}, n={task.n_selected}{subset}, scored={task.n_scored}, "
            f"unreadable={task.n_unreadable}, errors={task.n_errors}")


def _scores(results: Results, name: str) -> list[str]:
    """The published scores task `name` has values of (none for tasks scored across runs)."""
    task = results.tasks[name]
    defined = all_tasks().get(name)  # the task's own directions: results.json from older versions lack them
    scores = published_scores(defined.higher_is_better) if defined is not None and task.metric else []
    return [score for score in scores if is_scalar(task.metrics.get(score))]


def task_ids(results: Results, benchmark: str) -> dict[str, list[str]]:
    """Task name -> the eval.yaml task ids its entries use, for the tasks of `benchmark` with scores."""
    ids = {name: [task_id(name, score) for score in _scores(results, name)]
           for name, task in results.tasks.items() if task.benchmark == benchmark}
    return {name: found for name, found in ids.items() if found}


def task_entries(results: Results, name: str, dataset_id: str, source_url: str,
                 revision: str | None = None) -> list[EvalResultEntry]:
    """One entry per score of task `name` (empty for tasks scored across runs), on the benchmark dataset
    `dataset_id` at `revision` (the commit the scores were made on)."""
    task = results.tasks[name]
    return [EvalResultEntry(dataset_id=dataset_id, dataset_revision=revision, task_id=task_id(name, score),
                            value=task.metrics[score], date=results.run.finished or None, source_url=source_url,
                            source_name="hallubench samples and results", notes=_notes(results, task))
            for score in _scores(results, name)]


def eval_result_files(results: Results, source_url: str, benchmark_ids: dict[str, str],
                      revisions: dict[str, str] | None = None) -> tuple[dict[str, bytes], list[str]]:
    """(`.eval_results/hallubench_<task>.yaml` path -> YAML bytes, benchmarks with scores but no Hub id).

    `benchmark_ids` maps benchmark names to the Hub dataset repos holding them (with their eval.yaml), `revisions`
    benchmark names to the commit of that repo the scores were made on (each entry's `dataset.revision`).
    """
    files, unnamed = {}, set()
    for name in sorted(results.tasks):
        benchmark = results.tasks[name].benchmark
        if benchmark not in benchmark_ids:
            if _scores(results, name):
                unnamed.add(benchmark)
            continue
        entries = task_entries(results, name, benchmark_ids[benchmark], source_url, (revisions or {}).get(benchmark))
        if entries:
            text = yaml.safe_dump(eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True)
            files[f".eval_results/hallubench_{name}.yaml"] = text.encode()
    return files, sorted(unnamed)
