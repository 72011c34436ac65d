"""The decoding helper process that guard.py starts: runs one `module:function` call per request.

Started as `python -m hallubench.loaders.helper REQUEST_FD REPLY_FD`; run with no arguments it
only checks that its imports work, to diagnose a helper that will not start.
"""
from __future__ import annotations

import importlib
import pickle
import sys
from multiprocessing.connection import Connection

from hallubench.loaders.errors import MediaError


def _serve(request_fd: int, reply_fd: int) -> None:
    requests = Connection(request_fd, writable=False)
    replies = Connection(reply_fd, readable=False)
    importlib.import_module("hallubench.loaders.decode")  # load decord before the first deadline starts
    replies.send("ready")
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
    if len(sys.argv) == 3:
        _serve(int(sys.argv[1]), int(sys.argv[2]))
    else:
        importlib.import_module("hallubench.loaders.decode")
        print("the decoding helper's imports work")
