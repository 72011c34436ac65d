"""VDGD's KL-guided decoding (Ghosh et al. 2024, "Visual Description Grounding Reduces Hallucinations and Boosts
Reasoning in LVLMs", arXiv:2405.15683, §6) as a transformers LogitsProcessor.

The rule, from the authors' code (github.com/Sreyan88/VDGD @ f937244,
`LLaVA-Align/experiments/eval/sampling/vdgd.py`: `top_p_and_temp_filtering` and `vdgd`, `kl_reduction="min"`):
at each step the candidates are the nucleus of the model's next-token distribution at temperature 0.5 and
top-p 0.5 (the most likely token always among them); each candidate k gets the score -min_j KL(onehot(k) || p_j),
p_j being the model's next-token distribution at position j of the image description it generated before (their
`generate_desc_logits.py` keeps those logits); every other token gets -inf. KL(onehot(k) || p_j) = -log p_j(k), so
a candidate scores max_j log p_j(k): the token the description's positions found most likely is preferred.

Differences, each said: the authors draw the token from softmax of the scores (`torch.multinomial`); greedy decoding
here (temperature 0, as the task's answer step) takes the highest score, i.e. the candidate of least KL, and sampled
decoding draws from the same softmax. The authors' `kl_div(..., reduction="batchmean")` on a 1-D distribution
divides every KL by the vocabulary size, which leaves the greedy choice as it is but flattens their sampling towards
uniform over the candidates; here KLs are in nats, undivided. The description's distributions are computed again
by one forward pass over the description prompt followed by the description's tokens (teacher forcing, the same
distributions as at its generation up to the text's re-tokenization) instead of being stored. An empty description
guides nothing: the scores pass through unchanged (plain decoding).
"""
from __future__ import annotations

import torch
from transformers import LogitsProcessor, TemperatureLogitsWarper, TopPLogitsWarper

# The authors' `top_p_and_temp_filtering` defaults, with which `vdgd` calls it.
CANDIDATE_TOP_P = 0.5
CANDIDATE_TEMPERATURE = 0.5


def candidates(scores: torch.Tensor, top_p: float = CANDIDATE_TOP_P,
               temperature: float = CANDIDATE_TEMPERATURE) -> torch.Tensor:
    """Boolean mask (batch, vocab) of the tokens in the nucleus of softmax(scores / temperature)."""
    ids = torch.zeros((scores.shape[0], 0), dtype=torch.long, device=scores.device)
    warped = TopPLogitsWarper(top_p)(ids, TemperatureLogitsWarper(temperature)(ids, scores.float()))
    return warped != -float("inf")


class KLGuidedLogitsProcessor(LogitsProcessor):
    """Scores each candidate token by -min_j KL(onehot || p_j) over its row's description distributions
    (`descriptions[row]`: log-probabilities, one row per description token); non-candidates get -inf."""

    def __init__(self, descriptions: list[torch.Tensor]):
        self.descriptions = descriptions

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if len(self.descriptions) != scores.shape[0]:
            raise ValueError(f"KL-guided decoding: {len(self.descriptions)} descriptions for {scores.shape[0]} rows")
        guided = torch.full_like(scores, -float("inf"))
        mask = candidates(scores)
        for row, description in enumerate(self.descriptions):
            if description.shape[0] == 0:
                guided[row] = scores[row]
                continue
            ids = mask[row].nonzero().squeeze(-1)
            # -min_j KL(onehot(k) || p_j) = max_j log p_j(k)
            guided[row, ids] = description[:, ids].max(dim=0).values.to(scores.dtype)
        return guided
