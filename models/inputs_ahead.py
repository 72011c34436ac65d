"""Processor inputs made before the model asks for them: the harness's look-ahead thread runs a batch's processor
(chat template, tokenizer, image/video/audio feature extraction: as much CPU time as a small model's generate)
while the model generates the batch before it, and `generate` then finds its inputs ready.

An entry is keyed by the identity of the conversation objects of one processor call (the same list objects the
harness later passes to `generate`), so only the very call it was made for can take it; anything else (another
batching after an out-of-memory halving, a caller's own conversations) misses and runs the processor as before.
A processor error made ahead is kept and raised to the call that takes it, so it is reported where it always was.
Entries live on the CPU until taken (the device copy is made by the taker), and at most CAPACITY wait. Calls from
several threads run at once: the processor given keeps its own calls apart (the hf adapter lends each call its own
copy, models/processor_copies.py).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Sequence

CAPACITY = 8  # processor calls waiting to be taken: the look-ahead's depth (2 batches) of a few calls each


class InputsAhead:
    """Processor outputs by the conversations they were made for: `make` them on one thread, `take` them on another.
    The last entry taken stays until the next is taken, so a batch's second call (its extra samples, its answer
    probabilities) takes the same inputs again."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._lock = threading.Lock()
        self._waiting: OrderedDict[tuple[int, ...], tuple[Sequence[Any], Any]] = OrderedDict()
        self._last: tuple[tuple[int, ...], tuple[Sequence[Any], Any]] | None = None
        self._capacity = capacity

    def make(self, conversations: Sequence[Any], processor: Callable[[list], Any]) -> None:
        """Run `processor(conversations)` now and keep its output (or its exception) for the call that takes it."""
        try:
            made: Any = processor(list(conversations))
        except Exception as err:  # kept for `take`, which raises it where the call would have
            made = err
        with self._lock:
            self._waiting[_key(conversations)] = (tuple(conversations), made)
            while len(self._waiting) > self._capacity:
                self._waiting.popitem(last=False)

    def take(self, conversations: Sequence[Any], processor: Callable[[list], Any]) -> Any:
        """What `make` kept for exactly these conversation objects, else `processor(conversations)` now."""
        key = _key(conversations)
        with self._lock:
            entry = self._waiting.pop(key, None)
            if entry is None and self._last is not None and self._last[0] == key:
                entry = self._last[1]
            if entry is not None:
                self._last = (key, entry)
                made = entry[1]
                if isinstance(made, Exception):
                    raise made
                return made
        return processor(list(conversations))


def _key(conversations: Sequence[Any]) -> tuple[int, ...]:
    # Identities are safe keys: an entry holds its conversation objects, so their ids cannot be reused meanwhile.
    return tuple(map(id, conversations))
