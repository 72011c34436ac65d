"""Run native decoding in a child process watched for progress, so a decoder that hangs or crashes
cannot take the caller down, while a slow decode on a busy machine still finishes.

A native decoder can spin forever inside C++ while holding the GIL (decord's get_batch did: it ignores
signals and SIGTERM), and can abort the process on malformed input. So decoding runs in one long-lived helper
process per parent process: a call sends `(target, args)` and the target reports progress as it
decodes (frames or packets, see helper.report_progress). The watchdog kills the helper when no
progress arrives for `timeout` seconds (a hang), or when a generous total bound scaled to the work
asked and the file's size runs out (a decoder stuck in a loop that still reports); either way it
raises MediaTimeoutError and the next call starts a fresh helper. A wall-clock deadline alone
cannot tell a 3-minute 720p clip on a loaded machine from a hang.
The helper is started with `python -m` (not multiprocessing), so callers need no `__main__` guard,
and it is reused across calls; decoded arrays come back through shared memory (shared.py).
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path

from . import shared
from .errors import CorruptMediaError, MediaTimeoutError


STARTUP_TIMEOUT = 60.0  # seconds for a new helper to import PyAV and say it is ready
DECODERS = "hallubench.loaders.decode"  # what the helper imports before it says it is ready (named, not imported:
# the decoders import the helper's progress reporting)


class _Helper:
    def __init__(self) -> None:
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hallubench.loaders.helper", str(request_read), str(reply_write), DECODERS],
            pass_fds=(request_read, reply_write),
            env={**os.environ, "PYTHONPATH": os.pathsep.join(entry for entry in sys.path if entry)},
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        shared.remove_orphans()
        os.close(request_read)
        os.close(reply_write)
        self.requests = Connection(request_write, readable=False)
        self.replies = Connection(reply_read, writable=False)
        if not (self.replies.poll(STARTUP_TIMEOUT) and self._said_ready()):
            self.close()
            raise RuntimeError(f"the media decoding helper did not start; run `{sys.executable} -m "
                               f"hallubench.loaders.helper {DECODERS}` to see why (is PyAV installed?)")

    def _said_ready(self) -> bool:
        try:
            return self.replies.recv() == "ready"
        except (EOFError, OSError):
            return False

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        self.requests.close()
        self.replies.close()
        shared.forget_arena()


_lock = threading.Lock()
_helper: _Helper | None = None


def _forget_parents_helper() -> None:
    """In a forked child (e.g. a DataLoader worker): start afresh; the parent's helper and lock stay the parent's."""
    global _lock, _helper
    _lock, _helper = threading.Lock(), None


os.register_at_fork(after_in_child=_forget_parents_helper)


def _current_helper() -> _Helper:
    global _helper
    if _helper is not None and _helper.process.poll() is not None:
        _discard_helper()
    if _helper is None:
        _helper = _Helper()
    return _helper


def _discard_helper() -> None:
    global _helper
    if _helper is not None:
        _helper.close()
        _helper = None


def bounds(path: Path, timeout: float, steps: int) -> dict[str, float]:
    """`first` and `total` for run_guarded on `path` with `steps` progress reports expected: opening a
    file reads all of it before the first report (allow 5 MB/s on top of `timeout`), and the whole call
    gets `timeout` for each of 6 fixed steps, every 4 requested ones and every 4 MB (deliberately
    generous: it only has to end a decoder that loops while reporting)."""
    megabytes = path.stat().st_size / 1e6
    return {"first": timeout + megabytes / 5, "total": timeout * (6 + steps / 4 + megabytes / 4)}


def run_guarded(target: str, *args, path: str | Path, timeout: float, first: float | None = None,
                total: float | None = None):
    """Call `target` ("module:function") with `args` in the helper process; return its result.

    The helper is killed and MediaTimeoutError raised when `timeout` seconds pass without progress
    (`first` seconds before the first report, default `timeout`) or `total` seconds in all (default:
    no bound). MediaError raised by the target is re-raised here, CorruptMediaError if the helper dies.
    """
    prefix = shared.request_prefix()
    try:
        with _lock:
            helper = _current_helper()
            try:
                helper.requests.send((target, args, prefix))
                kind, value = _wait(helper, path, timeout, first or timeout, total)
            except BaseException:  # timeout, crash, Ctrl-C: the helper may still be working on this request
                _discard_helper()
                raise
            if kind == "error":
                raise value
            return _attach(value)  # before the next request reuses the helper's arena
    finally:
        shared.remove(prefix)  # whatever the helper made and nobody attached


def _wait(helper: _Helper, path: str | Path, timeout: float, first: float, total: float | None):
    started = last = time.monotonic()
    allowed, done = first, 0
    while True:
        stall_at = last + allowed
        wait_until = stall_at if total is None else min(stall_at, started + total)
        if not helper.replies.poll(max(0.0, wait_until - time.monotonic())):
            if wait_until < stall_at:
                raise MediaTimeoutError(path, f"decoding was still progressing ({done} steps) but did not finish "
                                              f"within {total:.0f} s, the bound for this file's size and the work "
                                              "asked; re-encode it with ffmpeg, or raise `timeout` (the bound grows "
                                              "with it)")
            raise MediaTimeoutError(path, f"decoding made no progress for {allowed:g} s (after {done} steps) and "
                                          "was stopped; the file probably makes the decoder hang: re-encode it with "
                                          "ffmpeg or skip it (or raise `timeout` on a very slow machine)")
        try:
            message = helper.replies.recv()
        except (EOFError, OSError):
            raise CorruptMediaError(path, "the decoder crashed on this file; re-encode it with ffmpeg or skip it") from None
        if message[0] != "progress":
            return message
        last, allowed, done = time.monotonic(), timeout, message[1]


def _attach(value):
    if isinstance(value, dict):
        return {key: _attach(item) for key, item in value.items()}
    return shared.attach(value) if isinstance(value, shared.SharedArray) else value
