"""CrossCheck-implicit for multimodal inputs (CrossCheckGPT §3.1): an *evidence model* looks at the item's
input (image, video, audio) and analyses one sentence of the target's response; a *judge model* reads
that analysis and answers whether the sentence has errors. One judge per evidence model; pairs are
(sentence, subject key), the key naming the item whose input the evidence model sees.

Prompts: ours. Table 9 of the paper gives the authors' multimodal prompts, but its text is not in their
released code (github.com/BriansIDP/crosscheckgpt, every branch and commit; potsawee/crosscheckgpt-dev)
nor anywhere else we could read offline. The two prompts below follow §3.1's description and keep the
shape of the authors' text-experiment prompts (`questionpromptcot` / `questionpromptcot2`,
BriansIDP/crosscheckgpt crosscheckgpt/prompts.py): the subject "about {person}" becomes the input the
evidence model sees, and the request the target answered is quoted so a short answer ("Yes, it is.")
can be analysed. `PROMPT_VERSION` says they are ours; once Table 9's text is found, replace
`ANALYSIS_PROMPT` / `VERDICT_PROMPT` with it and bump `PROMPT_VERSION` (the cache keys follow).
Decoding as upstream's text judge: greedy, 128 new tokens of analysis, 8 for the verdict; "yes" (has
errors) -> 1, "no" -> 0, anything else 0.5, undecided and counted (`parse_implicit`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from hallubench.errors import ConfigError
from hallubench.judges.base import BaseJudge, Judgment, Pair
from hallubench.judges.llm import generate_greedy, parse_implicit
from hallubench.models.protocol import AudioPart, ChatModel, ImagePart, Message, Part, TextPart, VideoPart

PROMPT_VERSION = "crosscheck-implicit-mm-ours-v1"  # ours, not Table 9's text (module docstring)
ANALYSIS_PROMPT = (
    "You are given the {media} above and the following sentence about it, from a response to the request "
    '"{question}":\n{sentence}\nList any factual errors in the sentence.'
)
VERDICT_PROMPT = (
    "You are given the following sentence about {article} {media}:\n{sentence}\n"
    "The following is an analysis of possible factual errors in this sentence, written by a model that "
    "saw the {media}:\n{analysis}\n"
    "Based on the analysis, determine if the sentence contains any factual errors. "
    "Answer YES if it has errors, and NO if it does not. Your answer should be in the following format:\n"
    '{{"Answer": <YES_or_NO>}}'
)
ANALYSIS_TOKENS, VERDICT_TOKENS = 128, 8
_KINDS = {ImagePart: "image", VideoPart: "video", AudioPart: "audio"}


@dataclass(frozen=True)
class Subject:
    """What the evidence model sees of one item: its media parts and the request the targets answered."""

    parts: tuple[Part, ...]
    question: str

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(_KINDS[type(part)] for part in self.parts if type(part) in _KINDS)

    @property
    def media(self) -> str:
        """The input named in the prompts: "image", "video", "audio" or "video and its audio"."""
        kinds = self.kinds
        if {"video", "audio"} <= kinds:
            return "video and its audio"
        return next((kind for kind in ("image", "video", "audio") if kind in kinds), "input")


class EvidenceModel(Protocol):
    """An evidence model known by name and fingerprint before it is loaded (its run folder says both);
    `load()` gives the ChatModel, loading it on first use."""

    name: str
    fingerprint: str

    def load(self) -> ChatModel: ...


class ImplicitMultimodalJudge(BaseJudge):
    """Pairs are (sentence, subject key); `subjects(key)` gives what the evidence model sees. Step 1: the
    evidence model, shown the media, analyses the sentence; step 2: `judge`, shown the analysis (and the
    media too when `judge_sees_media`), answers YES (errors, 1.0) or NO (0.0)."""

    prompt_version = PROMPT_VERSION

    def __init__(self, evidence: EvidenceModel, judge: ChatModel, subjects: Callable[[str], Subject],
                 batch_size: int = 8, judge_sees_media: bool = False) -> None:
        super().__init__()
        if not isinstance(judge, ChatModel):
            raise TypeError(f"judge must implement hallubench ChatModel; got {type(judge).__name__}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.evidence, self.judge, self.subjects = evidence, judge, subjects
        self.batch_size, self.judge_sees_media = batch_size, judge_sees_media
        seen = "+media" if judge_sees_media else ""
        self.judge_id = (f"llm-implicit-mm:{evidence.name}:{evidence.fingerprint}"
                         f">{judge.name}:{judge.fingerprint}{seen}")

    def _judge(self, pairs: list[Pair]) -> list[Judgment]:
        subjects = [self.subjects(key) for _, key in pairs]
        if self.judge_sees_media:
            refused = sorted(set().union(*(s.kinds for s in subjects)) - self.judge.accepts)
            if refused:
                raise ConfigError(f"judge_sees_media=true: the judge {self.judge.name} takes no {', '.join(refused)} "
                                  "input; use a judge model that does, or judge_sees_media=false")
        model = self.evidence.load()
        asks = [[Message("user", [*s.parts, TextPart(ANALYSIS_PROMPT.format(media=s.media, question=s.question,
                                                                            sentence=sentence))])]
                for (sentence, _), s in zip(pairs, subjects)]
        analyses = generate_greedy(model, asks, ANALYSIS_TOKENS, self.batch_size)
        verdicts = []
        for (sentence, _), s, analysis in zip(pairs, subjects, analyses):
            text = VERDICT_PROMPT.format(article="an" if s.media[0] in "aeiou" else "a", media=s.media,
                                         sentence=sentence, analysis=analysis.strip())
            media = list(s.parts) if self.judge_sees_media else []
            verdicts.append([Message("user", [*media, TextPart(text)])])
        return [parse_implicit(text) for text in generate_greedy(self.judge, verdicts, VERDICT_TOKENS, self.batch_size)]
