"""One writer per folder (a run folder, a ranking folder): an OS lock held for as long as the writer works.

The main process takes an exclusive `flock` on `<folder>/.hallubench.lock` and writes its pid, host, start
time and command into that file, so a second writer is refused at once with a message naming the holder.
The kernel drops an flock when its holder dies (kill -9, OOM, a lost node), so a lock left by a killed
run is never mistaken for a live one: the next run takes it over and says whose it was (the file still
holds the dead holder's record; a clean release empties it, a writer that fails or is interrupted leaves it).
Whether a run folder's run finished is its own mark (harness/run_state.py).

A command that reads a folder whole (`publish`, `rank --push-to-hub` and `view --push-to-hub` to upload it;
`rank`, `run --from-outputs` and the viewer to read a run folder, through harness/run_state.py, and the viewer a
ranking folder, through ranking/report.py) holds the same lock while it reads (`reading`; a process reading a
folder it already reads reuses its lock): a writer at work refuses it, naming the writer; a writer starting meanwhile is refused, naming the
reader; two readers of one folder take turns. Readers hold it exclusively too, because a
refused writer has to be told who holds the folder, and only an exclusive holder can write its name into the
lock file. A folder whose last writer was killed is half-written, so a reader refuses it until a rerun finishes it.

The other processes of one `accelerate launch` take a shared lock on `<folder>/.hallubench-ranks.lock`
once the main process holds the folder. Before it admits them the main process checks that nobody holds
that shared lock: workers that survived a killed launch (torchrun keeps them running) still append to
their rank files, and a new run must not merge and delete those files under them.

Why fcntl and not `filelock`: the refused writer has to read the holder's record from the locked file, and
the launch's other ranks need a shared mode; filelock offers neither (it also deletes or truncates its file).
"""
from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import socket
import sys
import functools
import inspect
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator
from hallubench.errors import ConfigError, FolderBusy, FolderWriteError, LinkedPathError
from hallubench.redact import redact
from hallubench.writes import link_error

log = logging.getLogger("hallubench")  # notes: the command line shows them on stderr

LOCK_NAME = ".hallubench.lock"
RANKS_NAME = ".hallubench-ranks.lock"
# Purposes that only read the folder: to upload it, or to rank, re-score or show a run folder.
UPLOADS = ("publish", "push-to-hub")
READERS = (*UPLOADS, "rank (reading)", "re-score (reading)", "view", "verify")  # `rank` and `re-score` also write their output
_READING: dict[Path, "FolderLock"] = {}  # the folders this process holds for reading, by resolved path


def _read(fd: int) -> dict[str, Any]:
    data = os.pread(fd, 1 << 16, 0)
    try:
        info = json.loads(data) if data.strip() else {}
    except ValueError:
        return {}
    return info if isinstance(info, dict) else {}


def _open_lock(path: Path) -> int:
    """The lock file `path`, made if missing; never through a link (LinkedPathError: a folder we did not write may
    hold one pointing anywhere, and the lock record is written into it)."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as err:
        if err.errno != errno.ELOOP:
            raise
        raise link_error(path) from None


def _shown(value: Any) -> str:
    """A field of a lock record as text of one short line, else "?": the record is a file in the folder, shown as
    words, and its command line never printed (a command we print is rendered by harness/command.py)."""
    text = str(value)
    return text if text.isprintable() and len(text) <= 80 else "?"


def describe(info: dict[str, Any]) -> str:
    if not info:
        return "a process that has not yet written its name (it is starting)"
    ranks = info.get("rank_pids") if isinstance(info.get("rank_pids"), list) else []
    others = f", launch ranks' pids {_shown(', '.join(map(str, ranks)))}" if len(ranks) > 1 else ""
    return (f"hallubench {_shown(info.get('purpose', '?'))} pid {_shown(info.get('pid'))} on host "
            f"{_shown(info.get('host'))}, started {_shown(info.get('started'))}{others}")


def _refusal(folder: Path, holder: dict[str, Any], purpose: str) -> str:
    """Why `purpose` cannot take `folder` from `holder`, and what to do."""
    who, pid = describe(holder), holder.get("pid", "PID")
    pid = pid if isinstance(pid, int) and not isinstance(pid, bool) else "PID"  # a number, or no command at all
    stop = f"kill {pid}{' on ' + _shown(holder['host']) if holder.get('host') else ''}"
    if holder.get("purpose") in READERS:
        verb = "uploaded" if holder.get("purpose") in UPLOADS else "read"
        return f"{folder} is being {verb} by {who}: wait for it to finish (or stop it: {stop}), then try again"
    if purpose in READERS:
        return (f"{folder} is being written by {who}, so it is unfinished: wait for that one to finish (or stop it: "
                f"{stop}), then try again; {_untouched(purpose)}")
    return (f"{folder} is being written by another {who}. Two writers on one folder corrupt it: wait for that one to "
            f"finish, stop it ({stop}), or choose another folder")


def _untouched(purpose: str) -> str:
    return ("nothing was uploaded and the folder was not touched" if purpose in UPLOADS else
            "nothing was read and the folder was not touched")


def _try_flock(fd: int, mode: int) -> bool:
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class FolderLock:
    """The exclusive lock of one folder, held by this process until `release`."""

    def __init__(self, folder: Path, purpose: str):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._fd = _open_lock(self.path)
            taken = _try_flock(self._fd, fcntl.LOCK_EX)
        except OSError as err:  # read-only or full disk, no permission, a file system without locks
            use = "upload" if purpose in UPLOADS else "read"
            advice = (f"a reader holds the folder's lock while it reads, so that no run changes it meanwhile: copy "
                      f"the folder to a writable local one and {use} that" if purpose in READERS else
                      "choose a writable local folder")
            raise ConfigError(f"cannot create or lock {self.path}: {err.strerror or err}; {advice}") from err
        if not taken:
            holder = _read(self._fd)
            os.close(self._fd)
            raise FolderBusy(_refusal(self.folder, holder, purpose))
        previous = _read(self._fd)
        try:
            self._check_no_stray_ranks(previous)
            if purpose in READERS and previous and previous.get("purpose") not in READERS:
                raise FolderBusy(f"{self.folder} is half-written: its last writer ({describe(previous)}) was stopped "
                                 f"before it finished. Finish it first (run the command that wrote it again: what it finished is "
                                 f"kept), then try again; {_untouched(purpose)}")
        except (FolderBusy, LinkedPathError):
            self._close()  # the dead writer's record stays, for the rerun to report
            raise
        if previous:
            log.warning(f"hallubench: {self.folder}: taking over the lock of a writer that died (or failed) without "
                        f"finishing ({describe(previous)}); what it finished is kept")
        self.info = {"purpose": purpose, "pid": os.getpid(), "host": socket.gethostname(),
                     "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                     "command": redact(" ".join(sys.argv))[:300]}
        self._write()

    def _check_no_stray_ranks(self, previous: dict[str, Any]) -> None:
        fd = _open_lock(self.folder / RANKS_NAME)
        try:
            if not _try_flock(fd, fcntl.LOCK_EX):
                raise FolderBusy(f"{self.folder}: processes of an earlier launch still write to it (their main "
                                 f"process died: {describe(previous)}). Stop them first (kill the torchrun workers, "
                                 "e.g. those pids), then run again; their finished samples are kept")
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _write(self) -> None:
        data = json.dumps(self.info).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)
        os.fsync(self._fd)

    def set_rank_pids(self, pids: list[int]) -> None:
        """Record every process of the launch, so a refused or later writer can name survivors."""
        self.info["rank_pids"] = list(pids)
        self._write()

    def _close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing the last descriptor drops the flock
            self._fd = -1

    def release(self, finished: bool = True) -> None:
        """Drop the lock; `finished` empties the record, which tells the next holder this one finished cleanly."""
        if self._fd >= 0:
            if finished:
                os.ftruncate(self._fd, 0)
            self._close()


class RankLock:
    """A non-main process's shared lock: taken after the main process holds the folder, until the run ends."""

    def __init__(self, folder: Path):
        self._fd = _open_lock(Path(folder) / RANKS_NAME)
        fcntl.flock(self._fd, fcntl.LOCK_SH)

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


@contextmanager
def hold(folder: Path, purpose: str) -> Iterator[FolderLock]:
    """The folder's exclusive lock for one process (FolderBusy naming the holder if taken)."""
    lock = FolderLock(folder, purpose)
    try:
        yield lock
    except (FolderWriteError, KeyboardInterrupt, SystemExit) as err:
        # Cut off while it may be writing: its record stays, so readers refuse the folder until a rerun; but a
        # full disk that struck before anything was replaced (harness/atomic.py) left the old output whole. The
        # other errors (bad input, a failing judge) come before a ranking writes its files.
        lock.release(finished=isinstance(err, FolderWriteError) and not err.folder_changed)
        raise
    finally:
        lock.release()


def inside(argument: str, lock: Callable[[Path], Any]) -> Callable:
    """Decorator: the function runs inside the context `lock(folder)`, the folder being its argument `argument`."""
    def decorate(function: Callable) -> Callable:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def locked(*args: Any, **kwargs: Any) -> Any:
            with lock(signature.bind(*args, **kwargs).arguments[argument]):
                return function(*args, **kwargs)
        return locked
    return decorate


def writes_folder(purpose: str, argument: str = "output_dir") -> Callable:
    """Decorator: the function runs holding the lock of the folder passed as `argument`."""
    return inside(argument, lambda folder: hold(Path(folder), purpose))


@contextmanager
def reading(folder: Path, purpose: str, *markers: str) -> Iterator[FolderLock | None]:
    """The lock of `folder` while `purpose` (one of READERS) reads it whole; FolderBusy naming the holder if a
    writer or another reader holds it, or if its last writer was killed half-way.

    Nothing is made for a folder that hallubench has not written: no folder, and no lock file in a folder that
    holds neither one nor any of `markers` (the files its kind of folder has). No writer can be at work there
    (a writer makes the lock file first), and the caller refuses such a folder with its own message."""
    folder = Path(folder)
    key = folder.resolve()
    if key in _READING:  # this process already reads it (the viewer builds and pushes its site under one lock)
        yield _READING[key]
        return
    if not (folder / LOCK_NAME).is_file() and not any((folder / marker).is_file() for marker in markers):
        yield None
        return
    with hold(folder, purpose) as lock:
        _READING[key] = lock
        try:
            yield lock
        finally:
            del _READING[key]


def reads_folder(purpose: str, argument: str, *markers: str) -> Callable:
    """Decorator: the function reads the folder passed as `argument` (to upload it) inside `reading`."""
    return inside(argument, lambda folder: reading(Path(folder), purpose, *markers))
