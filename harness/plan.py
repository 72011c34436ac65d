"""What a run has to do: one WorkItem per (task, sample), with its key, seed and settings.

A sample's key hashes everything its output depends on (task, id, the prompt text, model fingerprint,
generation settings, media options, seed), so a rerun recognises finished samples and a changed setting or
an edited task prompt redoes them. A multi-step task's key also holds its version, its program args and the
fingerprint of the model playing each helper role (its steps are keyed one by one in harness/program.py).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from hallubench.benchmarks.task import Task
from hallubench.config import number_error
from hallubench.errors import ConfigError
from hallubench.redact import shown
from hallubench.harness.data import dataset_dir, dataset_folder, load_rows
from hallubench.harness.options import RunOptions, apply_gen_kwargs
from hallubench.harness.media import sent_kinds
from hallubench.harness.perturb import KINDS, Perturbation, ladder, perturbation_seed
from hallubench.harness.row_checks import check_rows
from hallubench.harness.sharding import sample_seed, stable_hash
from hallubench.models.protocol import GenerationSettings


@dataclass(frozen=True)
class WorkItem:
    task: Task
    row: dict[str, Any]
    dataset_dir: Path
    key: str
    seed: int
    generation: GenerationSettings
    sample_generation: GenerationSettings | None
    args: Mapping[str, Any] = field(default_factory=dict)  # a multi-step task's program args
    perturbation: Perturbation | None = None  # the level of a --perturb ladder this sample is shown
    answer_words: tuple[str, ...] = ()  # --answer-probs: the words whose first-token probabilities are recorded

    @property
    def id(self) -> str:
        """The row's id; with a perturbation, `id@kind=level` (one sample per level of the ladder)."""
        row_id = str(self.row["id"])
        return f"{row_id}@{self.perturbation.label}" if self.perturbation else row_id


def effective_settings(task: Task, options: RunOptions) -> tuple[GenerationSettings, GenerationSettings | None]:
    """The task's settings with `--gen-kwargs` applied; `--num-samples` sets (0 drops) the extra samples.

    `max_new_tokens` from --gen-kwargs also caps the extra samples; their temperature/top-p stay the paper's.
    """
    main = apply_gen_kwargs(task.generation, options.gen_kwargs)
    extra = task.samples
    if extra is not None and options.num_samples is not None:
        extra = dataclasses.replace(extra, n=options.num_samples) if options.num_samples > 0 else None
    if extra is not None and "max_new_tokens" in options.gen_kwargs:
        extra = dataclasses.replace(extra, max_new_tokens=options.gen_kwargs["max_new_tokens"])
    return main, extra


def _typed_like(default: Any, value: Any, where: str) -> Any:
    """`value` if it has the type of the `default` it replaces (an integer is a valid float); ConfigError otherwise."""
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if type(value) is not type(default):
        raise ConfigError(f"{where}: expected {type(default).__name__} like the default {default!r}; got {shown(value)}")
    why = number_error(type(default), value)  # finite and in the default range, as every number (hallubench/config.py)
    if why:
        raise ConfigError(f"{where}: {why}; got {shown(value)}")
    return value


def task_arguments(task: Task, given: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The task's (program args, metric args): its defaults with the `--task-args` keys it has applied."""
    program = dict(task.program.args) if task.program else {}
    metric = dict(task.metric_args)
    for key, value in given.items():
        for values in (program, metric):
            if key in values:
                values[key] = _typed_like(values[key], value, f"--task-args {key} (task {task.name})")
    return program, metric


def check_probes(tasks: list[Task], options: RunOptions) -> None:
    """ConfigError for `--answer-probs` on a task without closed answer words or with several steps, and for a
    `--perturb` ladder of a medium a task does not show under the run's modality."""
    for task in tasks:
        if options.answer_probs and (task.answer_words is None or task.program is not None):
            raise ConfigError(f"--answer-probs: task {task.name!r} is not a one-step yes/no task (tasks with answer "
                              "words, e.g. cmm, take it)")
        for kind in options.perturb:
            if KINDS[kind] not in sent_kinds(task, options.modality):
                raise ConfigError(f"--perturb {kind}: task {task.name!r} shows no {KINDS[kind]} under --modality "
                                  f"{options.modality}")


def check_task_args(tasks: list[Task], given: Mapping[str, Any]) -> None:
    """ConfigError for a `--task-args` key no selected task takes, listing what each one takes."""
    known = {task.name: {*task_arguments(task, {})[0], *task.metric_args} for task in tasks}
    unknown = sorted(set(given) - set().union(*known.values()))
    if unknown:
        takes = "; ".join(f"{name}: {', '.join(sorted(keys)) or 'none'}" for name, keys in known.items())
        raise ConfigError(f"--task-args: {', '.join(unknown)} is not an option of the selected tasks ({takes})")
    for task in tasks:  # type errors, and settings the args make impossible (n=0), stop before anything loads
        args = task_arguments(task, given)[0]
        for step in task.program.steps if task.program else ():
            try:
                step.settings(args, task.generation)
            except ValueError as err:
                raise ConfigError(f"--task-args: task {task.name} step {step.name!r}: {err}") from None


@dataclass(frozen=True)
class TaskRows:
    """The rows one task of a run evaluates, checked, with its dataset folder and split size."""

    folder: Path
    rows: list[dict[str, Any]]
    total: int  # the split's size, without the rows the task excludes
    card: dict[str, Any] = field(default_factory=dict)  # the folder's card header, read once
    files: list[Path] = field(default_factory=list)  # the task's data files in the folder


def read_rows(tasks: list[Task], data_dir: Path, options: RunOptions) -> dict[str, TaskRows]:
    """Each task's rows (its first `--limit`), every one checked (row_checks): done before any model loads, so a
    missing dataset, column, bad label or media path outside the folder stops the run before the weights load."""
    read: dict[str, TaskRows] = {}
    for task in tasks:
        folder = dataset_dir(data_dir, task, options.data_dir)
        dataset = dataset_folder(folder)  # its card read once, for the rows, the data's revision and the mini mark
        # A fraction, and a task that excludes rows, need the whole split's count first.
        first_n = task.exclude is None and not isinstance(options.limit, float)
        rows, total = load_rows(folder, task, options.limit if first_n else None, dataset)
        check_rows(task, folder, rows)  # before `exclude`, which reads the rows too
        if task.exclude is not None:
            rows = [row for row in rows if not task.exclude(row)]
            total = len(rows)
        read[task.name] = TaskRows(folder, rows[:options.limit_for(total)], total, dataset.meta,
                                   dataset.data_files(task.config, task.split, task.name))
    return read


def plan(tasks: list[Task], task_rows: Mapping[str, TaskRows], options: RunOptions, fingerprint: str,
         role_fingerprints: Mapping[str, Mapping[str, str | None]] | None = None) -> tuple[list[WorkItem], dict[str, int]]:
    """All work items in (task, id) order and each task's split size (without the rows it excludes), from the rows
    `read_rows` gave. `role_fingerprints[task]` gives, for a multi-step task, the fingerprint of the model playing
    each helper role (None: its steps are skipped)."""
    items: list[WorkItem] = []
    totals: dict[str, int] = {}
    for task in tasks:
        read = task_rows[task.name]
        folder, rows = read.folder, read.rows
        totals[task.name] = read.total * max(1, len(ladder(options.perturb)))  # one sample per item and level
        main, extra = effective_settings(task, options)
        settings = (dataclasses.asdict(main), extra and dataclasses.asdict(extra))
        args = task_arguments(task, options.task_args)[0]
        # One-step keys stay as they were, so run folders made before multi-step tasks existed still resume.
        program = () if task.program is None else \
            (task.version, args, dict((role_fingerprints or {}).get(task.name, {})))
        words = tuple(task.answer_words or ()) if options.answer_probs else ()
        # Keys of runs without these options stay as they were, so their folders still resume.
        probes = (("answer_probs", words),) if words else ()
        for row in rows:
            row_id = str(row["id"])
            for level in ladder(options.perturb) or [None]:
                perturbation = None
                if level:
                    perturbation = Perturbation(*level, perturbation_seed(options.seed, task.name, row_id, *level))
                item = WorkItem(task, row, folder, "", 0, main, extra, args, perturbation, words)
                key = stable_hash(task.name, item.id, task.prompt(row), fingerprint, settings, options.media_options(),
                                  options.seed, *program, *probes)[:32]
                items.append(dataclasses.replace(item, key=key, seed=sample_seed(options.seed, task.name, item.id)))
    items.sort(key=lambda item: (item.task.name, item.id))
    return items, totals
