"""CrossCheck-implicit for multimodal inputs (CrossCheckGPT §3.1): an *evidence model* looks at the item's
input (image, video, audio) and analyses one sentence of the target's response; a *judge model* reads
that analysis and answers whether the sentence has errors. One judge per evidence model; pairs are
(sentence, subject key), the key naming the item whose input the evidence model sees.

Prompts (`prompts=`): "table9", the default, is the paper's Table 9 verbatim ("CrossCheck-implicit factual
errors" to the evidence model, shown the media before the text; "LLM Judgment for CrossCheck-implicit" to the
judge), its <name/image/video> being "the image" or "the video" ("the video" also for a video with its audio;
"the audio" for audio alone, which the table does not name: our wording). "ours-v1" keeps the prompts we used
before Table 9 was at hand: the shape of the authors' text-experiment prompts (`questionpromptcot` /
`questionpromptcot2`, BriansIDP/crosscheckgpt crosscheckgpt/prompts.py) with the request the target answered
quoted. Each has its own `prompt_version`, so cached judgments of one are never served for the other.
Decoding as upstream's text judge: greedy, 128 new tokens of analysis, 8 for the verdict; "yes" (has
errors) -> 1, "no" -> 0, anything else 0.5, undecided and counted (`parse_implicit`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Iterator, Protocol

from hallubench.errors import ConfigError
from hallubench.judges.base import BaseJudge, Judgment, Pair
from hallubench.judges.llm import TABLE9_ANALYSIS_PROMPT, TABLE9_VERDICT_PROMPT, generate_greedy, parse_implicit
from hallubench.models.protocol import AudioPart, ChatModel, ImagePart, Message, Part, TextPart, VideoPart

OURS_ANALYSIS_PROMPT = (
    "You are given the {media} above and the following sentence about it, from a response to the request "
    '"{question}":\n{sentence}\nList any factual errors in the sentence.'
)
OURS_VERDICT_PROMPT = (
    "You are given the following sentence about {article} {media}:\n{sentence}\n"
    "The following is an analysis of possible factual errors in this sentence, written by a model that "
    "saw the {media}:\n{analysis}\n"
    "Based on the analysis, determine if the sentence contains any factual errors. "
    "Answer YES if it has errors, and NO if it does not. Your answer should be in the following format:\n"
    '{{"Answer": <YES_or_NO>}}'
)
# name -> (prompt_version, analysis prompt, verdict prompt); the prompts take {subject} (Table 9's
# <name/image/video>), {media}, {article}, {question}, {sentence} and {analysis}, each using those it names
PROMPTS = {
    "table9": ("crosscheck-implicit-mm-table9-v1", TABLE9_ANALYSIS_PROMPT, TABLE9_VERDICT_PROMPT),
    "ours-v1": ("crosscheck-implicit-mm-ours-v1", OURS_ANALYSIS_PROMPT, OURS_VERDICT_PROMPT),
}
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

    @property
    def subject(self) -> str:
        """Table 9's <name/image/video>: "the image", "the video" (with or without its audio), "the audio"."""
        return "the video" if "video" in self.kinds else f"the {self.media}"


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

    def __init__(self, evidence: EvidenceModel, judge: ChatModel, subjects: Callable[[str], Subject],
                 batch_size: int = 8, judge_sees_media: bool = False, prompts: str = "table9") -> None:
        super().__init__()
        if prompts not in PROMPTS:
            raise ValueError(f"prompts={prompts!r}: choose one of {', '.join(PROMPTS)}")
        self.prompt_version, self.analysis_prompt, self.verdict_prompt = PROMPTS[prompts]
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
        return [j for judgments in self._judge_calls(pairs) for j in judgments]

    def _judge_calls(self, pairs: list[Pair]) -> Iterator[list[Judgment]]:
        """`batch_size` pairs at a time: their analyses, then their verdicts, yielded as each chunk's verdicts come,
        so the judgment cache keeps every finished chunk."""
        subjects = [self.subjects(key) for _, key in pairs]
        if self.judge_sees_media:
            refused = sorted(set().union(*(s.kinds for s in subjects)) - self.judge.accepts)
            if refused:
                raise ConfigError(f"judge_sees_media=true: the judge {self.judge.name} takes no {', '.join(refused)} "
                                  "input; use a judge model that does, or judge_sees_media=false")
        model = self.evidence.load()
        for start in range(0, len(pairs), self.batch_size):
            chunk = list(zip(pairs[start:start + self.batch_size], subjects[start:start + self.batch_size]))
            asks = [[Message("user", [*s.parts, TextPart(self.analysis_prompt.format(
                        subject=s.subject, media=s.media, question=s.question, sentence=sentence))])]
                    for (sentence, _), s in chunk]
            analyses = generate_greedy(model, asks, ANALYSIS_TOKENS, self.batch_size)
            verdicts = []
            for ((sentence, _), s), analysis in zip(chunk, analyses):
                text = self.verdict_prompt.format(subject=s.subject, article="an" if s.media[0] in "aeiou" else "a",
                                                  media=s.media, sentence=sentence, analysis=analysis.strip())
                media = list(s.parts) if self.judge_sees_media else []
                verdicts.append([Message("user", [*media, TextPart(text)])])
            yield [parse_implicit(text) for text in generate_greedy(self.judge, verdicts, VERDICT_TOKENS,
                                                                     self.batch_size)]
