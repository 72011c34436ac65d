"""Run native decoding in a child process with a deadline, so a decoder that hangs or crashes
cannot take the caller down.

decord's get_batch can spin forever inside C++ while holding the GIL (it ignores signals and
SIGTERM), and can abort the process on malformed input. So decoding runs in one long-lived helper
process per parent process: a call sends `(target, args)` and waits at most `timeout` seconds; past
that the helper is SIGKILLed, MediaTimeoutError is raised and the next call starts a fresh helper.
The helper is started with `python -m` (not multiprocessing), so callers need no `__main__` guard,
and it is reused across calls, so a normal file pays only the pickling of its result.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

from .errors import CorruptMediaError, MediaTimeoutError


STARTUP_TIMEOUT = 60.0  # seconds for a new helper to import decord and say it is ready


class _Helper:
    def __init__(self) -> None:
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hallubench.loaders.helper", str(request_read), str(reply_write)],
            pass_fds=(request_read, reply_write),
            env={**os.environ, "PYTHONPATH": os.pathsep.join(entry for entry in sys.path if entry)},
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(request_read)
        os.close(reply_write)
        self.requests = Connection(request_write, readable=False)
        self.replies = Connection(reply_read, writable=False)
        if not (self.replies.poll(STARTUP_TIMEOUT) and self._said_ready()):
            self.close()
            raise RuntimeError(f"the media decoding helper did not start; run `{sys.executable} -m "
                               "hallubench.loaders.helper` to see why (is decord installed?)")

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


def run_guarded(target: str, *args, path: str | Path, timeout: float):
    """Call `target` ("module:function") with `args` in the helper process; return its result.

    MediaError raised by the target is re-raised here. Raises MediaTimeoutError after `timeout`
    seconds (the helper is killed) and CorruptMediaError if the helper dies while decoding.
    """
    if timeout <= 0:  # the caller's budget went on probing; do not start what cannot finish
        raise MediaTimeoutError(path, "the time limit ran out before decoding could start; raise `timeout`")
    with _lock:
        helper = _current_helper()
        helper.requests.send((target, args))
        if not helper.replies.poll(timeout):
            _discard_helper()
            raise MediaTimeoutError(path, f"decoding did not finish within {timeout:g} s and was stopped; the file "
                                          "probably makes the decoder hang: re-encode it with ffmpeg or skip it")
        try:
            ok, value = helper.replies.recv()
        except (EOFError, OSError):
            _discard_helper()
            raise CorruptMediaError(path, "the decoder crashed on this file; re-encode it with ffmpeg or skip it") from None
    if ok:
        return value
    raise value
