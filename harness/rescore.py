"""`--from-outputs RUN_DIR`: parse and score a run folder's saved outputs again, without the model."""
from __future__ import annotations

import logging
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from hallubench.confined import Folder
from hallubench.harness import digest, folder_lock, run_state
from hallubench.harness.environment import environment
from hallubench.harness.results_schema import ModelInfo, Results, RunInfo
from hallubench.errors import RunFolderNotFoundError
from hallubench.harness.preflight import resolve_tasks
from hallubench.harness.runner import RESULTS, score, utc_now, write_results
from hallubench.benchmarks.task import Task
from hallubench.harness.scoring import parse_records, store_verdicts

log = logging.getLogger("hallubench")  # notes: the command line shows them on stderr


def rescore(run_dir: Path, output_dir: Path | None = None) -> Results:
    """Results from the records in `run_dir`, written to `output_dir` (default: `run_dir`).

    `run_dir` is read through run_state.read_run_folder (refused while a run writes it, when its last run did not
    finish, or when its records mix models or settings); a separate `output_dir` is held as a writer meanwhile."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunFolderNotFoundError(f"--from-outputs: {run_dir} is not a run folder")
    target = Path(output_dir) if output_dir else run_dir
    separate = target.resolve() != run_dir.resolve()
    # results.json may be scored on other samples than the folder now holds: scoring them all again is the fix.
    with run_state.read_run_folder(run_dir, "re-score (reading)", results_must_match=False) as folder, \
            folder_lock.hold(target, "re-score") if separate else nullcontext():
        for dropped in folder.dropped:  # scored without it: say which sample that is, and why
            log.warning(f"hallubench: --from-outputs: dropped the torn last line (an interrupted write) of {dropped}; "
                        f"it is not scored: rerun the command that made {run_dir} to make it again")
        results, tasks, scored = _rescore(run_dir, folder)
        if not separate:  # the records get the verdicts of this scoring; a separate target holds no records
            store_verdicts(run_dir, tasks, scored, folder.records, results.tasks)
        write_results(results, target)
    return results


def _old_results(run_dir: Path, recorded: dict | None) -> Results | None:
    """The results.json being replaced (read by read_run_folder, through the door), or None: there is none, or it
    cannot be read (cut off, edited), and then the records alone are scored, and the user told what that loses."""
    if recorded is None and not Folder(run_dir).is_file(RESULTS):
        return None
    try:
        if recorded is not None:
            return Results.from_dict(recorded)
        problem = "cannot be read as JSON"
    except ValueError as err:
        problem = f"is not a results file ({err})"
    log.warning(f"hallubench: --from-outputs: {run_dir / RESULTS} {problem}; scoring the records alone: the options, "
                "sample totals and dataset revisions it recorded are not carried over")
    return None


def _rescore(run_dir: Path, folder: run_state.RunFolder) -> tuple[Results, list[Task], list[dict[str, Any]]]:
    t0, started, records_by_key = time.perf_counter(), utc_now(), folder.records
    if not records_by_key:
        raise RunFolderNotFoundError(f"--from-outputs: {run_dir} holds no sample records (samples*.jsonl)")
    old = _old_results(run_dir, folder.results)
    tasks = resolve_tasks(sorted({r["task"] for r in records_by_key.values()}),
                          (old.run.options.get("include") if old else None) or None)
    by_name = {task.name: task for task in tasks}
    # Parsed once more, by the current parser: the one reading that counts and results report.
    records = [parsed for r in records_by_key.values() for parsed in parse_records(by_name[r["task"]], [r])]
    totals = {t.name: old.tasks[t.name].n_total if old and t.name in old.tasks
              else sum(r["task"] == t.name for r in records) for t in tasks}
    scored_from = digest.scored_digests(records_by_key.values(), folder.steps)
    first = records[0]
    model = old.model if old else ModelInfo(name=first["model"], fingerprint=first["model_fingerprint"])
    run_info = RunInfo(options=old.run.options if old else {}, from_outputs=str(run_dir), started=started,
                       finished=utc_now(), duration_s=round(time.perf_counter() - t0, 3), torn_lines=folder.torn,
                       mini_data=old.run.mini_data if old else [], records_digest=scored_from)
    task_args = {t.name: old.tasks[t.name].task_args for t in tasks if old and t.name in old.tasks}
    results = Results(tasks=score(tasks, records, totals, task_args), model=model, run=run_info,
                      environment=environment())
    for name, task in results.tasks.items():  # the data the samples came from, as the run recorded it
        task.dataset = old.tasks[name].dataset if old and name in old.tasks else {}
    return results, tasks, records
