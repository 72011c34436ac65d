"""The run's plan: everything `run` checks before a model loads, as one typed object built first.

`make_plan(options)` resolves and checks, in this order, each step naming its own mistake before the next starts:
the plug-ins, the model adapter and its arguments (unknown keys, dtype, a checkpoint folder that is not there,
a CUDA device the machine lacks), the tasks and what the options ask of them (modality, --task-args,
--answer-probs, --perturb, --helper roles), the data folder, a Hub checkpoint id neither cached nor reachable, then
every row each task will use (harness/plan.read_rows: columns, labels, media paths inside the folder) and the
media files those rows name. No torch, transformers or accelerate is imported on this path (unless --device
names a CUDA device, which needs torch to count the GPUs), so a wrong argument is named in about a second.

The runner loads the models from the plan (`RunPlan.model_args`, `RunPlan.helper_args`) and makes its work items
with the loaded models' fingerprints (`RunPlan.work`); `hallubench.plan(...)` and `hallubench run --dry-run` return
and print it, with what a resume of the run folder would redo.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from hallubench.benchmarks import Task, get_task
from hallubench.config import HUB_REPO_ID
from hallubench.errors import ConfigError
from hallubench.harness import run_state, store
from hallubench.harness.data import dataset_dir, is_mini, require_data_dir, resolve_data_dir
from hallubench.harness.dataset_source import dataset_source
from hallubench.harness.media import check_modality, sent_kinds
from hallubench.harness.options import AUTO, RunOptions
from hallubench.harness.perturb import ladder
from hallubench.harness.plan import (TaskRows, WorkItem, check_probes, check_task_args, effective_settings, plan,
                                     read_rows, task_arguments)
from hallubench.models import check_chat_adapter, model_named
from hallubench.models.protocol import DTYPES, GenerationSettings
from hallubench.registry import include


@dataclass(frozen=True)
class TaskPlan:
    """One task of a run: its rows (checked), where they come from, its settings and the media its rows name."""

    task: Task
    rows: TaskRows
    source: dict[str, Any]  # {"id", "revision"} of the data read (results.json's `dataset`)
    generation: GenerationSettings
    samples: GenerationSettings | None  # the extra stochastic samples of each item, or None
    program_args: dict[str, Any]
    media: dict[str, int]  # kind -> files the selected rows name and the model is shown
    missing_media: list[str]  # of those, files not in the folder (each such sample is recorded as a media error)
    levels: int  # --perturb levels: every item is run once per level
    mini: bool  # the folder is an embedded synthetic mini benchmark (results say so)
    calls_per_item: int  # each step of a multi-step task (at most), else the answer, the extra samples (one call
    # of n) and --answer-probs' forward pass

    @property
    def items(self) -> int:
        return len(self.rows.rows) * self.levels


@dataclass(frozen=True)
class Resume:
    """What the run folder already holds of the planned items, counted by (task, id) before the model loads."""

    folder: Path
    finished: int  # planned items with an answer: kept if made by the same model and settings (their key says)
    failed: int  # planned items whose record is an error: run again
    new: int  # planned items with no record: run
    other: int  # records in the folder for no planned item (other tasks, rows beyond --limit): left as they are
    stopped: str | None  # why the folder's last run stopped, when it did not finish

    @property
    def redo(self) -> int:
        return self.failed + self.new


@dataclass(frozen=True)
class RunPlan:
    """Everything a run will do, checked, before any model loads."""

    options: RunOptions
    data_dir: Path
    tasks: dict[str, TaskPlan]
    model_args: dict[str, Any]  # the adapter's checked arguments (device: --device, else the process's at load)
    helper_args: dict[str, tuple[str, dict[str, Any]]]  # role -> (adapter, checked arguments)
    resume: Resume | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def task_list(self) -> list[Task]:
        return [planned.task for planned in self.tasks.values()]

    @property
    def items(self) -> int:
        return sum(planned.items for planned in self.tasks.values())

    @property
    def model_calls(self) -> int:
        return sum(planned.items * planned.calls_per_item for planned in self.tasks.values())

    def loads(self, device: str) -> tuple[dict[str, Any], dict[str, tuple[str, dict[str, Any]]]]:
        """The checked arguments of the model and of each helper role (adapter, arguments) as this process loads
        them: a local adapter that neither --device nor its own `device=` placed gets the process's `device` (the plan
        was checked with a stand-in); nothing is checked again."""
        helpers = helper_options(self.options)

        def placed(args: dict[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
            chosen = self.options.device is not None or "device" in given
            return args if chosen or "device" not in args else {**args, "device": device}

        return (placed(self.model_args, model_named(self.options.model_args)),
                {role: (adapter, placed(args, model_named(helpers[role].model_args)))
                 for role, (adapter, args) in self.helper_args.items()})

    def work(self, fingerprint: str, role_fingerprints: Mapping[str, Mapping[str, str | None]] | None = None
             ) -> tuple[list[WorkItem], dict[str, int]]:
        """The work items, keyed with the loaded model's fingerprint (and each helper role's), and each task's size."""
        rows = {name: planned.rows for name, planned in self.tasks.items()}
        return plan(self.task_list, rows, self.options, fingerprint, role_fingerprints)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able view of the plan (what `run --dry-run` prints)."""
        from hallubench.redact import redact_values

        return redact_values({
            "model": self.options.model, "model_args": {k: str(v) for k, v in self.model_args.items()},
            "helpers": {role: {"adapter": adapter, **{k: str(v) for k, v in args.items()}}
                        for role, (adapter, args) in self.helper_args.items()},
            "data_dir": str(self.data_dir), "output_dir": str(self.options.output_dir),
            "items": self.items, "model_calls": self.model_calls,
            "tasks": {name: {"rows": len(p.rows.rows), "of": p.rows.total, "items": p.items,
                             "model_calls": p.items * p.calls_per_item, "dataset": p.source,
                             "generation": dataclasses.asdict(p.generation),
                             "samples": p.samples and dataclasses.asdict(p.samples), "program_args": p.program_args,
                             "media": p.media, "missing_media": p.missing_media}
                      for name, p in self.tasks.items()},
            "resume": self.resume and {**dataclasses.asdict(self.resume), "folder": str(self.resume.folder),
                                       "redo": self.resume.redo},
        })

    def summary(self) -> str:
        """The plan in a few lines: per task its rows, items, model calls, media and settings; then the resume."""
        lines = [f"plan: {self.items} items, {self.model_calls} model calls, {self.options.model} "
                 f"{_args_text(self.options.model_args)}, data {self.data_dir}, run folder {self.options.output_dir}"]
        for role, (adapter, args) in self.helper_args.items():
            lines.append(f"  helper {role}: {adapter} {_args_text(args)}")
        for name, p in self.tasks.items():
            media = ", ".join(f"{count} {kind}" for kind, count in p.media.items()) or "no media"
            subset = f" of {p.rows.total}" if len(p.rows.rows) < p.rows.total else ""
            levels = f" x {p.levels} perturbation levels" if p.levels > 1 else ""
            samples = f", + {p.samples.n} samples" if p.samples else ""
            revision = p.source.get("revision") or "?"
            lines.append(f"  {name}: {len(p.rows.rows)}{subset} rows{levels} = {p.items} items, "
                         f"{p.items * p.calls_per_item} model calls; media: {media}"
                         + (f" ({len(p.missing_media)} missing: those samples are recorded as media errors)"
                            if p.missing_media else "")
                         + f"; max_new_tokens {p.generation.max_new_tokens}, temperature {p.generation.temperature:g}"
                           f"{samples}; data {p.source.get('id') or p.rows.folder} @ {str(revision)[:12]}")
        if self.resume is None:
            lines.append("resume: the run folder is new; every item runs")
        else:
            r = self.resume
            stopped = f" (its last run {r.stopped})" if r.stopped else ""
            lines.append(f"resume: {r.folder} holds {r.finished} finished items{stopped}: a rerun redoes {r.redo} "
                         f"({r.failed} failed, {r.new} not yet run) and keeps the finished ones if they were made "
                         "with this model and these settings (checked by their keys once the model loads)"
                         + (f"; {r.other} other records stay as they are" if r.other else ""))
        return "\n".join(lines + [f"note: {note}" for note in self.notes])


def _args_text(args: Mapping[str, Any]) -> str:
    from hallubench.redact import redact

    return redact(",".join(f"{k}={v}" for k, v in args.items()))


def resolve_tasks(names: list[str], included: list[str] | None = None) -> list[Task]:
    """Tasks by exact name, each once; ConfigError listing the valid names for an unknown one (and, for a run that
    `included` plug-ins from outside hallubench, which: a run folder is data, so they are not imported from it)."""
    try:
        return [get_task(name) for name in dict.fromkeys(names)]
    except KeyError as err:
        hint = (f"; the run included plug-ins from {', '.join(included)}: pass --include for each"
                if included else "; a task from outside hallubench needs its --include or its plug-in package")
        raise ConfigError(err.args[0] + hint) from None


def helper_options(options: RunOptions) -> dict[str, RunOptions]:
    """Each `--helper` role's options: its `adapter` (default hf) with the rest as that adapter's --model-args."""
    return {role: dataclasses.replace(options, model=args.get("adapter", "hf"),
                                      model_args={k: v for k, v in args.items() if k != "adapter"})
            for role, args in options.helpers.items()}


def check_helper_roles(tasks: list[Task], helpers: dict[str, Any]) -> None:
    """ConfigError for a `--helper` role that no selected task's steps use, naming the roles they do use."""
    used = set().union(*(task.program.roles for task in tasks if task.program))
    unused = sorted(set(helpers) - used)
    if unused:
        raise ConfigError(f"--helper {', '.join(unused)}: no selected task has a step for that role (they use: "
                          f"{', '.join(sorted(used)) or 'none'})")


def model_arguments(options: RunOptions, device: str, flag: str = "--model") -> dict[str, Any]:
    """The checked arguments of `options.model`'s adapter (a local adapter on `options.device`, else `device`);
    ConfigError naming what is wrong, touching no weights, file or server; `flag` names them in errors (a helper's
    is --helper ROLE)."""
    from hallubench.models import MODELS, adapter_runs_locally, model_config

    if options.model is None:
        raise ConfigError("--model is required unless --from-outputs is given")
    if flag == "--model":  # a helper may be a tool (a task step calls it); the model under test is a chat model
        check_chat_adapter(options.model)
    elif options.model not in MODELS:
        raise ConfigError(f"{flag}: {MODELS.unknown(options.model)}")
    args = model_named(options.model_args)
    config = getattr(MODELS[options.model], "config", None)
    if "model" not in args and not (config and set(args) - set(config.keys())):  # else the unknown key is named below
        given = "--model-args" if flag == "--model" else "its arguments"
        raise ConfigError(f"{flag} {options.model}: {given} needs pretrained=CHECKPOINT (a Hub id or folder)")
    # what the adapter is given is read from its config (models/configs.runs_locally), not from its name
    local = adapter_runs_locally(options.model)
    keys = set(getattr(MODELS[options.model], "config", None).keys()) if local else set()
    if local:
        args.setdefault("device", options.device or device)
        if "batch_size" in keys:
            args.setdefault("batch_size", options.batch_size)
        if options.dtype and "dtype" in keys:
            args.setdefault("dtype", options.dtype)
    if options.batch_size == AUTO and "batch_size" not in keys:
        local_ones = [name for name in sorted(MODELS) if adapter_runs_locally(name)]
        raise ConfigError(f"--batch-size auto: only a local adapter ({', '.join(local_ones)}) finds its batch "
                          f"size; {flag} {options.model} needs a number")
    # unknown or missing keys: ConfigError before any weights load
    args = model_config(options.model, args, None if flag == "--model" else f"{flag} (the {options.model} adapter's)")
    if "dtype" in keys and args.get("dtype") not in DTYPES:  # else torch would name it after seconds of imports
        raise ConfigError(f"{flag} {options.model}: dtype={args.get('dtype')}: not a weights dtype; use one of "
                          f"{', '.join(DTYPES)}")
    if local:
        if checkpoint_named(options.model):
            check_checkpoint(str(args["model"]), flag)
        check_device(str(args.get("device")), flag)
    return args


def checkpoint_named(adapter: str) -> bool:
    """Whether the adapter's `model` is a checkpoint (a folder or Hub id) rather than a corpus or an API."""
    from hallubench.models import MODELS, adapter_runs_locally

    return adapter_runs_locally(adapter) and getattr(MODELS[adapter].config, "model_is_checkpoint", True)


def check_checkpoint(model: str, flag: str) -> None:
    """ConfigError for a checkpoint written as a local path (/x, ./x, ~/x, a/b/c) where there is no folder; a
    Hub id (org/name) is checked once the data is (`check_hub_checkpoint`)."""
    path = Path(model).expanduser()
    if path.exists() or (HUB_REPO_ID.fullmatch(model) and not model.startswith(".")):
        return
    raise ConfigError(f"{flag}: pretrained={model}: no such model folder (and not a Hub id org/name); give the "
                      "folder of a saved checkpoint or a Hub model id")


def check_hub_checkpoint(adapter: str, args: Mapping[str, Any], flag: str) -> None:
    """A Hub id neither cached nor reachable: a named error in seconds, not a silent hang in the loader."""
    from hallubench.harness.hub_model import check_hub_model

    if checkpoint_named(adapter) and not Path(str(args["model"])).expanduser().exists():
        check_hub_model(str(args["model"]), args.get("revision"), flag)


def check_device(device: str, flag: str) -> None:
    """ConfigError for a CUDA device this machine does not have (cuda:7 on a one-GPU machine, cuda without one)."""
    match = re.fullmatch(r"cuda(?::(\d+))?", device)
    if match is None:
        return
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if int(match.group(1) or 0) >= count:
        have = f"has {count} GPU(s): cuda:0 to cuda:{count - 1}" if count else "has no CUDA GPU"
        raise ConfigError(f"{flag}: device {device}: this machine {have}; pass --device cpu or one it has")


def make_plan(options: RunOptions, resume: bool = True, device: str = "cpu") -> RunPlan:
    """The checked plan of `options` (see the module's docstring). `device` stands in for the process's device in
    the arguments' check when --device is not given (the runner loads on the accelerate process's own);
    `resume`: also count what the run folder holds (the runner reads it again under the folder's lock)."""
    options.include = [include(spec) for spec in options.include]  # recorded resolved, in results.json's options
    if options.model is not None:  # read from its registration: a tool adapter is refused before anything loads
        check_chat_adapter(options.model)
    tasks = resolve_tasks(options.tasks)
    if not tasks:
        raise ConfigError("--tasks is empty; give a comma-separated list of task names")
    for task in tasks:
        check_modality(task, options.modality)
    check_task_args(tasks, options.task_args)
    check_probes(tasks, options)
    check_helper_roles(tasks, options.helpers)
    given_data_dir = require_data_dir(options.data_dir)
    model_args = model_arguments(options, device)
    helpers = {role: (helper.model, model_arguments(helper, device, f"--helper {role}"))
               for role, helper in helper_options(options).items()}
    data_dir = resolve_data_dir(given_data_dir)
    for task in tasks:  # a benchmark not built there is named (with the command that builds it) before the Hub id
        dataset_dir(data_dir, task, options.data_dir)
    check_hub_checkpoint(options.model, model_args, "--model")
    for role, (adapter, args) in helpers.items():
        check_hub_checkpoint(adapter, args, f"--helper {role}")
    task_rows = read_rows(tasks, data_dir, options)
    planned = {task.name: _task_plan(task, task_rows[task.name], options, data_dir) for task in tasks}
    built = RunPlan(options, data_dir, planned, model_args, helpers)
    return dataclasses.replace(built, resume=read_resume(built)) if resume else built


def _task_plan(task: Task, rows: TaskRows, options: RunOptions, data_dir: Path) -> TaskPlan:
    main, extra = effective_settings(task, options)
    media: dict[str, int] = {}
    missing: list[str] = []
    shown = [kind for kind in ("video", "audio", "image") if getattr(task.media, kind) and
             kind in sent_kinds(task, options.modality)]
    for row in rows.rows:  # a video's own soundtrack counts as its audio (one file, both kinds)
        for kind in shown:
            if (path := row.get(getattr(task.media, kind))) is not None:
                media[kind] = media.get(kind, 0) + 1
                if not (rows.folder / path).is_file() and path not in missing:  # read_rows kept it inside the folder
                    missing.append(str(path))
    calls = len(task.program.steps) if task.program else 1 + (extra is not None) + options.answer_probs
    return TaskPlan(task, rows, dataset_source(options.data_dir, data_dir, task, rows.files), main, extra,
                    task_arguments(task, options.task_args)[0], media, missing, max(1, len(ladder(options.perturb))),
                    is_mini(rows.folder, rows.card), calls)


def read_resume(built: RunPlan) -> Resume | None:
    """What `built`'s run folder holds of its items, by (task, id); None for a folder with no records."""
    folder = built.options.output_dir
    if not folder.is_dir():
        return None
    contents = store.read_store(folder)
    if not contents.records:
        return None
    items, _ = built.work("")  # keys need the model; ids do not
    stored: dict[tuple[str, str], bool] = {}
    for record in contents.records.values():
        pair = (record["task"], str(record["id"]))
        stored[pair] = stored.get(pair, False) or record.get("error") is None
    planned = {(item.task.name, item.id) for item in items}
    finished = sum(1 for pair in planned if stored.get(pair))
    failed = sum(1 for pair in planned if pair in stored and not stored[pair])
    state = run_state.unfinished(folder)
    return Resume(folder, finished, failed, len(planned) - finished - failed, len(set(stored) - planned),
                  run_state.why_stopped(state) if state else None)
