"""Work the model need not wait for, done beside it: the next batches' media decoded and their processor calls run
while the model generates (a bounded look-ahead), each finished batch's records written while the next batch runs,
and one-off work the run's end needs (the chart library's import, the environment record) started early.

Threads, not processes: media decoding runs in the loaders' helper process and file writes wait on the disk, so
neither holds the GIL long. The processor calls hold it in part (chat template, Python-side feature extraction), but
their video and audio work leaves it, so two of them (each with its own processor copy) and the model run side by
side. Forked processor processes were measured too: at batch size 8 they lost (a video's processor output, some 5 MB
a sample, cost more to copy back than the GIL cost), at batch size 1 they were level (tests/perf/README.md).
"""
from __future__ import annotations

import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

SWITCH_INTERVAL_S = 0.0002  # the GIL switch interval while the model generates (Python's default: 0.005)

T = TypeVar("T")
R = TypeVar("R")


@contextmanager
def quick_gil_handoffs() -> Iterator[None]:
    """While inside, a thread waiting for the GIL is handed it after SWITCH_INTERVAL_S instead of 5 ms. The model's
    decoding loop gives the GIL up at every torch op; with the look-ahead's threads busy beside it, it then waited up to
    a whole interval to get it back (the convoy effect). Measured on the harness benchmark, interleaved: run() 11%
    faster at batch size 1 and 6% at 8 (tests/perf/README.md). The interval is the process's: the first loop to
    enter sets it, the last to leave puts back the one it found (runs on several threads at once)."""
    global _handoffs_held, _interval_found
    with _handoffs_lock:
        if _handoffs_held == 0:
            _interval_found = sys.getswitchinterval()
            sys.setswitchinterval(SWITCH_INTERVAL_S)
        _handoffs_held += 1
    try:
        yield
    finally:
        with _handoffs_lock:
            _handoffs_held -= 1
            if _handoffs_held == 0:
                sys.setswitchinterval(_interval_found)


_handoffs_lock = threading.Lock()
_handoffs_held = 0  # loops inside quick_gil_handoffs
_interval_found = 0.005


def in_background(work: Callable[[], R]) -> Future[R]:
    """`work()` started on a thread of its own; its Future gives the result (or raises its error). Not a daemon: a
    process that ends first waits for it."""
    future: Future[R] = Future()

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as err:  # handed to whoever asks for the result
            future.set_exception(err)

    threading.Thread(target=run, name="hallubench-background").start()
    return future


def prefetched(items: Iterable[T], work: Callable[[T], R], depth: int = 2, workers: int = 1) -> Iterator[R]:
    """`work(item)` for each item, in order, computed by `workers` background threads at most `depth` items ahead
    of the consumer (so at most `depth` batches of decoded media wait in memory). An error in `work` is raised when
    the consumer reaches that item; leaving early cancels what has not started."""
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hallubench-prefetch")
    pending: deque[Future[R]] = deque()
    source = iter(items)
    try:
        for item in source:
            pending.append(pool.submit(work, item))
            if len(pending) > depth:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


class BackgroundWrites:
    """Runs write jobs one after another in a background thread, in submission order; at most one waits behind
    the running one. `submit` and `close` raise the error of an earlier job, so a failed write (a full disk) stops
    the run at the next batch, with every earlier batch on disk."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hallubench-writes")
        self._last: Future[None] | None = None

    def submit(self, job: Callable[[], None]) -> None:
        if self._last is not None:
            self._last.result()
        self._last = self._pool.submit(job)

    def close(self) -> None:
        try:
            if self._last is not None:
                self._last.result()
        finally:
            self._pool.shutdown(wait=True)
