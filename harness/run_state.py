"""Whether a run folder is finished, and the one check every reader of a run folder makes.

A run marks its folder unfinished (`.hallubench-unfinished.json`: its options, when it started and, once it
stops early, why) before it writes its first sample, and removes the mark only after results.json and its chart
are written. kill -9, Ctrl-C, SIGTERM, a full disk or any exception leave the mark; the same command run again
resumes and removes it.

`read_run_folder(folder, purpose)` is what `publish`, `rank`, `run --from-outputs` and the viewer read a run
folder through, and it reads every file through the door (hallubench/confined.py: no link out of the folder, no
FIFO, bounded). It holds the folder's lock while they read (a writer at work, or one killed half-way, is refused,
naming it), refuses an unfinished folder naming the command that finishes it (rendered by harness/command.py from
the options the mark records, never copied from it), refuses a folder holding results.json without its manifest
(not whole: `run --from-outputs DIR` writes it whole), refuses results.json and charts
that do not match the manifest of their last whole write (harness/atomic.py), and refuses a folder whose records
mix settings (two models, two settings of one sample, a results.json scored on other samples than the folder
holds), naming the two settings and what to do, and refuses a results.json that was not computed from exactly the
records beside it (its `run.records_digest`, harness/digest.py), naming both files and `run --from-outputs`.
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from hallubench import confined
from hallubench.confined import Folder
from hallubench.errors import (FolderWriteError, MixedRunFolderError, NotWholeError, StaleResultsError,
                               UnfinishedRunError)
from hallubench.harness import digest, folder_lock, store
from hallubench.harness.atomic import MANIFEST, check_files, has_manifest
from hallubench.harness.command import command_line, recorded_run_argv, rescore_hint
from hallubench.writes import write_bytes_atomically

UNFINISHED = ".hallubench-unfinished.json"
RESULTS = "results.json"
MARKERS = (store.MERGED, RESULTS, UNFINISHED)  # a folder holding any of these is a run folder hallubench wrote
# What a run folder is read for (folder_lock purposes): tests/reliability/test_derived_results.py runs a command of
# each, so a reader added under a new purpose must be added there.
PURPOSES = ("publish", "rank (reading)", "re-score (reading)", "view", "verify")
# Record fields that show how two records of one sample differ (the rest of a setting is hashed in the key).
SETTINGS = ("model", "model_fingerprint", "generation", "sample_generation", "seed", "prompt", "media")


def mark_unfinished(folder: Path, options: Mapping[str, Any] | None = None) -> None:
    """Say that a run works on `folder` (before it writes anything there); `options` are the run's options as
    results.json records them, from which `check_finished` renders the command that finishes it."""
    state = {"options": options, "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
             "pid": os.getpid(), "stopped": None}
    write_bytes_atomically(Path(folder) / UNFINISHED, json.dumps(state).encode())


def mark_stopped(folder: Path, why: str) -> None:
    """Add why this process's run stopped early to its mark, if it can be written (the mark stays either way). A
    run refused before it marked the folder leaves an earlier run's mark as it was."""
    state = unfinished(folder)
    if not state or state.get("pid") != os.getpid():
        return
    try:
        write_bytes_atomically(Path(folder) / UNFINISHED, json.dumps({**state, "stopped": why}).encode())
    except (OSError, FolderWriteError):  # a full disk: the mark without the reason still refuses readers, and the
        pass  # error that stopped the run (naming the file that failed) is the one the user sees


def mark_finished(folder: Path) -> None:
    (Path(folder) / UNFINISHED).unlink(missing_ok=True)


def unfinished(folder: Path) -> dict[str, Any] | None:
    """The mark of an unfinished run in `folder` ({} when it cannot be read), or None (read through the door:
    a mark that is a link out of the folder is refused)."""
    door = Folder(folder)
    if not door.is_file(UNFINISHED):
        return None
    data = door.read_bytes(UNFINISHED, confined.MARK)  # a link out or a FIFO: its own error, raised
    try:
        state = json.loads(data)
    except ValueError:
        return {}
    return state if isinstance(state, dict) else {}


@dataclass
class RunFolder:
    """A finished run folder as its readers see it: its sample records by key and its results.json (None if
    it has none: a folder of samples only)."""

    folder: Path
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    results: dict[str, Any] | None = None
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)  # steps.jsonl's records by key (multi-step tasks)
    torn: list[str] = field(default_factory=list)  # files whose torn last line was left out
    dropped: list[str] = field(default_factory=list)  # for each: the file and the sample that line was


def check_finished(folder: Path) -> None:
    """UnfinishedRunError when a run is not done with `folder`: its mark, rank files or a torn line."""
    state = unfinished(folder)
    if state is not None:
        raise UnfinishedRunError(
            f"{folder} is unfinished: its last run{_printable(state.get('started'), ' (started {})')} "
            f"{why_stopped(state) or 'stopped before it finished (killed, or still starting)'}. "
            f"Finish it by running the same command again: {finishing_command(folder, state)} (it resumes: finished "
            "samples are kept), then try again")
    leftovers = Folder(folder).names(store.RANK_GLOB)
    if leftovers:
        raise UnfinishedRunError(
            f"{folder} is unfinished: it still holds {', '.join(leftovers)} (a run stopped before merging them). "
            f"Finish it by running the `hallubench run --output-dir {folder} ...` that wrote it again (it resumes), "
            "then try again")


def why_stopped(state: Mapping[str, Any]) -> str:
    """Why the marked run stopped, in our own words only: the interrupt that stopped it, or the class of the error
    that failed it. The mark is a file in a folder we did not write, so its free text is never shown."""
    stopped = state.get("stopped")
    if not isinstance(stopped, str):
        return ""
    if re.fullmatch(r"was interrupted \((?:SIGINT|SIGTERM)\)", stopped):
        return stopped
    failed = re.match(r"failed \(([A-Za-z_][A-Za-z0-9_]{0,60})[:)]", stopped)
    return f"failed ({failed.group(1)})" if failed else ""


def _printable(value: Any, shape: str = "{}") -> str:
    """A short text of the mark (when it started, why it stopped) in `shape`, or "" when it is no printable text of
    one line: the mark is a file in a folder we did not write, and its text is shown, never run."""
    text = value if isinstance(value, str) and value.isprintable() and len(value) <= 300 else ""
    return shape.format(text) if text else ""


def finishing_command(folder: Path, state: Mapping[str, Any]) -> str:
    """The command that finishes the run marked in `folder`, rendered by harness/command.py from the options the
    mark recorded (checked as RunOptions); never a command line copied from the file."""
    argv = recorded_run_argv(state.get("options"))
    if argv is None:
        return (f"the `{command_line(['run', '--output-dir', str(folder)])} ...` that wrote it (the options its mark "
                "records cannot be read back as run options, so no command is printed from it)")
    return command_line(argv)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def difference(a: dict[str, Any], b: dict[str, Any]) -> str:
    """How the settings of two records differ, as `field: A vs B`."""
    fields = [name for name in SETTINGS if a.get(name) != b.get(name)]
    if not fields:
        return f"keys {a['key']} vs {b['key']}: media options or seed, which only the keys record"
    return "; ".join(f"{name}: {_short(a.get(name))} vs {_short(b.get(name))}" for name in fields[:2])


def check_one_setting(folder: Path, records: dict[str, dict[str, Any]], results: dict[str, Any] | None) -> None:
    """MixedRunFolderError when the records come from two models or two settings of one sample, or when
    results.json scored other samples than the folder holds."""
    by_model: dict[str, dict[str, Any]] = {}
    for record in records.values():
        if record.get("model_fingerprint"):
            by_model.setdefault(record["model_fingerprint"], record)
    if len(by_model) > 1:
        a, b = list(by_model.values())[:2]
        raise MixedRunFolderError(
            f"{folder} holds samples of two models: {a.get('model')} (fingerprint {a['model_fingerprint']}) and "
            f"{b.get('model')} (fingerprint {b['model_fingerprint']}). A run folder is one model's run: run each "
            "model into its own --output-dir (the default is one folder per model and task set) and use that one")
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for record in records.values():
        where = (record["task"], str(record["id"]))
        if where in seen:
            raise MixedRunFolderError(
                f"{folder}: task {where[0]!r} item {where[1]!r} has records made with two settings "
                f"({difference(seen[where], record)}). A run folder holds one setting: run the setting you want "
                "into a new --output-dir and use that one")
        seen[where] = record
    if results is None or (not records and (results.get("run") or {}).get("from_outputs")):
        return  # a folder of samples only, or a re-scored one whose samples are in its source folder
    fingerprint = (results.get("model") or {}).get("fingerprint")
    if fingerprint and by_model and fingerprint not in by_model:
        other = next(iter(by_model.values()))
        raise MixedRunFolderError(
            f"{folder}: results.json scores model fingerprint {fingerprint}, but the samples are of {other.get('model')} "
            f"(fingerprint {other['model_fingerprint']}); score them again with {rescore_hint(folder)}")
    held = Counter(record["task"] for record in records.values())
    scored = {name: (task or {}).get("n_selected", 0) for name, task in (results.get("tasks") or {}).items()}
    limit = ((results.get("run") or {}).get("options") or {}).get("limit")
    for task in sorted(set(held) | set(scored)):
        if held.get(task, 0) != scored.get(task, 0):
            raise MixedRunFolderError(
                f"{folder}: results.json scores task {task!r} on {scored.get(task, 0)} samples (--limit {limit}), but "
                f"the folder holds {held.get(task, 0)} records of it (runs with another --limit or other tasks wrote "
                f"here). Score what it holds with {rescore_hint(folder)}, or run the setting you "
                "want into a new --output-dir")


def check_derived(folder: Path, results: dict[str, Any], records: dict[str, dict[str, Any]],
                  steps: dict[str, dict[str, Any]], source: Path | None = None) -> None:
    """StaleResultsError unless results.json (in `folder`) was computed from exactly these records: those of
    `source` (default `folder`), by the digests it recorded (harness/digest.py)."""
    source = Path(source or folder)
    recorded = (results.get("run") or {}).get("records_digest")
    fix = f"Score what {source} holds with {rescore_hint(source)}, then try again"
    if not isinstance(recorded, dict) or not recorded and records:
        raise StaleResultsError(
            f"{folder / RESULTS} records no digest of the samples it scored (written by hand or by an older "
            f"hallubench), so nothing ties its scores to {source / store.MERGED}. {fix}")
    held = digest.scored_digests(records.values(), steps)
    for task in sorted(set(recorded) | set(held)):
        mine, theirs = held.get(task, {}), recorded.get(task) or {}
        for kind in (digest.SAMPLES, digest.STEPS):
            if mine.get(kind) != theirs.get(kind):
                count = sum(record["task"] == task for record in records.values())
                raise StaleResultsError(
                    f"{folder / RESULTS} was not computed from what {source / (kind + '.jsonl')} holds now: task "
                    f"{task!r}'s {count} records there differ from those it scored (edited, or written by another "
                    f"run since). Its scores do not describe these samples. {fix}")


def _read_results(folder: Path, strict: bool = True) -> dict[str, Any] | None:
    """results.json of `folder`, or None where it has none; one that cannot be read is an error (`strict`), or
    None for a re-score, which writes it anew from the records."""
    door = Folder(folder)
    if not door.is_file(RESULTS):
        return None
    data = door.read_bytes(RESULTS)
    try:
        results = json.loads(data)
    except ValueError as err:
        if not strict:
            return None
        raise UnfinishedRunError(f"{folder / RESULTS} cannot be read ({err}); write it anew by running the command "
                                 f"that made the folder again (it resumes), or {rescore_hint(folder)}") from None
    if not isinstance(results, dict):
        if not strict:
            return None
        raise UnfinishedRunError(f"{folder / RESULTS} is not a results object; run {rescore_hint(folder)}")
    return results


def check_whole(folder: Path, results: dict[str, Any] | None) -> None:
    """NotWholeError when `folder` holds results.json but not the manifest its writer puts there last (harness/
    atomic.py): nothing then ties results.json and its charts to one write, nor says they are ours. The message gives
    the one command that writes them whole again from the records: `run --from-outputs`."""
    if results is None or has_manifest(folder):
        return
    source = (results.get("run") or {}).get("from_outputs")
    elsewhere = isinstance(source, str) and _samples_elsewhere(store.read_store(folder).records, results)
    hint = rescore_hint(source, folder) if elsewhere else rescore_hint(folder)
    raise NotWholeError(f"{folder} holds {RESULTS} but no {MANIFEST} (the list of the files its last whole write "
                        f"made, written last), so nothing says its files belong together: it is not whole. Make it "
                        f"whole with {hint} (it scores the records again), then try again")


@contextmanager
def read_run_folder(folder: Path, purpose: str, *, results_must_match: bool = True) -> Iterator[RunFolder]:
    """The finished run folder `folder`, read for `purpose` (one of folder_lock.READERS) while holding its lock.

    FolderBusy when a writer holds it or was killed half-way; UnfinishedRunError when its last run stopped early
    (naming the command that finishes it); MixedRunFolderError when its records mix models or settings, or (with
    `results_must_match`) its results.json scored other samples than it holds; MixedOutputError (with
    `results_must_match`) when results.json and its charts are not those of one write (harness/atomic.py);
    StaleResultsError (with `results_must_match`) when results.json was not computed from exactly the records it
    holds (check_derived). The caller refuses a folder that lacks what it needs (records, results.json) with its own
    message; a folder written by `--from-outputs SRC --output-dir DIR` holds no records, and its reader checks it
    against SRC's."""
    if purpose not in PURPOSES:
        raise ValueError(f"read_run_folder: purpose {purpose!r} is not one of {PURPOSES}")
    folder = Path(folder)
    with folder_lock.reading(folder, purpose, *MARKERS):
        check_finished(folder)
        results = _read_results(folder, results_must_match)
        if results_must_match:  # a re-score writes results.json and its charts anew: it reads only the samples
            check_whole(folder, results)
            check_files(folder, f"Write them anew by running the command that made the folder again (it resumes), "
                                f"or {rescore_hint(folder)}")
        contents = store.read_store(folder)
        steps = store.read_store(folder, store.STEPS).records
        check_one_setting(folder, contents.records, results if results_must_match else None)
        if results_must_match and results is not None and not _samples_elsewhere(contents.records, results):
            check_derived(folder, results, contents.records, steps)
        yield RunFolder(folder, contents.records, results, steps, contents.torn, contents.dropped)


def _samples_elsewhere(records: dict[str, dict[str, Any]], results: dict[str, Any]) -> bool:
    """Whether results.json scored the records of another folder (`--from-outputs SRC --output-dir DIR`)."""
    return not records and bool((results.get("run") or {}).get("from_outputs"))


def reads_run_folder(purpose: str, argument: str) -> Callable:
    """Decorator: the function runs inside `read_run_folder` of the folder passed as its argument `argument`."""
    return folder_lock.inside(argument, lambda folder: read_run_folder(Path(folder), purpose))


@contextmanager
def holding_run_folders(folders: Iterable[Path], purpose: str) -> Iterator[None]:
    """The locks of every run folder of `folders` (as `read_run_folder` takes them), held until the block ends, so
    that everything read from them meanwhile (each read through `read_run_folder`, which reuses the lock) comes from
    one state of each folder."""
    with ExitStack() as stack:
        for folder in folders:
            stack.enter_context(folder_lock.reading(Path(folder), purpose, *MARKERS))
        yield


def holds_run_folders(purpose: str, argument: str) -> Callable:
    """Decorator: the function runs inside `holding_run_folders` of its argument `argument` (run folders, or a
    mapping of names to run folders)."""
    def folders(value: Any) -> Any:
        return holding_run_folders(value.values() if isinstance(value, Mapping) else value, purpose)
    return folder_lock.inside(argument, folders)
