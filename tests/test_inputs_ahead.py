"""Processor inputs made ahead (models/inputs_ahead.py, HFChatModel.prepare_ahead): taken only by the call they
were made for, a processor error raised where the call would have raised it, the waiting entries bounded, and a
model given its inputs ahead answers exactly as one that made them itself, running its processor once a call."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest

from hallubench.models import GenerationSettings, Message, TextPart, VideoPart, get_model
from hallubench.models.inputs_ahead import InputsAhead


class Counting:
    def __init__(self):
        self.calls = []

    def __call__(self, conversations):
        self.calls.append(list(conversations))
        if any(c == "bad" for c in conversations):
            raise ValueError("the processor refused it")
        return {"made_for": list(conversations)}


def test_an_entry_is_taken_only_by_the_same_conversation_objects():
    made, processor = InputsAhead(), Counting()
    first = [["a"], ["b"]]  # conversations: a conversation is a list (of messages)
    made.make(first, processor)
    assert made.take(list(first), processor) == {"made_for": first}  # the same objects in a new list: a hit
    assert len(processor.calls) == 1
    made.make([["c"]], processor)
    assert made.take([["c"]], processor) == {"made_for": [["c"]]}  # an equal conversation, another object: a miss
    assert len(processor.calls) == 3
    assert made.take([first[0]], processor) == {"made_for": [["a"]]}  # part of a batch made ahead: made now
    assert len(processor.calls) == 4


def test_the_last_entry_taken_is_taken_again_and_a_processor_error_is_raised_by_the_taker():
    made, processor = InputsAhead(), Counting()
    batch = [["a"], ["c"]]
    made.make(batch, processor)
    assert made.take(batch, processor) is made.take(batch, processor)  # a batch's second call (its extra samples)
    assert len(processor.calls) == 1
    bad = ["bad"]  # a conversation the processor refuses
    made.make(bad, processor)  # nothing raised on the look-ahead thread
    with pytest.raises(ValueError, match="the processor refused it"):
        made.take(bad, processor)
    assert len(processor.calls) == 2


@pytest.mark.parametrize("capacity", [1, 3])
def test_at_most_capacity_entries_wait(capacity):
    made, processor = InputsAhead(capacity), Counting()
    batches = [[[f"item {i}"]] for i in range(capacity + 2)]
    for batch in batches:
        made.make(batch, processor)
    for batch in batches[:2]:  # the oldest were dropped: made again
        made.take(batch, processor)
    for batch in batches[2:]:
        made.take(batch, processor)
    assert len(processor.calls) == len(batches) + 2


def _conversation(seed: int, question: str):
    frames = np.random.default_rng(seed).integers(0, 256, (2, 28, 28, 3), dtype=np.uint8)
    return [Message("user", [VideoPart(frames, fps=1.0), TextPart(question)])]


@pytest.mark.parametrize("batch_size", [1, 2, 5, 8])  # below, at and above the 5 conversations
def test_a_model_given_its_inputs_ahead_answers_as_one_that_made_them(tiny_checkpoint, batch_size):
    checkpoint = str(tiny_checkpoint("qwen2_vl"))
    ahead, alone = (get_model("hf", model=checkpoint, dtype="float32", batch_size=batch_size) for _ in range(2))
    conversations = [_conversation(i, "Describe it." * (1 + i % 3)) for i in range(5)]
    settings = GenerationSettings(max_new_tokens=4, n=3, temperature=0.7)
    calls = Counting()
    processor = ahead._processor_inputs
    ahead._processor_inputs = lambda convs: calls(convs) and processor(convs)
    ahead.prepare_ahead(conversations)
    made_ahead = len(calls.calls)
    assert made_ahead == -(-len(conversations) // batch_size)  # one processor call per batch generate makes
    seeds = list(range(len(conversations)))
    assert ahead.generate(conversations, settings, seeds) == alone.generate(conversations, settings, seeds)
    assert len(calls.calls) == made_ahead  # generate ran no processor of its own
