"""The hf adapter's processor lent to one call at a time (models/processor_copies.py): no processor object is used by
two threads at once, calls from several threads do run at once, copies stay bounded by the threads that call at
once, and a copy makes exactly the inputs the original makes."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import threading
import time

import numpy as np
import torch

from hallubench.models import Message, TextPart, VideoPart, get_model
from hallubench.models.processor_copies import ProcessorCopies


class Watched:
    """A processor stand-in that records which objects are in use, by whom, at once."""

    in_use: dict[int, int] = {}
    seen: set[int] = set()
    clashes: list[int] = []  # objects found in use by another thread (asserted on the test's thread)
    copies = 0
    most_at_once = 0
    lock = threading.Lock()

    @classmethod
    def forget(cls):
        cls.in_use, cls.seen, cls.clashes, cls.copies, cls.most_at_once = {}, set(), [], 0, 0

    def __deepcopy__(self, memo):
        Watched.copies += 1
        return type(self)()

    def __call__(self):
        me = id(self)
        with Watched.lock:
            if me in Watched.in_use:
                Watched.clashes.append(me)
            Watched.in_use[me] = threading.get_ident()
            Watched.seen.add(me)
            Watched.most_at_once = max(Watched.most_at_once, len(Watched.in_use))
        time.sleep(0.005)
        with Watched.lock:
            del Watched.in_use[me]


def test_no_processor_object_serves_two_threads_at_once_and_calls_overlap():
    Watched.forget()
    original = Watched()
    copies = ProcessorCopies(original)
    threads, start = 3, threading.Barrier(3)

    def calls():
        start.wait()
        for _ in range(20):
            with copies.lent() as processor:
                processor()

    workers = [threading.Thread(target=calls) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not Watched.clashes  # no processor object used by two threads at once
    assert Watched.most_at_once >= 2  # the calls ran side by side
    assert id(original) in Watched.seen and len(Watched.seen) <= threads  # at most one per thread calling at once
    assert id(copies._spare) not in Watched.seen  # the spare is copied, never used


def test_calls_from_one_thread_at_a_time_use_the_original_and_copy_nothing_more():
    Watched.forget()
    original = Watched()
    copies = ProcessorCopies(original)
    for _ in range(5):
        with copies.lent() as processor:
            processor()
    assert Watched.seen == {id(original)} and Watched.copies == 1  # the spare, made once at the start


class Uncopyable(Watched):
    def __deepcopy__(self, memo):
        raise TypeError("cannot pickle 'SwigPyObject' object")


def test_a_processor_that_cannot_be_copied_is_lent_to_one_call_at_a_time():
    Watched.forget()
    original = Uncopyable()
    copies = ProcessorCopies(original)
    start, done = threading.Barrier(3), []

    def calls():
        start.wait()
        for _ in range(10):
            with copies.lent() as processor:
                processor()
        done.append(1)

    workers = [threading.Thread(target=calls) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(done) == 3 and Watched.seen == {id(original)} and Watched.most_at_once == 1 and not Watched.clashes


def _conversation(seed: int, question: str):
    frames = np.random.default_rng(seed).integers(0, 256, (2, 28, 28, 3), dtype=np.uint8)
    return [Message("user", [VideoPart(frames, fps=1.0), TextPart(question)])]


def test_inputs_made_on_several_threads_at_once_equal_those_made_one_by_one(tiny_checkpoint):
    model = get_model("hf", model=str(tiny_checkpoint("qwen2_vl")), dtype="float32", batch_size=2)
    batches = [[_conversation(3 * b + i, "Describe it. " * (1 + i)) for i in range(1 + b % 3)] for b in range(9)]
    alone = [model._processor_inputs(batch) for batch in batches]
    together: dict[int, object] = {}
    start = threading.Barrier(3)

    def make(indices):
        start.wait()
        for index in indices:
            together[index] = model._processor_inputs(batches[index])

    workers = [threading.Thread(target=make, args=(range(k, len(batches), 3),)) for k in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(together) == len(batches)
    for made, expected in zip((together[i] for i in range(len(batches))), alone):
        assert made.keys() == expected.keys()
        assert all(torch.equal(made[key], expected[key]) for key in expected if torch.is_tensor(expected[key]))
    # padded on the left, as set up on the original, whichever copy made them
    assert all(made["attention_mask"][:, -1].all() for made in together.values())
