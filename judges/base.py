"""The one judge interface: `judge(sentence, evidence) -> score in [0, 1]` (1 = not supported), batched."""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass
from typing import Iterator, Protocol, runtime_checkable

Pair = tuple[str, str]


@dataclass(frozen=True)
class Judgment:
    """One judgment: `score` in [0, 1] (higher = less supported); `undecided` marks an output the judge
    could not parse (scored 0.5, as in the paper); `raw` keeps the judge's text output when it has one."""

    score: float
    undecided: bool = False
    raw: str | None = None


@runtime_checkable
class Judge(Protocol):
    """What the pipeline needs from a judge. `judge_id` names the judge and its model, `prompt_version`
    the prompt/method revision: together they key the judgment cache."""

    judge_id: str
    prompt_version: str

    def judge_batch(self, pairs: list[Pair]) -> list[Judgment]: ...

    def judge_calls(self, pairs: list[Pair]) -> Iterator[list[Judgment]]: ...

    def score_batch(self, pairs: list[Pair]) -> list[float]: ...

    def __call__(self, sentence: str, evidence: str) -> float: ...


class BaseJudge(ABC):
    """Shared plumbing: input checks, float views and counters. Subclasses implement `_judge`.

    `counters["pairs"]` counts pairs answered, `counters["undecided"]` those whose output was unparseable;
    `undecided_outputs` tallies those raw outputs, for the report.
    """

    judge_id: str
    prompt_version: str

    def __init__(self) -> None:
        self.counters: Counter[str] = Counter()
        self.undecided_outputs: Counter[str] = Counter()

    @abstractmethod
    def _judge(self, pairs: list[Pair]) -> list[Judgment]:
        """Judge non-empty, validated pairs, one Judgment per pair, in order."""

    def _judge_calls(self, pairs: list[Pair]) -> Iterator[list[Judgment]]:
        """The judgments of `pairs` in order, one list per call to the judge's model, each as soon as its call
        finishes. A judge that makes several calls for one request yields each, so that the judgment cache keeps
        every finished call (judges/cached_judge.py) and an interrupt loses only the call in flight."""
        yield self._judge(pairs)

    def judge_calls(self, pairs: list[Pair]) -> Iterator[list[Judgment]]:
        """Judge (sentence, evidence) pairs; the Judgments in order, one list per finished model call."""
        pairs = _checked(pairs)
        done = 0
        for judgments in self._judge_calls(pairs) if pairs else ():
            if done + len(judgments) > len(pairs):
                raise RuntimeError(f"{self.judge_id}: more judgments than the {len(pairs)} pairs")
            for i, j in enumerate(judgments):
                if not 0.0 <= j.score <= 1.0:  # also rejects NaN
                    raise ValueError(f"{self.judge_id}: score {j.score!r} for pairs[{done + i}] is outside [0, 1]")
            done += len(judgments)
            self.counters["pairs"] += len(judgments)
            for j in judgments:
                if j.undecided:
                    self.counters["undecided"] += 1
                    self.undecided_outputs[j.raw or ""] += 1
            yield judgments
        if done != len(pairs):
            raise RuntimeError(f"{self.judge_id}: {done} judgments for {len(pairs)} pairs")

    def judge_batch(self, pairs: list[Pair]) -> list[Judgment]:
        """Judge (sentence, evidence) pairs; one Judgment per pair, in order."""
        return [j for judgments in self.judge_calls(pairs) for j in judgments]

    def score_batch(self, pairs: list[Pair]) -> list[float]:
        """Scores in [0, 1] for (sentence, evidence) pairs."""
        return [j.score for j in self.judge_batch(pairs)]

    def __call__(self, sentence: str, evidence: str) -> float:
        return self.score_batch([(sentence, evidence)])[0]


def _checked(pairs: list[Pair]) -> list[Pair]:
    out = []
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            raise TypeError(f"pairs[{i}] must be a (sentence: str, evidence: str) tuple, got {pair!r:.80}")
        out.append(pair)
    return out
