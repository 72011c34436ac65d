"""hallubench from Python: `run`, `plan`, `rank` and `build`, the functions the command line calls.

Each keyword is the command's flag in snake_case, with the same default (`--model-args` is `model_args`, `--helper
ROLE ARGS` is `helpers={ROLE: ARGS}`); a `key=value,...` flag takes that string or a mapping, a comma-separated
list takes that string or a list. Errors are `hallubench.errors.HallubenchError` subclasses (never SystemExit);
nothing is printed but the progress bars: hallubench's notes (a resumed folder, failed samples) go to the
`hallubench` logger, which the command line shows on stderr. tests/test_python_api.py checks that every flag of
each command maps onto its function's parameters, names and defaults, so the two cannot drift.

    import hallubench
    results = hallubench.run(model="hf", model_args={"pretrained": "Qwen/Qwen2.5-Omni-3B"}, tasks="cmm",
                             data_dir="datasets/", limit=20)
    results.to_dict()["results"]["cmm"]
"""
from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hallubench.errors import ConfigError

log = logging.getLogger("hallubench")
log.addHandler(logging.NullHandler())  # a library is silent unless its user asks (logging.basicConfig shows it)


def _kv(value: str | Mapping[str, Any] | None, flag: str) -> dict[str, Any]:
    from hallubench.harness.options import parse_kv

    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        return parse_kv(value, flag)
    raise ConfigError(f"{flag}: expected key=value pairs (a string or a mapping); got {value!r}")


def _names(value: str | Sequence[str] | None, flag: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [name.strip() for name in value.split(",") if name.strip()]
    if isinstance(value, Sequence) and all(isinstance(name, str) for name in value):
        return list(value)
    raise ConfigError(f"{flag}: expected comma-separated names (a string or a list of strings); got {value!r}")


def run_options(*, model: str | None = None, model_args: str | Mapping[str, Any] | None = None,
                tasks: str | Sequence[str] | None = None, output_dir: str | Path | None = None,
                data_dir: str | Path | None = None, limit: int | float | None = None, seed: int = 1234,
                batch_size: int | str = 1, gen_kwargs: str | Mapping[str, Any] | None = None,
                num_samples: int | None = None, modality: str = "audio-visual", num_frames: int | None = 8,
                fps: float | None = None, max_frames: int = 32, device: str | None = None, dtype: str | None = None,
                task_args: str | Mapping[str, Any] | None = None,
                helpers: Mapping[str, Any] | Sequence[Sequence[str]] | None = None,
                perturb: str | Sequence[str] | Mapping[str, Sequence[str]] | None = None,
                answer_probs: bool = False, include: str | Sequence[str] | None = None):
    """The checked RunOptions of these keywords (see `run`)."""
    from hallubench.harness.options import RunOptions

    return RunOptions(model=model, model_args=_kv(model_args, "--model-args"), tasks=_names(tasks, "--tasks"),
                      output_dir=output_dir, data_dir=data_dir, limit=limit, seed=seed, batch_size=batch_size,
                      gen_kwargs=_kv(gen_kwargs, "--gen-kwargs"), num_samples=num_samples,
                      modality=modality, num_frames=num_frames, fps=fps, max_frames=max_frames, device=device,
                      dtype=dtype, task_args=_kv(task_args, "--task-args"), helpers=helpers or {},
                      perturb=[perturb] if isinstance(perturb, str) else perturb or {}, answer_probs=answer_probs,
                      include=_specs(include))


def _specs(include: str | Sequence[str] | None) -> list[str]:
    """`include` as a list: one plug-in (a path may hold a comma) or several."""
    return [include] if isinstance(include, str) else list(include or [])


def plan(*, from_outputs: str | Path | None = None, **options: Any):
    """The checked plan of a run (harness/preflight.RunPlan): its tasks, rows, media, model calls and what a resume
    of its run folder would redo; nothing is loaded. Takes `run`'s keywords (not `push_to_hub`); `from_outputs` is
    refused, as `hallubench run --dry-run --from-outputs` is: a re-score has no plan. `str(plan.summary())` is what
    `hallubench run --dry-run` prints."""
    from hallubench.harness.preflight import make_plan

    if from_outputs is not None:
        raise ConfigError(f"--dry-run cannot be combined with --from-outputs {from_outputs}: re-scoring saved outputs "
                          "loads no model and generates nothing, so there is no plan to print; drop --dry-run to "
                          "re-score the folder")
    return make_plan(run_options(**options))


def run(*, from_outputs: str | Path | None = None, push_to_hub: str | None = None, allow_mini_data: bool = False,
        dry_run: bool = False, **options: Any):
    """Evaluate a model on benchmark tasks, as `hallubench run`; returns the Results (`.to_dict()` is
    results.json, `.tasks[name]` each task's scores and counts), or None on a process that is not the main one
    of an `accelerate launch`. `from_outputs=RUN_DIR` re-scores a run folder's saved outputs without the model, with
    the options its run recorded (of the keywords below it takes only output_dir and include: any other at other
    than its default is a ConfigError naming it);
    `dry_run=True` returns the plan instead (`plan`; refused with `from_outputs`); `push_to_hub=REPO_ID` then
    publishes the run folder.

    Keywords (each `hallubench run` flag): model, model_args, tasks, output_dir, data_dir, limit, seed, batch_size,
    gen_kwargs, num_samples, modality, num_frames, fps, max_frames, device, dtype, task_args, helpers, perturb,
    answer_probs, include; see `hallubench run --help`."""
    if dry_run:
        return plan(from_outputs=from_outputs, **options)
    if from_outputs is not None:
        refuse_what_a_rescore_ignores(from_outputs, options)
        from hallubench.harness.rescore import rescore
        from hallubench.registry import include

        for spec in _specs(options.get("include")):
            include(spec)
        results = rescore(Path(from_outputs), options.get("output_dir"))
        run_dir = Path(options.get("output_dir") or from_outputs)
    else:
        from hallubench.harness.preflight import make_plan
        from hallubench.harness.runner import run as run_checked

        checked = make_plan(run_options(**options), resume=False)  # the runner reads the folder under its lock
        results, run_dir = run_checked(checked), checked.options.output_dir
    if results is not None and push_to_hub and not every_sample_failed(results):
        from hallubench.publish.runs import publish_run

        report = publish_run(run_dir, repo_id=push_to_hub, allow_mini_data=allow_mini_data,
                             given=(Path(from_outputs),) if from_outputs is not None else ())
        log.info("results dataset: %s (commit %s)", report.dataset_url, report.dataset_commit_url)
        for line in (report.model_commit_url and f"model results for {report.model_id}: {report.model_commit_url}",
                     report.model_note):
            if line:
                log.info("%s", line)
    return results


# What a re-score takes of run_options' keywords: where to write, and the plug-ins its tasks need (a run folder names
# them, but it is data: they are not imported from it). Everything else is the folder's own, as its run recorded it.
RESCORE_TAKES = ("output_dir", "include")
NOTHING = (None, "", (), [], {})  # what a keyword that defaults to None or to nothing also takes to mean nothing


def refuse_what_a_rescore_ignores(from_outputs: str | Path, options: Mapping[str, Any]) -> None:
    """ConfigError naming, by flag, each option given with `from_outputs` (other than its default) that re-scoring
    cannot apply: it scores the outputs saved with the model, tasks, samples and settings their run recorded.
    TypeError for a keyword that is no option, as `run_options` raises."""
    keywords = inspect.signature(run_options)
    keywords.bind(**options)
    ignored = [name for name, value in options.items() if name not in RESCORE_TAKES
               and not _is_default(value, keywords.parameters[name].default)]
    if ignored:
        flags = ", ".join("--helper" if name == "helpers" else "--" + name.replace("_", "-") for name in ignored)
        raise ConfigError(f"--from-outputs {from_outputs} re-scores the outputs saved there with the model, tasks, "
                          f"samples and settings their run recorded (its results.json), so it cannot apply {flags}: "
                          "drop them (with it only --output-dir, --include and --push-to-hub apply), or run without "
                          "--from-outputs to generate with them")


def _is_default(value: Any, default: Any) -> bool:
    return value == default or (default in NOTHING and value in NOTHING)


def every_sample_failed(results) -> bool:
    """Whether a run selected samples and every one failed (then nothing is published and the command exits 1)."""
    selected = sum(task.n_selected for task in results.tasks.values())
    return bool(selected) and selected == sum(task.n_errors for task in results.tasks.values())


def named_run_dirs(items: Sequence[str | Path] | Mapping[str, str | Path]) -> dict[str, Path]:
    """Run folders by model name: a mapping as it is, else each item `NAME=DIR` or a folder named by its last part."""
    if isinstance(items, Mapping):
        return {str(name): Path(path) for name, path in items.items()}
    if isinstance(items, (str, Path)):
        items = [items]
    out: dict[str, Path] = {}
    for item in map(str, items):
        name, sep, path = item.partition("=")
        name, path = (name, Path(path)) if sep and not Path(item).exists() else (Path(item).name, Path(item))
        if name in out:
            raise ConfigError(f"run folder name {name!r} given twice; name them NAME=DIR")
        out[name] = path
    return out


def rank(run_dirs: Sequence[str | Path] | Mapping[str, str | Path], *, output_dir: str | Path = "ranking",
         tasks: str | Sequence[str] | None = None, judge: str = "embedding",
         judge_args: str | Mapping[str, Any] | None = None, cache: str | Path | None = None, weighting: str = "task",
         temperature: float = 0.1, refcheck: bool = False, reference: str | Path | None = None,
         reference_higher_is_better: bool = False, strict_judging: bool = False, push_to_hub: str | None = None,
         allow_mini_data: bool = False):
    """A CrossCheck leaderboard of run folders, as `hallubench rank`; returns the Ranking (`.table()` the
    leaderboard, `.boards` the scores, `.folder` where it was written). `push_to_hub=REPO_ID` then uploads it."""
    from hallubench.ranking.pipeline import rank as rank_runs

    ranking = rank_runs(named_run_dirs(run_dirs), Path(output_dir), tasks=_names(tasks, "--tasks") or None, judge=judge,
                        judge_args=_kv(judge_args, "--judge-args"), cache=None if cache is None else Path(cache),
                        weighting=weighting, temperature=temperature, refcheck=refcheck,
                        reference=None if reference is None else Path(reference),
                        reference_higher_is_better=reference_higher_is_better, strict_judging=strict_judging)
    if push_to_hub:
        from hallubench.publish.rankings import push_ranking

        url, commit = push_ranking(ranking.folder, push_to_hub, allow_mini_data=allow_mini_data)
        log.info("ranking dataset: %s (commit %s)", url, commit)
    return ranking



def build(benchmark: str, *, output_dir: str | Path, source: str | None = None, skip_missing: bool = False,
          overwrite: bool = False):
    """A Hub-ready dataset folder from a benchmark's official release, as `hallubench build`; returns its summary
    (`.path`, `.rows` per config, `.skipped`, `.notes`, `.origin`)."""
    from hallubench.builders import build_with_summary

    return build_with_summary(benchmark, source, Path(output_dir), skip_missing=skip_missing, overwrite=overwrite)
