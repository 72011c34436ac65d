"""The run: one Accelerator, samples sharded by stable id, appended to the run folder, scored on main.

Every process builds the same plan, skips samples the run folder already holds, generates its
round-robin share of the remaining batches and appends each record to its own file. After a barrier the main
process gathers what each process did, merges the files into `samples.jsonl`, checks that every
planned sample is there, scores and writes `results.json`.

Lifecycle: a folder holding another model's samples is refused before anything is written; the folder is
marked unfinished (harness/run_state.py) before the first sample and the mark is cleared only after results.json
and its chart are written. Ctrl-C or SIGTERM ends the run with `RunInterrupted` (one line: what is kept, the
command that resumes) and any other exception propagates; both leave the mark, saying why the run stopped, so
publish, rank and --from-outputs refuse the folder until the same command finishes it.
"""
from __future__ import annotations

import dataclasses
import gc
import json
import logging
import os
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from itertools import groupby
from pathlib import Path
from typing import Any

from hallubench.benchmarks import Task
from hallubench.harness import digest, folder_lock, run_state, store
from hallubench.harness.atomic import write_files
from hallubench.harness.command import command_line, run_argv
from hallubench.harness.environment import environment
from hallubench.harness.generate import generate_batch, prepare_batch
from hallubench.harness.lm_eval_block import lm_eval_block
from hallubench.harness.media import check_model_accepts
from hallubench.harness.options import AUTO, RunOptions
from hallubench.models.configs import AUTO_MAX_BATCH
from hallubench.errors import ConfigError, MixedRunFolderError, RunInterrupted
from hallubench.harness.plot import PLOT, plot_results, pyplot
from hallubench.harness.plan import WorkItem, task_arguments
from hallubench.harness.preflight import RunPlan, check_hub_checkpoint, make_plan, model_arguments
from hallubench.harness.prefetch import BackgroundWrites, in_background, prefetched, quick_gil_handoffs
from hallubench.harness.rebuilt import reconcile
from hallubench.harness.probes_plot import PROBES_PLOT, plot_probes
from hallubench.harness.program import StepJournal, check_steps_accept, role_models, run_program_batch
from hallubench.harness.results_schema import ModelInfo, Results, RunInfo
from hallubench.harness.scoring import score_task, store_verdicts, without_media
from hallubench.harness.sharding import shard
from hallubench.models.protocol import NextTokenScorer
from hallubench.redact import redact, redact_values

RESULTS = "results.json"
# Notes for the user; the command line shows them on stderr, a Python caller sees them if it asks (logging).
log = logging.getLogger("hallubench")


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _options_dict(options: RunOptions) -> dict[str, Any]:
    """The options as stored in results.json, credentials in URLs (base_url=https://user:key@...) masked."""
    return redact_values(json.loads(json.dumps(dataclasses.asdict(options), default=str)))


def error_summary(records: list[dict[str, Any]]) -> str | None:
    """'N of M samples failed' with a count per kind of error (conversation numbers left out), or None. Rows left
    out because --modality removes their medium are not failures (results count them as without media)."""
    failed = [r["error"] for r in records if r.get("error") and not without_media(r)]
    if not failed:
        return None
    kinds = Counter(f"{e['type']} {e['class']}: {re.sub(r'conversation [0-9]+:? ?', '', e['message'])[:160]}"
                    for e in failed)
    lines = [f"{count} x {kind}" for kind, count in kinds.most_common()]
    return f"{len(failed)} of {len(records)} samples failed:\n  " + "\n  ".join(lines)


def load_model(options: RunOptions, device: str, flag: str = "--model"):
    """The ChatModel of `options.model` / `model_args` (see `model_arguments`), its arguments checked first (a
    ranking reloads a run's model this way; a run loads from its plan's checked arguments, `load_checked`)."""
    args = model_arguments(options, device, flag)
    check_hub_checkpoint(options.model, args, flag)
    return load_checked(options.model, args, flag)


def load_checked(adapter: str, args: dict[str, Any], flag: str = "--model"):
    """The ChatModel of `adapter` with arguments checked already; ConfigError naming `flag` when it cannot load."""
    from hallubench.models import get_model

    try:
        return get_model(adapter, **args)
    except (OSError, ValueError) as err:  # no such checkpoint, bad dtype, missing API key, ...
        raise ConfigError(f"{flag} {adapter}: cannot load {args['model']!r}: {err}") from err


def _batches(items: list[WorkItem], size: int):
    """Each task's items in batches of `size`, shortest prompts together (less padding in greedy batches)."""
    for _, same_task in groupby(items, key=lambda item: item.task.name):
        same_task = sorted(same_task, key=lambda item: len(item.task.prompt(item.row)))
        for start in range(0, len(same_task), size):
            yield same_task[start:start + size]


def superseded(contents: store.StoreContents, items: list[WorkItem]) -> list[str]:
    """Keys of stored records for a planned (task, id) under another key, i.e. made with other settings."""
    planned = {(item.task.name, item.id): item.key for item in items}
    return sorted(key for key, record in contents.records.items()
                  if planned.get((record["task"], str(record["id"])), key) != key)


def check_one_model(run_dir: Path, contents: store.StoreContents, model) -> None:
    """MixedRunFolderError when `run_dir` holds samples of another model: a second model never appends to a folder."""
    other = next((record for record in contents.records.values()
                  if record.get("model_fingerprint") not in (None, model.fingerprint)), None)
    if other is not None:
        raise MixedRunFolderError(
            f"{run_dir} holds samples of another model ({other.get('model')}, fingerprint {other['model_fingerprint']}; "
            f"this run's is {model.name}, fingerprint {model.fingerprint}). A run folder is one model's run: choose "
            "another --output-dir (or leave it out: the default is one folder per model and task set)")


def write_results(results: Results, out_dir: Path) -> Path:
    """results.json (with its lm-eval view, harness/lm_eval_block.py), its chart (results.png) and, with answer
    probabilities, the chart of them by perturbation level (probes.png), swapped in together (harness/atomic.py)."""
    text = json.dumps({**results.to_dict(), **lm_eval_block(results)}, indent=2, ensure_ascii=False) + "\n"
    with cycles_collected_after():
        write_files(out_dir, {RESULTS: lambda tmp: tmp.write_text(text, encoding="utf-8"),
                              PLOT: lambda tmp: plot_results(results, tmp),
                              PROBES_PLOT: lambda tmp: plot_probes(results, tmp)}, "results")
    return out_dir / RESULTS


@contextmanager
def cycles_collected_after() -> Iterator[None]:
    """Python's cyclic garbage collector paused while the run's end makes its many short-lived objects (a chart's
    artists, the bootstrap's resamples), and resumed after (cycles made meanwhile wait for its next collection).
    Drawing results.png alone set off 8-10 young collections; pausing them took 0.05 s off the 0.5 s that scoring and
    writing results took after a run (median of 6 interleaved runs, tests/perf/README.md)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def score(tasks: list[Task], records: list[dict[str, Any]], totals: dict[str, int],
          task_args: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Each task's result; `task_args[task]` are the `--task-args` it was run with."""
    by_task: dict[str, list[dict[str, Any]]] = {task.name: [] for task in tasks}
    for record in records:
        by_task[record["task"]].append(record)
    with cycles_collected_after():
        return {task.name: score_task(task, by_task[task.name], totals[task.name], (task_args or {}).get(task.name))
                for task in tasks}


def run(options: RunOptions | RunPlan) -> Results | None:
    """Generate, store and score; returns the Results on the main process and None elsewhere. Every argument, task,
    row and media path is checked first (`preflight.make_plan`), before accelerate, torch or any weights load."""
    started, t0 = utc_now(), time.perf_counter()
    checked = options if isinstance(options, RunPlan) else make_plan(options, resume=False)
    options = checked.options
    from accelerate import Accelerator

    accelerator = Accelerator()
    lock = _lock_run_folder(accelerator, options.output_dir)
    previous = signal.signal(signal.SIGTERM, _terminate) if _main_thread() else None
    try:
        return _run_locked(checked, accelerator, started, t0)
    except KeyboardInterrupt as err:
        why = f"was interrupted ({err.args[0] if err.args else 'SIGINT'})"
        if accelerator.is_main_process:
            run_state.mark_stopped(options.output_dir, why)
        raise RunInterrupted(_kept(options.output_dir, why, resume_line(options))) from None
    except BaseException as err:
        if accelerator.is_main_process:
            run_state.mark_stopped(options.output_dir, f"failed ({type(err).__name__}: {redact(str(err))[:200]})")
        raise
    finally:
        lock.release()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def generate_all(model, helpers: dict[str, Any], batches: list[list[WorkItem]], options: RunOptions,
                 journal: StepJournal, writer: store.SampleWriter, done=lambda n: None) -> None:
    """Generate `batches` and append their records to `writer`, calling `done(n)` after each batch. While the model
    works on one batch, the next batches' media load and the last batch's records are written (harness/prefetch.py);
    a multi-step task loads its media step by step, inside its batch. tests/test_run_speed.py times this loop
    against direct generation."""
    def prepared(batch: list[WorkItem]):
        return batch, None if batch[0].task.program else prepare_batch(batch, options, model)

    writes = BackgroundWrites()
    # Two workers: one batch's media decode (in the decoding helper process) while another's processor runs.
    ahead = prefetched(batches, prepared, workers=2)
    try:
        with quick_gil_handoffs():
            for batch, ready in ahead:
                records = run_program_batch(model, helpers, batch, options, journal) if ready is None \
                    else generate_batch(model, ready)
                writes.submit(lambda records=records: writer.append_all(records))
                done(len(records))
    finally:
        # Stopped early (an error, Ctrl-C): the look-ahead's threads are stopped here, not whenever the garbage
        # collector closes the generator, in whatever thread it runs (one of those threads cannot join itself).
        ahead.close()
        writes.close()


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt("SIGTERM")  # stops the run the way Ctrl-C does: the mark says so, what is done is kept


def resume_line(options: RunOptions) -> str:
    """The command line that runs `options` again (credentials masked), which resumes its run folder."""
    return command_line(run_argv(_options_dict(options)))


def _kept(run_dir: Path, why: str, command: str) -> str:
    """One line for a stopped run: what the folder keeps and the command that resumes it."""
    kept = len(store.read_store(run_dir).finished()) if run_dir.is_dir() else 0
    return f"the run {why}; {kept} finished samples are kept in {run_dir}. Resume with the same command: {command}"


def _lock_run_folder(accelerator, run_dir: Path) -> folder_lock.FolderLock | folder_lock.RankLock:
    """The main process takes the folder's lock; every process stops with its message when it is taken."""
    from accelerate.utils import broadcast_object_list, gather_object

    lock, refusal = None, None
    if accelerator.is_main_process:
        try:
            lock = folder_lock.FolderLock(run_dir, "run")
        except folder_lock.FolderBusy as err:
            refusal = str(err)
    refusal = broadcast_object_list([refusal])[0]
    if refusal is not None:
        raise folder_lock.FolderBusy(refusal)
    if lock is None:
        lock = folder_lock.RankLock(run_dir)
    pids = gather_object([os.getpid()])
    if accelerator.is_main_process and len(pids) > 1:
        lock.set_rank_pids(pids)
    return lock


def _run_locked(checked: RunPlan, accelerator, started: str, t0: float) -> Results | None:
    from accelerate.utils import gather_object
    import torch
    from tqdm.auto import tqdm

    options, tasks = checked.options, checked.task_list
    with accelerator.main_process_first():  # the plan checked everything that needs no weights
        model_args, helper_args = checked.loads(str(accelerator.device))
        model = load_checked(options.model, model_args)
        helpers = {role: load_checked(adapter, args, f"--helper {role}") for role, (adapter, args) in helper_args.items()}
        roles = {task.name: role_models(task, model, helpers) for task in tasks if task.program}
        if options.answer_probs and not isinstance(model, NextTokenScorer):
            raise ConfigError(f"--answer-probs: the {options.model} adapter cannot read next-token probabilities")
        for task in tasks:
            check_model_accepts(task, options.modality, model.name, model.accepts)
            if task.program:
                check_steps_accept(task, options.modality, roles[task.name],
                                   task_arguments(task, options.task_args)[0])
        fingerprints = {name: {role: m and m.fingerprint for role, m in models.items()} for name, models in roles.items()}
        items, totals = checked.work(model.fingerprint, fingerprints)
    run_dir = options.output_dir
    initial = store.read_store(run_dir) if run_dir.exists() else store.StoreContents()
    if initial.torn and accelerator.is_main_process:
        log.warning(f"hallubench: skipped a torn last line (interrupted write) in {'; '.join(initial.dropped)}; "
                    "that sample runs again")
    check_one_model(run_dir, initial, model)
    stale = superseded(initial, items)
    if stale and accelerator.is_main_process:
        log.warning(f"hallubench: warning: {run_dir} already holds {len(stale)} of these samples made with other "
                    "settings (model, generation, media options, seed or prompt); they stay beside the new ones, but "
                    "`--from-outputs`, `hallubench rank` and `publish` need one setting per folder: use a new --output-dir")
    # A dataset rebuilt since: stored answers are scored with the rows read now, or made again (harness/rebuilt.py).
    rebuilt = reconcile(items, initial.records, initial.finished())
    finished = initial.finished() - set(rebuilt.regenerate)
    if accelerator.is_main_process:
        state = run_state.unfinished(run_dir)
        if state and state.get("stopped"):
            log.warning(f"hallubench: resuming {run_dir}: its last run {run_state.why_stopped(state)}")
        run_state.mark_unfinished(run_dir, _options_dict(options))  # until results.json is written: readers refuse the folder meanwhile
    journal = StepJournal(run_dir, accelerator.process_index)
    accelerator.wait_for_everyone()  # everyone has read the folder before any writer trims a torn tail
    if accelerator.is_main_process and (summary := rebuilt.summary(run_dir)):
        store.merge(run_dir, replace=rebuilt.replacements())  # before any writer opens its rank file
        log.warning(f"hallubench: {summary}")
    accelerator.wait_for_everyone()
    # Whole batches are dealt out, so a batch holds the same samples whatever the process count.
    batch = AUTO_MAX_BATCH if options.batch_size == AUTO else options.batch_size  # auto: the adapter splits them
    batches = list(_batches([item for item in items if item.key not in finished], batch))
    mine = shard(batches, accelerator.process_index, accelerator.num_processes)
    generated_here = sum(map(len, mine))
    writer = store.SampleWriter(store.rank_file(run_dir, accelerator.process_index))
    bar = tqdm(total=generated_here, desc="hallubench run", unit="sample", disable=not accelerator.is_main_process)
    t_gen = time.perf_counter()
    if accelerator.is_main_process:  # while the model works: what the run's end needs that does not depend on it
        in_background(pyplot)
        recorded_environment = in_background(environment)
    try:
        generate_all(model, helpers, mine, options, journal, writer, bar.update)
    finally:
        bar.close()  # first: an interrupt's message (what was kept, how to resume) is printed below the bar, not over it
        writer.close()
    journal.close()
    done = gather_object([{"rank": accelerator.process_index, "generated": generated_here,
                           "batch_size": getattr(model, "batch_size", None)}])
    generation_s = time.perf_counter() - t_gen
    accelerator.wait_for_everyone()
    results = None
    if accelerator.is_main_process:
        steps = store.merge(run_dir, store.STEPS).records if any(task.program for task in tasks) else {}
        contents = store.merge(run_dir)
        lost = [item.key for item in items if item.key not in contents.records]
        if lost:
            raise RuntimeError(f"{len(lost)} planned samples are missing from {run_dir} after the run: {lost[:5]}")
        records = [contents.records[item.key] for item in items]
        scored_from = digest.scored_digests(records, steps)  # as on disk, before scoring reads them
        generated = sum(entry["generated"] for entry in done)
        run_info = RunInfo(options=_options_dict(options), num_processes=accelerator.num_processes,
                           torch_threads=torch.get_num_threads(),
                           started=started, finished=utc_now(), duration_s=round(time.perf_counter() - t0, 3),
                           generated=generated, generation_s=round(generation_s, 3),
                           samples_per_s=round(generated / generation_s, 4) if generated else None,
                           torn_lines=sorted(set(initial.torn + contents.torn)),
                           mini_data=sorted(name for name, planned in checked.tasks.items() if planned.mini),
                           auto_batch_sizes=[entry["batch_size"] for entry in done] if options.batch_size == AUTO else [],
                           records_digest=scored_from)
        results = Results(tasks=score(tasks, records, totals, {task.name: options.task_args for task in tasks}),
                          run=run_info, environment=recorded_environment.result(),
                          model=ModelInfo(name=options.model, args=_options_dict(options)["model_args"],
                                          fingerprint=model.fingerprint))
        for name, planned in checked.tasks.items():
            results.tasks[name].dataset = planned.source
        store_verdicts(run_dir, tasks, records, contents.records, results.tasks)
        write_results(results, run_dir)
        run_state.mark_finished(run_dir)
        summary = error_summary(records)
        if summary:
            log.warning(f"hallubench: {summary}\nThey run again when you rerun the same command.")
        for message, count in Counter(r["error"]["message"] for r in records if without_media(r)).items():
            log.warning(f"hallubench: {count} rows left out: {message}")
    # No barrier after this: if scoring fails on the main process, the others must not wait for it forever.
    return results
