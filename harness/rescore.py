"""`--from-outputs RUN_DIR`: parse and score a run folder's saved outputs again, without the model."""
from __future__ import annotations

import json
import time
from pathlib import Path

from hallubench.harness import store
from hallubench.harness.environment import environment
from hallubench.harness.results_schema import ModelInfo, Results, RunInfo
from hallubench.errors import ConfigError, RunFolderNotFoundError
from hallubench.harness.runner import RESULTS, resolve_tasks, score, utc_now, write_results
from hallubench.harness.scoring import parse_records


def rescore(run_dir: Path, output_dir: Path | None = None) -> Results:
    """Results from the records in `run_dir`, written to `output_dir` (default: `run_dir`)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunFolderNotFoundError(f"--from-outputs: {run_dir} is not a run folder")
    t0, started = time.perf_counter(), utc_now()
    contents = store.read_store(run_dir)
    if not contents.records:
        raise RunFolderNotFoundError(f"--from-outputs: {run_dir} holds no sample records (samples*.jsonl)")
    seen: dict[tuple[str, str], str] = {}
    for key, record in contents.records.items():
        where = (record["task"], str(record["id"]))
        if where in seen:
            raise ConfigError(f"--from-outputs: {run_dir} has two records for task {where[0]!r} id {where[1]!r} "
                             f"(keys {seen[where]} and {key}: different model or settings); keep one run per folder")
        seen[where] = key
    old_path = run_dir / RESULTS
    old = Results.from_dict(json.loads(old_path.read_text())) if old_path.exists() else None
    tasks = resolve_tasks(sorted({r["task"] for r in contents.records.values()}))
    by_name = {task.name: task for task in tasks}
    # Parsed once more, by the current parser: the one reading that counts and results report.
    records = [parsed for r in contents.records.values() for parsed in parse_records(by_name[r["task"]], [r])]
    totals = {t.name: old.tasks[t.name].n_total if old and t.name in old.tasks
              else sum(r["task"] == t.name for r in records) for t in tasks}
    first = records[0]
    model = old.model if old else ModelInfo(name=first["model"], fingerprint=first["model_fingerprint"])
    run_info = RunInfo(options=old.run.options if old else {}, from_outputs=str(run_dir), started=started,
                       finished=utc_now(), duration_s=round(time.perf_counter() - t0, 3), torn_lines=contents.torn,
                       mini_data=old.run.mini_data if old else [])
    task_args = {t.name: old.tasks[t.name].task_args for t in tasks if old and t.name in old.tasks}
    results = Results(tasks=score(tasks, records, totals, task_args), model=model, run=run_info,
                      environment=environment())
    for name, task in results.tasks.items():  # the data the samples came from, as the run recorded it
        task.dataset = old.tasks[name].dataset if old and name in old.tasks else {}
    write_results(results, Path(output_dir) if output_dir else run_dir)
    return results
