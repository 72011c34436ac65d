"""Test doubles for decoders, run by name inside the decoding helper (tests/test_loaders_guard.py):
they progress slowly, stop progressing, or fail after putting output in shared memory. A module of
its own, not the test file, so the helper imports it in milliseconds (the first report must not
wait for pytest's imports)."""
import os
import time

import numpy as np

from hallubench.loaders.errors import CorruptMediaError
from hallubench.loaders.helper import output_array, report_progress


def progressing(steps, pause):
    for step in range(steps):
        time.sleep(pause)
        report_progress(step + 1)
    return steps


def progress_then_hang(steps, pause):
    progressing(steps, pause)
    time.sleep(600)


def fill_shared_then(action, size=3 << 20):
    frames = output_array((size,), np.uint8)
    frames[:] = 7
    if action == "hang":
        time.sleep(600)
    elif action == "raise":
        raise CorruptMediaError("fill.mp4", "stand-in failure")
    elif action == "abort":
        os.abort()
    return {"frames": frames, "small": np.arange(3)}


def double(value):
    return {"big": np.full(2 << 20, value, np.uint8), "tiny": np.full(8, value, np.uint8)}
