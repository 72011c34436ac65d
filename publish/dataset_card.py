"""The README.md of a published results dataset: YAML `configs:` (one per model and task samples parquet) and
a markdown card with the latest model's results table, the models in the repo, the hallubench version and how
to rerun the evaluation.

Layout of the repo: one folder per model (`<model>/results.json`, `<model>/results.png`,
`<model>/samples/<task>.parquet`), so publishing a second model adds its folder and keeps the first's; the
card lists the configs of every model folder in the repo, named `<model>--<task>`.
"""
from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath
from typing import Any

import yaml

from hallubench.harness.results_schema import Results, TaskResult
from hallubench.harness.report import markdown_table
from hallubench.harness.uncertainty import STDERR

# RunOptions fields that describe where files went on the machine that ran, not what was evaluated.
_LOCAL_OPTIONS = ("output_dir",)


def model_folder(results: Results) -> str:
    """The model's folder in the results repo: its Hub id with `/` as `--`, else the checkpoint folder's name."""
    label = model_label(results)
    name = label.replace("/", "--") if label.count("/") == 1 and not label.startswith(("/", ".")) else \
        PurePosixPath(label.replace("\\", "/")).name
    return re.sub(r"[^A-Za-z0-9_.\-]+", "-", name).strip("-.") or "model"


def samples_path(folder: str, task: str) -> str:
    """Where a model's samples parquet of a task goes in the results dataset."""
    return f"{folder}/samples/{task}.parquet"


def sample_configs(paths: list[str]) -> dict[str, str]:
    """Config name `<model>--<task>` -> samples parquet, for every `<model>/samples/<task>.parquet` in `paths`."""
    configs = {}
    for path in sorted(paths):
        parts = PurePosixPath(path).parts
        if len(parts) == 3 and parts[1] == "samples" and parts[2].endswith(".parquet"):
            configs[f"{parts[0]}--{parts[2].removesuffix('.parquet')}"] = path
    return configs


def _flag_value(value: Any) -> str:
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def reproduce_command(results: Results) -> str:
    """The `hallubench run` command line rebuilt from the options recorded in results.json."""
    words = ["hallubench", "run"]
    for name, value in results.run.options.items():
        if name in _LOCAL_OPTIONS or value is None or value == {} or value == []:
            continue
        words += [f"--{name.replace('_', '-')}", _flag_value(value)]
    return shlex.join(words)


def is_scalar(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _format(value: float) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _stderr(value: float | None) -> str:
    return "" if value is None else f" ± {value:.4f}"


def _task_rows(name: str, task: TaskResult) -> list[list[Any]]:
    counts = [task.n_selected, task.n_unparsed, task.n_errors]
    if task.metric is None:
        return [[name, "-", f"scored by {task.scored_by}", *counts]]
    rows = [[name, metric, _format(value) + _stderr(task.metrics.get(metric + STDERR)), *counts]
            for metric, value in task.metrics.items() if is_scalar(value) and not metric.endswith(STDERR)]
    return rows or [[name, "-", "no metric value (all samples failed or unparsed)", *counts]]


def results_table(results: Results) -> str:
    """Markdown table: one row per task and scalar metric, with the sample counts behind it."""
    rows = [row for name, task in sorted(results.tasks.items()) for row in _task_rows(name, task)]
    return markdown_table(["task", "metric", "value", "n", "unparsed", "errors"], rows)


def card_metadata(results: Results, samples: list[str]) -> dict[str, Any]:
    """The card's YAML header: tags and one `configs:` entry per model and task with samples."""
    configs = [{"config_name": name, "data_files": [{"split": "test", "path": path}]}
               for name, path in sample_configs(samples).items()]
    tags = ["hallubench", "evaluation", "hallucination"] + (["hallubench-mini-data"] if results.run.mini_data else [])
    return {"pretty_name": f"hallubench results: {model_label(results)}", "tags": tags, "configs": configs}


def model_label(results: Results) -> str:
    """The checkpoint (or served model) name if the run recorded one, else the adapter name."""
    args = results.model.args
    return str(args.get("pretrained") or args.get("model") or results.model.name or "unknown model")


def dataset_card(results: Results, repo_id: str, samples: list[str], chart: bool = False) -> str:
    """The full README.md text; `samples`: every samples parquet the repo holds after this commit (all models);
    `chart`: the model's folder also holds results.png, shown under the table."""
    env = results.environment
    version = env.packages.get("hallubench", "unknown")
    folder = model_folder(results)
    configs = sample_configs(samples)
    mine = [name for name in configs if name.startswith(f"{folder}--")]
    models = sorted({PurePosixPath(path).parts[0] for path in configs.values()})
    header = yaml.safe_dump(card_metadata(results, samples), sort_keys=False, allow_unicode=True)
    scored_from = (f"\nScores were recomputed from the saved outputs of `{results.run.from_outputs}`.\n"
                   if results.run.from_outputs else "")
    data_note = ("\n`--data-dir` is where the built datasets were on the machine that ran; point it at your own "
                 "`hallubench build` output.\n" if results.run.options.get("data_dir") else "")
    load = (f'```python\nfrom datasets import load_dataset\n\nsamples = load_dataset("{repo_id}", '
            f'"{mine[0]}", split="test")\n```\n' if mine else "")
    chart_line = f"\n![metrics per task and group]({folder}/results.png)\n" if chart else ""
    listing = "\n".join(f"- `{name}/`: [results.json]({name}/results.json)" for name in models)
    mini = (f"\n> **Mini data.** {', '.join(results.run.mini_data)} ran on hallubench's embedded synthetic mini "
            "benchmarks (a few code-drawn items per benchmark), published with `--allow-mini-data`. These numbers "
            "check the pipeline; they are not a measurement of the model.\n" if results.run.mini_data else "")
    return f"""---
{header}---

# hallubench results: {model_label(results)}{" (mini data)" if results.run.mini_data else ""}
{mini}
Hallucination benchmarks run with hallubench.

- Model: `{model_label(results)}` (adapter `{results.model.name}`, fingerprint `{results.model.fingerprint}`)
- hallubench {version}, git `{env.git_hash or "unknown"}`, Python {env.python}
- Run finished {results.run.finished or "unknown"}, {results.run.num_processes} process(es)
{scored_from}
## Results

`n` is the number of samples evaluated, `unparsed` the outputs the task's parser could not read (scored
as wrong, never mapped to an answer) and `errors` the samples that failed (media or generation) and are
left out of the score. Group breakdowns and non-scalar metric outputs are in `results.json`.

{results_table(results)}
{chart_line}
## Files

One folder per model; the table above is `{folder}/`, the latest published.

{listing}

- `<model>/results.json`: the run's results (hallubench results schema version {results.version}).
- `<model>/samples/<task>.parquet`: every sample of a task: prompt, media actually shown, raw outputs,
  parsed answer, reference, error. One config per model and task, `<model>--<task>`:

{load}
## Reproduce

```bash
{reproduce_command(results)}
```
{data_note}"""
