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

import importlib
import os
import pickle
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

from .errors import CorruptMediaError, MediaError, MediaTimeoutError


class _Helper:
    def __init__(self) -> None:
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(request_read), str(reply_write)],
            pass_fds=(request_read, reply_write),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(request_read)
        os.close(reply_write)
        self.requests = Connection(request_write, readable=False)
        self.replies = Connection(reply_read, writable=False)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        self.requests.close()
        self.replies.close()


_lock = threading.Lock()
_helper: _Helper | None = None
_owner_pid: int | None = None  # a forked child (e.g. a DataLoader worker) must not share its parent's helper


def _current_helper() -> _Helper:
    global _helper, _owner_pid
    if _helper is None or _owner_pid != os.getpid() or _helper.process.poll() is not None:
        if _helper is not None and _owner_pid == os.getpid():
            _helper.close()
        _helper, _owner_pid = _Helper(), os.getpid()
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


def _serve(request_fd: int, reply_fd: int) -> None:
    requests = Connection(request_fd, writable=False)
    replies = Connection(reply_fd, readable=False)
    while True:
        try:
            target, args = requests.recv()
        except EOFError:  # the parent exited or closed us
            return
        module, function = target.split(":")
        try:
            reply = (True, getattr(importlib.import_module(module), function)(*args))
        except MediaError as error:
            reply = (False, error)
        except Exception as error:  # anything else is a bug, but must still reach the caller
            reply = (False, RuntimeError(f"{target} failed in the decoding helper: {error!r}"))
        try:
            replies.send(reply)
        except pickle.PicklingError as error:
            replies.send((False, RuntimeError(f"{target} returned an unpicklable result: {error}")))


if __name__ == "__main__":
    _serve(int(sys.argv[1]), int(sys.argv[2]))
