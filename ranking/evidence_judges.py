"""What a ranking judges a target sentence against, per evidence model, and which cached judge does it.

The pair judges (embedding, nli, llm) read each evidence model's sampled passages, one judge for all of
them; CrossCheck-implicit (ranking/implicit_evidence.py) instead shows each evidence model the item itself, one
judge per evidence model. Boards ask this object, so they need not know which kind they have.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hallubench.judges import CachedJudge
from hallubench.ranking.collect import TaskResponses

T = TypeVar("T")


class EvidenceJudges:
    """Sampled passages as the evidence, `judge` for every evidence model (and for the human references)."""

    reads_text = True  # it reads text passages: the samples, and for RefCheck the rows' human descriptions

    def __init__(self, kind: str, judge: CachedJudge) -> None:
        self.kind, self.judge = kind, judge

    @property
    def cached(self) -> list[CachedJudge]:
        """Every cached judge this ranking uses (for counters, errors and --strict-judging)."""
        return [self.judge]

    @property
    def judge_id(self) -> str:
        return self.judge.judge_id

    @property
    def prompt_version(self) -> str:
        return self.judge.prompt_version

    def judge_for(self, model: str) -> CachedJudge:
        """The judge of the sentences checked against `model`'s evidence."""
        return self.judge

    def passages(self, model: str, responses: TaskResponses, ids: Sequence[str]) -> list[list[str]]:
        """Per item of `ids`, what stands for `model`'s evidence on it: its sampled passages."""
        pos = {item: k for k, item in enumerate(responses.ids)}
        return [responses.samples[model][pos[item]] for item in ids]

    def build_boards(self, build: Callable[[], T]) -> T:
        """`build()`, which judges through this object: the pair judges judge each board's pairs as it asks."""
        return build()

    def set_strict(self, strict: bool) -> None:
        """A pair failing even alone stops the ranking (True) or is recorded as a judge error (False)."""
        for judge in self.cached:
            judge.strict = strict

    @property
    def errors(self) -> list[dict[str, str]]:
        return [error for judge in self.cached for error in judge.errors]

    def summary(self) -> dict[str, Any]:
        """Judge id, prompt version, cache file and the counters of all the cached judges together."""
        counters: Counter[str] = Counter()
        for judge in self.cached:
            counters.update(judge.counters)
        return {"kind": self.kind, "judge_id": self.judge_id, "prompt_version": self.prompt_version,
                "cache": str(self.cached[0].cache.path), "counters": dict(counters),
                "hit_rate": counters["saved"] / counters["pairs"] if counters["pairs"] else 0.0}

    def close(self) -> None:
        """Free what judging loaded (nothing for the pair judges: they live as long as the ranking)."""
