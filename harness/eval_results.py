"""A model repo's `.eval_results/*.yaml` files (the Hub's "Evaluation Results") from a run's results.

Format: https://huggingface.co/docs/hub/eval-results: each file is a YAML list of entries
`{dataset: {id, task_id}, value, date, source: {url, name}, notes}`, built here with huggingface_hub's
`EvalResultEntry` and serialised by its `eval_result_entries_to_yaml`. An entry holds one value for one
(dataset, task_id), so each scalar metric of a task is its own entry with task_id `<task>_<metric>`
(e.g. `cmm_pa`, `cmm_hr`). One file per task: `.eval_results/hallubench_<task>.yaml`. Tasks scored across
runs (no metric of their own, e.g. crosscheck) get no file.
"""
from __future__ import annotations

from pathlib import Path

import yaml
from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml
from huggingface_hub.utils import HFValidationError, validate_repo_id

from hallubench.harness.dataset_card import is_scalar
from hallubench.harness.uncertainty import STDERR
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
    return (f"hallubench {version}, {modality}, n={task.n_selected}{subset}, unparsed={task.n_unparsed}, "
            f"errors={task.n_errors}")


def task_entries(results: Results, name: str, dataset_id: str, source_url: str) -> list[EvalResultEntry]:
    """One entry per scalar metric of task `name` (empty for tasks scored across runs)."""
    task = results.tasks[name]
    if task.metric is None:
        return []
    return [EvalResultEntry(dataset_id=dataset_id, task_id=f"{name}_{metric}", value=value,
                            date=results.run.finished or None, source_url=source_url,
                            source_name="hallubench samples and results", notes=_notes(results, task))
            for metric, value in task.metrics.items() if is_scalar(value) and not metric.endswith(STDERR)]


def eval_result_files(results: Results, results_repo: str, source_url: str,
                      benchmark_ids: dict[str, str] | None = None) -> dict[str, bytes]:
    """`.eval_results/hallubench_<task>.yaml` path -> YAML bytes.

    The entry's dataset is the benchmark's Hub id when `benchmark_ids` maps the task's benchmark to one,
    otherwise the results dataset `results_repo`.
    """
    files = {}
    for name in sorted(results.tasks):
        dataset_id = (benchmark_ids or {}).get(results.tasks[name].benchmark, results_repo)
        entries = task_entries(results, name, dataset_id, source_url)
        if entries:
            text = yaml.safe_dump(eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True)
            files[f".eval_results/hallubench_{name}.yaml"] = text.encode()
    return files
