"""The README.md of a published results dataset: YAML `configs:` (one per model and task samples parquet) and
a markdown card with the latest model's results table, the models in the repo, the hallubench version and how
to rerun the evaluation.

Layout of the repo: one folder per model (`<model>/results.json`, `<model>/results.png`,
`<model>/samples/<task>.parquet`), so publishing a second model adds its folder and keeps the first's; the
card lists the configs of every model folder in the repo, named `<model>--<task>`.
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

import yaml

from hallubench.markup import escape_markdown, markdown_code
from hallubench.harness.command import command_line, run_argv
from hallubench.harness.results_schema import Results, TaskResult
from hallubench.harness.report import NOTHING, markdown_table, nothing_scored
from hallubench.harness.uncertainty import STDERR

# RunOptions fields that describe where files went on the machine that ran, not what was evaluated.
_LOCAL_OPTIONS = ("output_dir",)


def model_folder(results: Results, model_id: str | None = None) -> str:
    """The model's folder in the results repo, named from its full id: `model_id` (--model-id) or the Hub id
    `org/name` as `org--name`, else every part of the checkpoint path (`/ckpt/seed2/qwen` -> `ckpt--seed2--qwen`),
    so two checkpoints whose folders share a basename get two folders."""
    label = (model_id or model_label(results)).replace("\\", "/")
    parts = [re.sub(r"[^A-Za-z0-9_.\-]+", "-", part).strip("-.") for part in PurePosixPath(label).parts]
    return "--".join(part for part in parts if part) or "model"


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


def reproduce_command(results: Results) -> str:
    """The `hallubench run` command line rebuilt from the options recorded in results.json (harness/command.py)."""
    return command_line(run_argv(results.run.options, omit=_LOCAL_OPTIONS))


def is_scalar(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _format(value: float) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _stderr(value: float | None) -> str:
    return "" if value is None else f" ± {value:.4f}"


def _task_rows(name: str, task: TaskResult) -> list[list[Any]]:
    counts = [task.n_selected, task.n_scored, task.n_unreadable, task.n_errors]
    name = escape_markdown(name)
    if task.metric is None:
        return [[name, "-", f"scored by {escape_markdown(task.scored_by)}", *counts]]
    rows = [[name, escape_markdown(metric), _format(value) + _stderr(task.metrics.get(metric + STDERR)), *counts]
            for metric, value in task.metrics.items() if is_scalar(value) and not metric.endswith(STDERR)]
    why = nothing_scored(task)
    return rows or [[name, "-", f"{NOTHING} ({why})" if why else "no metric value", *counts]]


def results_table(results: Results) -> str:
    """Markdown table: one row per task and scalar metric, with the sample counts behind it."""
    rows = [row for name, task in sorted(results.tasks.items()) for row in _task_rows(name, task)]
    return markdown_table(["task", "metric", "value", "n", "scored", "unreadable", "errors"], rows)


def card_metadata(results: Results, samples: list[str], partial: bool = False) -> dict[str, Any]:
    """The card's YAML header: tags and one `configs:` entry per model and task with samples."""
    configs = [{"config_name": name, "data_files": [{"split": "test", "path": path}]}
               for name, path in sample_configs(samples).items()]
    tags = ["hallubench", "evaluation", "hallucination"] + (["hallubench-mini-data"] if results.run.mini_data else []) \
        + (["hallubench-partial-run"] if partial else [])
    return {"pretty_name": f"hallubench results: {model_label(results)}", "tags": tags, "configs": configs}


def model_label(results: Results) -> str:
    """The checkpoint (or served model) name if the run recorded one, else the adapter name."""
    args = results.model.args
    return str(args.get("pretrained") or args.get("model") or results.model.name or "unknown model")


def fenced(text: str, language: str = "") -> str:
    """A fenced code block holding `text` whatever it contains: a fence longer than any backtick run in it."""
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _data_lines(results: Results) -> str:
    """Which data each task read: the Hub repo and commit, or a local folder's content fingerprint."""
    lines = []
    for name, task in sorted(results.tasks.items()):
        source = task.dataset or {}
        where = f"Hub dataset {markdown_code(source['id'])}" if source.get("id") else "a local folder"
        revision = markdown_code(source.get("revision") or "not recorded")
        lines.append(f"- {escape_markdown(name)}: {where} at {revision}")
    return "\n".join(lines)


def dataset_card(results: Results, repo_id: str, samples: list[str], chart: bool = False,
                 folder: str | None = None, partial: list[str] | None = None) -> str:
    """The full README.md text; `samples`: every samples parquet the repo holds after this commit (all models);
    `chart`: the model's folder also holds results.png, shown under the table; `folder`: the model's folder
    (default `model_folder(results)`); `partial`: why the run is not the whole benchmark (--allow-partial).

    Every name that comes from the run (model, tasks, paths, options) is escaped (hallubench/markup.py): it
    cannot add a heading, table cell, link or tag to the card."""
    env = results.environment
    version = env.packages.get("hallubench", "unknown")
    folder = folder or model_folder(results)
    label = model_label(results)
    configs = sample_configs(samples)
    mine = [name for name in configs if name.startswith(f"{folder}--")]
    models = sorted({PurePosixPath(path).parts[0] for path in configs.values()})
    header = yaml.safe_dump(card_metadata(results, samples, bool(partial)), sort_keys=False, allow_unicode=True)
    scored_from = (f"\nScores were recomputed from the saved outputs of {markdown_code(results.run.from_outputs)}.\n"
                   if results.run.from_outputs else "")
    data_note = ("\n`--data-dir` is where the built datasets were on the machine that ran; point it at your own "
                 "`hallubench build` output.\n" if results.run.options.get("data_dir") else "")
    load = (fenced(f'from datasets import load_dataset\n\nsamples = load_dataset("{repo_id}", "{mine[0]}", '
                   'split="test")', "python") + "\n" if mine else "")
    chart_line = f"\n![metrics per task and group]({folder}/results.png)\n" if chart else ""
    listing = "\n".join(f"- {markdown_code(name + '/')}: [results.json]({quote(name)}/results.json)" for name in models)
    mini = (f"\n> **Mini data.** {escape_markdown(', '.join(results.run.mini_data))} ran on hallubench's embedded "
            "synthetic mini benchmarks (a few code-drawn items per benchmark), published with `--allow-mini-data`. "
            "These numbers check the pipeline; they are not a measurement of the model.\n" if results.run.mini_data else "")
    part = (f"\n> **Partial run.** {escape_markdown('; '.join(partial))}. Published with `--allow-partial`: these "
            "scores are not the benchmark's, and no `.eval_results` were added to the model repo.\n" if partial else "")
    marks = (" (mini data)" if results.run.mini_data else "") + (" (partial run)" if partial else "")
    return f"""---
{header}---

# hallubench results: {escape_markdown(label)}{marks}
{mini}{part}
Hallucination benchmarks run with hallubench.

- Model: {markdown_code(label)} (adapter {markdown_code(results.model.name)}, fingerprint {markdown_code(results.model.fingerprint)})
- hallubench {escape_markdown(version)}, git {markdown_code(env.git_hash or "unknown")}, Python {escape_markdown(env.python)}
- Run finished {escape_markdown(results.run.finished or "unknown")}, {results.run.num_processes} process(es)
{scored_from}
## Results

`n` is the number of samples evaluated: `scored` the answers the rule behind the score read, `unreadable` those
it could not read (counted as the paper does, e.g. as wrong, never mapped to an answer) and `errors` the samples
that failed (media or generation), left out of the score. Where no answer was scored there is no value, only why.
Each sample's `verdict` says how the score counted it. Group breakdowns and non-scalar metric outputs are in `results.json`.

{results_table(results)}
{chart_line}
Data each task read:

{_data_lines(results)}

## Files

One folder per model; the table above is `{folder}/`, the latest published.

{listing}

- `<model>/results.json`: the run's results (hallubench results schema version {results.version}).
- `<model>/samples/<task>.parquet`: every sample of a task: prompt, media actually shown, raw outputs,
  parsed answer, reference, error, and the verdict the score gave it. One config per model and task, `<model>--<task>`:

{load}
## Reproduce

{fenced(reproduce_command(results), "bash")}
{data_note}"""
