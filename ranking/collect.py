"""Run folders -> per task, each model's greedy answer, sampled passages and the row's reference, on
the items every model answered (the run folder is the source of truth: no model is loaded here)."""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hallubench.confined import Folder
from hallubench.harness import run_state, store
from hallubench.harness.runner import RESULTS
from hallubench.errors import ConfigError, RunFolderNotFoundError


@dataclass
class TaskResponses:
    """One task across models, on `ids` (items every model answered without error, sorted)."""

    task: str
    ids: list[str]
    answers: dict[str, list[str]]          # model -> greedy answer per id
    samples: dict[str, list[list[str]]]    # model -> sampled passages per id
    references: list[str | None]           # the row's human reference per id (RefCheck)
    dropped: dict[str, list[str]] = field(default_factory=dict)  # model -> ids left out (error/missing)


def read_run(name: str, run_dir: Path) -> dict[str, dict[str, dict]]:
    """task -> id -> the successful record of that item in `run_dir`, read through run_state.read_run_folder (a
    folder being written, unfinished or mixing settings is refused)."""
    run_dir = Path(run_dir)
    if not Folder(run_dir).is_file(store.MERGED) and not Folder(run_dir).names(store.RANK_GLOB):
        raise RunFolderNotFoundError(f"{run_dir} (model {name!r}) holds no samples.jsonl; make it with `hallubench run "
                          f"--output-dir {run_dir} ...` or `hallubench crosscheck`")
    by_task: dict[str, dict[str, dict]] = defaultdict(dict)
    with run_state.read_run_folder(run_dir, "rank (reading)") as folder:
        records = folder.records
    for record in records.values():
        if record.get("error") is None and record.get("outputs"):
            by_task[record["task"]][str(record["id"])] = record
    return by_task


def collect(run_dirs: dict[str, Path], tasks: list[str] | None = None) -> list[TaskResponses]:
    """The cross-checkable tasks (records with sampled passages) of every run, or just `tasks`."""
    if len(run_dirs) < 1:
        raise ConfigError("give at least one run folder")
    runs = {name: read_run(name, path) for name, path in run_dirs.items()}
    present = [t for t in dict.fromkeys(t for r in runs.values() for t in sorted(r))
               if any(rec.get("samples") for r in runs.values() for rec in r.get(t, {}).values())]
    wanted = present if tasks is None else list(dict.fromkeys(tasks))
    if not wanted:
        folders = ", ".join(str(path) for path in run_dirs.values())
        raise ConfigError(f"no task in {folders} has sampled passages to cross-check (they were run without samples, "
                          "e.g. --num-samples 0); rerun a cross-checkable task (`hallubench tasks` marks them: scored "
                          "by crosscheck) with --num-samples >= 1, or leave --num-samples at the task's default")
    out = []
    for task in wanted:
        missing = [name for name, r in runs.items() if not any(rec.get("samples") for rec in r.get(task, {}).values())]
        if missing:
            raise ConfigError(f"task {task!r} has no sampled passages in the run folder(s) of {', '.join(missing)} "
                              f"({', '.join(str(run_dirs[m]) for m in missing)}); cross-checkable tasks there: "
                              f"{', '.join(present) or 'none'} (run them with --num-samples >= 1)")
        per_model = {name: {i: rec for i, rec in r[task].items() if rec.get("samples")} for name, r in runs.items()}
        ids = sorted(set.intersection(*(set(records) for records in per_model.values())))
        if not ids:
            raise ConfigError(f"task {task!r}: no item was answered by every model; check the runs' --limit and errors")
        first = per_model[next(iter(per_model))]
        out.append(TaskResponses(
            task=task, ids=ids,
            answers={name: [records[i]["outputs"][0] for i in ids] for name, records in per_model.items()},
            samples={name: [list(records[i]["samples"]) for i in ids] for name, records in per_model.items()},
            references=[first[i].get("reference") for i in ids],
            dropped={name: sorted(set(records) - set(ids)) for name, records in per_model.items()
                     if set(records) - set(ids)},
        ))
    return out


def mini_data(run_dirs: Mapping[str, Path], tasks: Sequence[str]) -> dict[str, list[str]]:
    """Run name -> those of `tasks` that its results.json lists as made on the embedded synthetic mini benchmarks
    (`run.mini_data`), for each run with any. A folder without results.json (an unfinished run) lists none."""
    out = {}
    for name, folder in run_dirs.items():
        path, door = Path(folder) / RESULTS, Folder(folder)
        if not door.is_file(RESULTS):
            continue
        data = door.read_bytes(RESULTS)
        try:
            listed = (json.loads(data).get("run") or {}).get("mini_data") or []
        except (ValueError, AttributeError) as err:
            raise ConfigError(f"{path} (model {name!r}) cannot be read ({err}), so whether its run used the mini "
                              "benchmarks is unknown; run that run's command again to write it anew (it resumes: "
                              "no sample is generated twice)") from None
        if mini := sorted(set(listed) & set(tasks)):
            out[name] = mini
    return out
