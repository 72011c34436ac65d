"""Sampling in which an output row's draws depend on that row's seed alone, so the samples of many
conversations can share one decode batch and still be exactly the samples each would get alone.

`generate(do_sample=True)` draws every row's token from the one global torch RNG: a conversation's samples would
depend on what else shares its batch. Here row r (conversation i's j-th sample) owns a torch.Generator seeded
from (seed_i, j). At each step its logits go through transformers' own temperature and top-p warpers, then get
Gumbel noise drawn from its generator, and the token is the argmax: argmax(log p + G) with G i.i.d.
Gumbel(0, 1) is a draw from p (the Gumbel-max trick), so the samples follow softmax sampling's distribution
(tests/test_seeded_sampling.py checks it with a chi-squared test). Every row draws one vocabulary's worth of
noise per step whatever happens to the other rows, so its draws never shift. The processor leaves only the
chosen token possible, so `generate`'s own sampling step (kept on: transformers returns several sequences per
prompt only when sampling) can pick nothing else and its global-RNG draw decides nothing.

One generator per row costs one small kernel per row and step on a GPU (~10 µs), well under a 7B decode step.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from transformers import LogitsProcessor, LogitsProcessorList, TemperatureLogitsWarper, TopPLogitsWarper

__all__ = ["GumbelNoise", "row_seeds", "seeded_sampling"]


def row_seeds(seeds: Sequence[int], copies: int) -> list[int]:
    """One generator seed per output row, conversation-major (the order of `num_return_sequences` rows): row
    (i, j) gets a seed mixed from (seeds[i], j) by numpy's SeedSequence, so nearby seeds give unrelated streams."""
    return [int(np.random.SeedSequence([int(seed) % 2**64, j]).generate_state(1, dtype=np.uint64)[0])
            for seed in seeds for j in range(copies)]


class GumbelNoise(LogitsProcessor):
    """Per row: the argmax of the logits plus Gumbel(0, 1) noise from the row's own generator (a sample), returned as
    scores that allow that token only."""

    def __init__(self, seeds: Sequence[int]) -> None:
        self.seeds = list(seeds)
        self._generators: list[torch.Generator] | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if scores.shape[0] != len(self.seeds):
            raise ValueError(f"{scores.shape[0]} rows to sample but {len(self.seeds)} row seeds")
        if self._generators is None:  # on the first step: the scores' device is known only now
            self._generators = [torch.Generator(device=scores.device).manual_seed(s) for s in self.seeds]
        tiny = torch.finfo(torch.float32).tiny
        uniform = torch.stack([torch.rand(scores.shape[1], generator=g, device=scores.device) for g in self._generators])
        gumbel = -torch.log(-torch.log(uniform.clamp_(min=tiny)))
        chosen = (scores.float() + gumbel).argmax(dim=-1, keepdim=True)
        return torch.full_like(scores, -float("inf")).scatter_(1, chosen, 0.0)


def seeded_sampling(temperature: float, top_p: float, seeds: Sequence[int]) -> LogitsProcessorList:
    """The processors that make `generate`'s sampling per-row seeded sampling at `temperature` and `top_p` (pass
    them with do_sample=True and transformers' own temperature, top-k and top-p switched off)."""
    processors: list[LogitsProcessor] = [TemperatureLogitsWarper(temperature)]
    if top_p < 1.0:
        processors.append(TopPLogitsWarper(top_p))
    processors.append(GumbelNoise(seeds))
    return LogitsProcessorList(processors)
