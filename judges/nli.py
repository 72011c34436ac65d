"""NLI judge: contradiction probability of an MNLI sequence classifier, as SelfCheckGPT-NLI computes it
(selfcheckgpt 0.1.7 `SelfCheckNLI.predict`): the (sentence, evidence passage) pair is encoded as
(text, text_pair), and the probability is normalised over the entailment and contradiction classes only,
P(contradiction) / (P(entailment) + P(contradiction)) = softmax over those two logits. (Upstream's
model has the neutral head removed; with a 3-way model, dropping the neutral logit is the same thing.)
Label indices come from `config.label2id`, matched case-insensitively by name.
"""
from __future__ import annotations

import os

import torch

from hallubench.judges.base import BaseJudge, Judgment, Pair


def _label_index(config, name: str, source: str) -> int:
    by_name = {label.lower(): index for label, index in config.label2id.items()}
    if name.lower() not in by_name:
        raise ValueError(
            f"{source}: no {name!r} label in config.label2id {dict(config.label2id)}; "
            "pass the label names this model uses (contradiction=..., entailment=...)"
        )
    return int(by_name[name.lower()])


class NLIJudge(BaseJudge):
    """Score = P(contradiction | sentence, evidence) normalised over entailment + contradiction."""

    prompt_version = "selfcheck-nli-v1"

    def __init__(
        self,
        model,
        tokenizer,
        batch_size: int = 16,
        contradiction: str = "contradiction",
        entailment: str = "entailment",
        name: str | None = None,
    ) -> None:
        super().__init__()
        source = name or model.config.name_or_path or type(model).__name__
        self.contradiction_index = _label_index(model.config, contradiction, source)
        self.entailment_index = _label_index(model.config, entailment, source)
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        # The label choice changes every score, so it is part of the cache identity.
        self.judge_id = f"nli:{source}:contradiction={self.contradiction_index},entailment={self.entailment_index}"

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike, device: str = "cpu", **kwargs) -> "NLIJudge":
        """Load an MNLI checkpoint (Hub id or folder) with AutoModelForSequenceClassification."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from hallubench.models.hf_loading import refusing_pickled_code

        tokenizer = AutoTokenizer.from_pretrained(name_or_path)
        with refusing_pickled_code(name_or_path):
            model = AutoModelForSequenceClassification.from_pretrained(name_or_path).to(device)
        kwargs.setdefault("name", str(name_or_path))
        return cls(model, tokenizer, **kwargs)

    @torch.no_grad()
    def _judge(self, pairs: list[Pair]) -> list[Judgment]:
        two = [self.entailment_index, self.contradiction_index]
        scores: list[float] = []
        for start in range(0, len(pairs), self.batch_size):
            chunk = pairs[start : start + self.batch_size]
            inputs = self.tokenizer(
                [s for s, _ in chunk], [e for _, e in chunk], padding=True, truncation=True, return_tensors="pt"
            ).to(self.model.device)
            logits = self.model(**inputs).logits
            scores.extend(torch.softmax(logits[:, two].float(), dim=-1)[:, 1].tolist())
        return [Judgment(score) for score in scores]


def from_config(config) -> NLIJudge:
    """`--judge nli`'s factory (registered lazily in judges/configs.py: this module imports torch)."""
    args = config.kwargs()
    return NLIJudge.from_pretrained(args.pop("pretrained"), **args)
