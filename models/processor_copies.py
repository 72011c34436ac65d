"""The adapter's processor lent to one call at a time, with a copy made for a call that finds every one lent.

A fast tokenizer is not safe to use from two threads at once: each call sets its padding and truncation on the shared
Rust object. One lock around every processor call would make the look-ahead's two threads wait for each other;
with a copy each (`copy.deepcopy`: its own Rust tokenizer), a batch's video resizing and audio features run beside
another batch's, and beside the model, in the parts that leave the GIL (tests/perf/README.md measures it). Copies
stay for the next call: at most one per thread that calls at once. They are made from a spare copy taken at the start,
which no call uses: copying a processor while another thread calls it could meet its tokenizer mid-call.
"""
from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class ProcessorCopies:
    """`lent()` gives a processor (or tokenizer) no other thread is using: `original` when it is free, else a copy.
    A processor that cannot be copied (some remote-code processors) is lent to one call at a time instead."""

    def __init__(self, original: Any) -> None:
        try:
            self._spare: Any = copy.deepcopy(original)
        except Exception:  # noqa: BLE001  whatever stops the copy, the calls then take turns with the original
            self._spare = None
        self._free = [original]
        self._returned = threading.Condition()

    @contextmanager
    def lent(self) -> Iterator[Any]:
        with self._returned:
            if self._spare is None:
                self._returned.wait_for(lambda: self._free)
            processor = self._free.pop() if self._free else None
        if processor is None:
            processor = copy.deepcopy(self._spare)
        try:
            yield processor
        finally:
            with self._returned:
                self._free.append(processor)
                self._returned.notify()
