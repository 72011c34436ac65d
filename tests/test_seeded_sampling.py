"""Per-row seeded sampling (models/seeded_sampling.py): a conversation's samples do not depend on its batch, and the
draws follow softmax sampling's distribution."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import dataclasses

import numpy as np
import pytest
import torch
from scipy.stats import chisquare

from hallubench.models import GenerationSettings, Message, TextPart, get_model
from hallubench.models.seeded_sampling import GumbelNoise, row_seeds, seeded_sampling
from hallubench.testing.tiny_models import make_tiny_model

BATCH = 3


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = make_tiny_model("qwen2_vl", tmp_path_factory.mktemp("tiny"))
    return get_model("hf", model=str(path), dtype="float32", batch_size=BATCH)


def _conversations(count: int) -> list:
    # prompts of different lengths, so every batch is left-padded
    return [[Message("user", [TextPart("Describe " + "a red ball and " * (i % 4) + f"item {i}.")])] for i in range(count)]


@pytest.mark.parametrize("count", [1, BATCH - 1, BATCH, 2 * BATCH])
def test_samples_of_a_conversation_do_not_depend_on_its_batch(model, count):
    """Batches of 1, n-1, n and 2n conversations (batch_size n = 3): each conversation's samples are those it gets
    alone, and those of a shuffled call."""
    settings = GenerationSettings(max_new_tokens=8, temperature=1.3, top_p=0.95, n=4)
    conversations = _conversations(count)
    seeds = [100 + i for i in range(count)]
    together = model.generate(conversations, settings, seeds=seeds)
    alone = [model.generate([c], dataclasses.replace(settings, seed=s))[0] for c, s in zip(conversations, seeds)]
    assert together == alone
    order = list(reversed(range(count)))
    assert model.generate([conversations[i] for i in order], settings, seeds=[seeds[i] for i in order]) == \
        [together[i] for i in order]
    assert all(len(set(samples)) > 1 for samples in together)  # really sampled: the 4 rows differ


def test_another_seed_gives_other_samples_and_the_same_seed_the_same(model):
    settings = GenerationSettings(max_new_tokens=8, temperature=1.0, n=3)
    conversation = _conversations(1)
    first = model.generate(conversation, dataclasses.replace(settings, seed=1))
    assert model.generate(conversation, dataclasses.replace(settings, seed=1)) == first
    assert model.generate(conversation, dataclasses.replace(settings, seed=2)) != first


def test_row_noise_depends_on_its_own_seed_only():
    scores = torch.zeros(3, 50)
    alone = GumbelNoise(row_seeds([7], 1))(None, scores[:1])
    together = GumbelNoise(row_seeds([5, 7, 9], 1))(None, scores)
    assert torch.equal(together[1], alone[0]) and not torch.equal(together[0], together[1])
    assert len(set(row_seeds([1, 2], 3))) == 6  # every (seed, sample) its own stream


@pytest.mark.parametrize("temperature,top_p", [(1.0, 1.0), (0.7, 1.0), (1.0, 0.8)])
def test_draws_follow_softmax_sampling(temperature, top_p):
    """5,000 rows, one step each, over a fixed 6-token distribution: the argmax counts match softmax(logits / T)
    renormalised over the top-p nucleus (chi-squared, p > 0.001), and tokens outside the nucleus never come."""
    logits = torch.tensor([2.0, 1.0, 0.5, 0.0, -1.0, -3.0])
    rows = 5_000
    processors = seeded_sampling(temperature, top_p, row_seeds(range(rows), 1))
    picked = processors(torch.zeros(rows, 1, dtype=torch.long), logits.repeat(rows, 1)).argmax(dim=-1)
    probs = torch.softmax(logits.double() / temperature, dim=-1).numpy()
    order = np.argsort(-probs)
    keep = np.zeros_like(probs, dtype=bool)
    keep[order[: int(np.searchsorted(np.cumsum(probs[order]), top_p) + 1)]] = True  # transformers' nucleus rule
    expected = np.where(keep, probs, 0.0) / probs[keep].sum()
    counts = np.bincount(picked.numpy(), minlength=len(logits))
    assert counts[~keep].sum() == 0
    assert chisquare(counts[keep], expected[keep] / expected[keep].sum() * rows).pvalue > 1e-3
    if top_p < 1:
        assert (~keep).sum() >= 1  # the nucleus really cut a tail
