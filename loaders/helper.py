"""The decoding helper process that guard.py starts: runs one `module:function` call per request.

Started as `python -m hallubench.loaders.helper REQUEST_FD REPLY_FD MODULE...` (the modules to import before it
says it is ready: the guard names the decoders, which import this module, so it never imports them by name); run
with the modules alone it only checks that they import, to diagnose a helper that will not start.

Replies on the pipe: ("progress", n) whenever the target calls `report_progress` (the guard's
watchdog waits on these), then ("result", value) or ("error", exception). Large arrays in the
result travel through shared memory (see shared.py): targets that know the size up front decode
straight into `output_array`, others' arrays are copied there once.
"""
from __future__ import annotations

import importlib
import math
import pickle
import sys
import time
from multiprocessing.connection import Connection

import numpy as np

from hallubench.loaders import shared
from hallubench.loaders.errors import MediaError

SHARE_FROM_BYTES = 1 << 20  # smaller arrays cost less through the pipe than a mapping
# Seconds between progress reports after a request's first: the watchdog counts in seconds, and each
# report wakes the parent (a context switch on a busy machine: every frame cost +20% on short clips).
REPORT_EVERY = 0.1

_replies: Connection | None = None  # set only inside the helper process
_prefix: str | None = None  # the current request's shared-memory prefix
_made: list[tuple[np.ndarray, shared.SharedArray]] = []  # shared arrays of the current request
_arena: shared.Arena | None = None
_arenas = 0  # arenas made so far (their names)
_wanted = 0  # bytes of shared arrays the current request asked for
_reported = -math.inf  # when the current request last reported progress


def report_progress(done: int) -> None:
    """Tell the parent's watchdog that decoding moved on (`done` units so far), at most every
    REPORT_EVERY seconds. No-op outside the helper."""
    global _reported
    if _replies is not None and time.monotonic() - _reported >= REPORT_EVERY:
        _reported = time.monotonic()
        _replies.send(("progress", done))


def output_array(shape: tuple[int, ...], dtype) -> np.ndarray:
    """An array for a result, in shared memory when running in the helper (and there is room)."""
    made = _shared_array(shape, dtype)
    return np.empty(shape, dtype) if made is None else made[0]


def _shared_array(shape: tuple[int, ...], dtype) -> tuple[np.ndarray, shared.SharedArray] | None:
    global _wanted
    if _prefix is None:
        return None
    _wanted += shared.nbytes(shape, dtype)
    made = _arena.take(shape, dtype) if _arena is not None else None
    if made is None:
        path = f"{_prefix}-{len(_made)}"
        array = shared.create(path, shape, dtype)
        made = None if array is None else (array, shared.SharedArray(path, tuple(shape), np.dtype(dtype).str))
    if made is not None:
        _made.append(made)
    return made


def _prepare_arena() -> None:
    """Before a request: start the arena over, first growing it to the last request's size (25% spare)."""
    global _arena, _arenas, _wanted
    if _wanted > (len(_arena.buffer) if _arena is not None else 0):
        if _arena is not None:
            _arena.close()
        _arenas += 1
        try:
            _arena = shared.Arena(f"{shared.arena_prefix(_prefix)}-{_arenas}", _wanted * 5 // 4)
        except OSError:  # no room: per-request files (or the pipe) serve
            _arena = None
    if _arena is not None:
        _arena.used = 0
    _wanted = 0


def _share(value):
    """`value` with its arrays replaced by SharedArray references where they live in (or are worth
    moving to) shared memory."""
    if isinstance(value, dict):
        return {key: _share(item) for key, item in value.items()}
    if not isinstance(value, np.ndarray):
        return value
    reference = next((reference for array, reference in _made if array is value), None)
    if reference is None and value.nbytes >= SHARE_FROM_BYTES and (made := _shared_array(value.shape, value.dtype)):
        made[0][...] = value
        reference = made[1]
    return value if reference is None else reference


def _call(target: str, args: tuple):
    module, function = target.split(":")
    try:
        return "result", _share(getattr(importlib.import_module(module), function)(*args))
    except MediaError as error:
        return "error", error
    except Exception as error:  # anything else is a bug, but must still reach the caller
        return "error", RuntimeError(f"{target} failed in the decoding helper: {error!r}")


def _serve(request_fd: int, reply_fd: int, preload: list[str]) -> None:
    global _replies, _prefix, _reported
    requests = Connection(request_fd, writable=False)
    _replies = Connection(reply_fd, readable=False)
    for module in preload:  # the decoders (PyAV) load before the first deadline starts
        importlib.import_module(module)
    _replies.send("ready")
    while True:
        try:
            target, args, _prefix = requests.recv()
        except EOFError:  # the parent exited or closed us
            if _arena is not None:
                _arena.close()
            return
        _prepare_arena()
        _reported = -math.inf
        reply = _call(target, args)
        _made.clear()  # the parent maps or copies them itself
        try:
            _replies.send(reply)
        except pickle.PicklingError as error:
            _replies.send(("error", RuntimeError(f"{target} returned an unpicklable result: {error}")))


def main(argv: list[str]) -> None:
    """`REQUEST_FD REPLY_FD [MODULE ...]`: serve, the MODULEs (named by the guard) imported first; MODULEs alone:
    check that they import."""
    if len(argv) >= 2 and all(arg.isdigit() for arg in argv[:2]):
        _serve(int(argv[0]), int(argv[1]), argv[2:])
    else:
        for module in argv:
            importlib.import_module(module)
        print("the decoding helper's imports work")


if __name__ == "__main__":
    # Serve from the importable module, not this __main__ copy: targets call its report_progress.
    from hallubench.loaders import helper

    helper.main(sys.argv[1:])
