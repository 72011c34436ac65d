"""A judge: `--judge toy_overlap`, a sentence is as unsupported as the share of its words the evidence lacks."""
from __future__ import annotations

from dataclasses import dataclass

from hallubench.config import PluginConfig
from hallubench.judges.base import BaseJudge, Judgment
from hallubench.registry import register_judge


@dataclass(frozen=True)
class OverlapArgs(PluginConfig):
    lowercase: bool = True


class OverlapJudge(BaseJudge):
    prompt_version = "word-overlap-v1"

    def __init__(self, lowercase: bool) -> None:
        super().__init__()
        self.lowercase = lowercase
        self.judge_id = f"toy-overlap:lowercase={lowercase}"

    def _words(self, text: str) -> set[str]:
        return set((text.lower() if self.lowercase else text).replace(".", " ").split())

    def _judge(self, pairs):
        out = []
        for sentence, evidence in pairs:
            words = self._words(sentence)
            out.append(Judgment(len(words - self._words(evidence)) / len(words) if words else 1.0))
        return out


@register_judge("toy_overlap", config=OverlapArgs)
def make(config: OverlapArgs) -> OverlapJudge:
    return OverlapJudge(config.lowercase)
