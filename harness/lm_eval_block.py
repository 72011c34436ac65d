"""The lm-evaluation-harness view of a run's results, written into results.json beside hallubench's own keys so
lm-eval's tools read it: `lm_eval.utils.make_table(results)` prints the scores.

The keys are those lm-eval's `simple_evaluate` returns: `results` (task -> {"<metric>,none": value,
"<metric>_stderr,none": stderr, "alias": name}; each group of a task follows it as its own entry, shown
indented as lm-eval shows subtasks), `versions`, `n-shot`, `higher_is_better`, `n-samples` (`original`: the
task's items, `effective`: those run, fewer after `--limit`) and `config` (model, model_args, batch_size and,
for `--batch-size auto`, `batch_sizes` found). Only scalar metrics go in: lm-eval's table prints numbers.
"""
from __future__ import annotations

from typing import Any

from hallubench.benchmarks import all_tasks
from hallubench.harness.results_schema import GroupResult, Results
from hallubench.harness.uncertainty import STDERR

FILTER = "none"  # lm-eval's name for "no filter": hallubench parses outputs with the task's parser instead
LM_EVAL_KEYS = ("results", "versions", "n-shot", "higher_is_better", "n-samples", "config")


def _scores(result: GroupResult, alias: str) -> dict[str, Any]:
    scores: dict[str, Any] = {"alias": alias}
    for name, value in result.metrics.items():
        if name.endswith(STDERR) or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        scores[f"{name},{FILTER}"] = value
        stderr = result.metrics.get(name + STDERR)
        scores[f"{name}{STDERR},{FILTER}"] = stderr if isinstance(stderr, (int, float)) else "N/A"
    return scores


def lm_eval_block(results: Results) -> dict[str, Any]:
    """The lm-eval shaped keys for `results` (tasks scored across runs, with no metric of their own, left out)."""
    defined = all_tasks()
    block: dict[str, Any] = {key: {} for key in LM_EVAL_KEYS}
    for name, task in sorted(results.tasks.items()):
        if task.metric is None:
            continue
        entries = {name: _scores(task, name)}
        entries.update({f"{name}::{group}": _scores(result, f" - {group}") for group, result in task.groups.items()})
        n_shot = defined[name].num_fewshot if name in defined else 0
        for key, scores in entries.items():
            block["results"][key] = scores
            block["versions"][key] = task.version
            block["n-shot"][key] = n_shot
            block["higher_is_better"][key] = dict(task.higher_is_better)
        block["n-samples"][name] = {"original": task.n_total, "effective": task.n_selected}
    options = results.run.options
    block["config"] = {"model": results.model.name, "model_args": results.model.args,
                       "batch_size": options.get("batch_size"), "batch_sizes": list(results.run.auto_batch_sizes),
                       "limit": options.get("limit"), "gen_kwargs": options.get("gen_kwargs")}
    return block
