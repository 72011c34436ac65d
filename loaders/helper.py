"""The decoding helper process that guard.py starts: runs one `module:function` call per request.

Started as `python -m hallubench.loaders.helper REQUEST_FD REPLY_FD`; run with no arguments it
only checks that its imports work, to diagnose a helper that will not start.

Replies on the pipe: ("progress", n) whenever the target calls `report_progress` (the guard's
watchdog waits on these), then ("result", value) or ("error", exception). Large arrays in the
result travel through shared memory (see shared.py): targets that know the size up front decode
straight into `output_array`, others' arrays are copied there once.
"""
from __future__ import annotations

import importlib
import pickle
import sys
from multiprocessing.connection import Connection

import numpy as np

from hallubench.loaders import shared
from hallubench.loaders.errors import MediaError

SHARE_FROM_BYTES = 1 << 20  # smaller arrays cost less through the pipe than a mapping

_replies: Connection | None = None  # set only inside the helper process
_prefix: str | None = None  # the current request's shared-memory prefix
_made: list[tuple[np.ndarray, str]] = []  # shared arrays of the current request


def report_progress(done: int) -> None:
    """Tell the parent's watchdog that decoding moved on (`done` units so far). No-op outside the helper."""
    if _replies is not None:
        _replies.send(("progress", done))


def output_array(shape: tuple[int, ...], dtype) -> np.ndarray:
    """An array for a result, in shared memory when running in the helper (and there is room)."""
    made = _shared_array(shape, dtype)
    return np.empty(shape, dtype) if made is None else made[0]


def _shared_array(shape: tuple[int, ...], dtype) -> tuple[np.ndarray, str] | None:
    if _prefix is None:
        return None
    path = f"{_prefix}-{len(_made)}"
    array = shared.create(path, shape, dtype)
    if array is None:
        return None
    _made.append((array, path))
    return array, path


def _share(value):
    """`value` with its arrays replaced by SharedArray references where they live in (or are worth moving to) shared memory."""
    if isinstance(value, dict):
        return {key: _share(item) for key, item in value.items()}
    if not isinstance(value, np.ndarray):
        return value
    path = next((path for array, path in _made if array is value), None)
    if path is None and value.nbytes >= SHARE_FROM_BYTES and (made := _shared_array(value.shape, value.dtype)):
        made[0][...] = value
        path = made[1]
    return value if path is None else shared.SharedArray(path, value.shape, value.dtype.str)


def _call(target: str, args: tuple):
    module, function = target.split(":")
    try:
        return "result", _share(getattr(importlib.import_module(module), function)(*args))
    except MediaError as error:
        return "error", error
    except Exception as error:  # anything else is a bug, but must still reach the caller
        return "error", RuntimeError(f"{target} failed in the decoding helper: {error!r}")


def _serve(request_fd: int, reply_fd: int) -> None:
    global _replies, _prefix
    requests = Connection(request_fd, writable=False)
    _replies = Connection(reply_fd, readable=False)
    importlib.import_module("hallubench.loaders.decode")  # load decord before the first deadline starts
    _replies.send("ready")
    while True:
        try:
            target, args, _prefix = requests.recv()
        except EOFError:  # the parent exited or closed us
            return
        reply = _call(target, args)
        _made.clear()  # the parent maps the files itself; drop this process's mappings
        try:
            _replies.send(reply)
        except pickle.PicklingError as error:
            _replies.send(("error", RuntimeError(f"{target} returned an unpicklable result: {error}")))


def main(argv: list[str]) -> None:
    if len(argv) == 2:
        _serve(int(argv[0]), int(argv[1]))
    else:
        importlib.import_module("hallubench.loaders.decode")
        print("the decoding helper's imports work")


if __name__ == "__main__":
    # Serve from the importable module, not this __main__ copy: targets call its report_progress.
    from hallubench.loaders import helper

    helper.main(sys.argv[1:])
