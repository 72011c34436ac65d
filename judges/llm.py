"""LLM judges of CrossCheckGPT, on any hallubench ChatModel (`hf` adapter, or an OpenAI-compatible
server through the `openai` adapter). Greedy decoding; each prompt is one user turn, so the adapter
applies the model's chat template (upstream tokenized the bare prompt string instead).

Prompts, verbatim from the authors' code:
- explicit: SelfCheckGPT's `SelfCheckLLMPrompt.prompt_template` (selfcheckgpt 0.1.7,
  selfcheckgpt/modeling_selfcheck.py), which CrossCheckGPT's `CrossCheckLLMPrompt` reuses
  (github.com/BriansIDP/crosscheckgpt, crosscheckgpt/modeling_crosscheck.py). The evidence passage's
  newlines become spaces, as there; at most 5 new tokens; "yes" -> 0, "no" -> 1, else 0.5 (undecided,
  counted in `counters["undecided"]` and `undecided_outputs`).
- explicit, logprob mode (`LogprobLLMJudge`, its own judge id): the same prompt read from one forward
  pass: score = P(no) / (P(yes) + P(no)) of the answer's first token, no decoding. Where yes and no
  together get under half the probability the model meant to say something else: undecided, 0.5.
- implicit's verdict (`parse_implicit`, for judges/implicit.py, whose prompts are the paper's Table 9 below): the
  question asks whether the sentence HAS errors (contains inaccurate information), so there "yes" -> 1 and
  "no" -> 0 (else 0.5, undecided), as upstream's `CrossCheckQuestionsLLMPrompt`.
"""
from __future__ import annotations

import re
from typing import Iterator

from hallubench.judges.base import BaseJudge, Judgment, Pair
from hallubench.judges.cached_judge import passage_calls
from hallubench.judges.configs import LLMJudgeArgs
from hallubench.models.protocol import (ChatModel, Conversation, GenerationSettings, Message, NextTokenScorer,
                                        TextPart)
from hallubench.registry import register_judge

EXPLICIT_PROMPT = (
    "Context: {context}\n\nSentence: {sentence}\n\n"
    "Is the sentence supported by the context above? Answer Yes or No.\n\nAnswer: "
)
TABLE9_ANALYSIS_PROMPT = (  # CrossCheckGPT Table 9, "CrossCheck-implicit factual errors", <name/image/video>
    "You are given the following sentence about {subject} that might be inaccurate:\n{sentence}\n"
    " List possible inaccurate information in this sentence."
)
TABLE9_VERDICT_PROMPT = (  # CrossCheckGPT Table 9, "LLM Judgment for CrossCheck-implicit"
    "You are given the following sentence about {subject}:\n{sentence}\n"
    "The following is an analysis of possible inaccuracies in this sentence:\n{analysis}\n"
    "Based on the analysis, determine if the sentence contains any inaccurate information. "
    "Answer Yes or No.\n\nAnswer:"
)
UNDECIDED = 0.5
MIN_ANSWER_MASS = 0.5  # logprob mode: below this P(yes) + P(no), the likeliest answer is neither
_EXPLICIT_SCORES = {"yes": 0.0, "no": 1.0}
_FIRST_WORD = re.compile(r"\W*(\w+)")
_YES_NO = re.compile(r"\b(yes|no)\b")


def parse_explicit(text: str) -> Judgment:
    """Upstream rule (SelfCheckLLMPrompt.text_postprocessing): the answer starts with yes (0.0) or no (1.0),
    else 0.5, undecided. Two departures: the first word must be exactly yes/no (upstream's bare prefix test
    reads "Not sure" or "None" as "no"), and leading punctuation or markdown is skipped ("**No**" is "no";
    upstream finds it undecided)."""
    first = _FIRST_WORD.match(text.lower())
    word = first.group(1) if first else None
    if word in _EXPLICIT_SCORES:
        return Judgment(_EXPLICIT_SCORES[word], raw=text)
    return Judgment(UNDECIDED, undecided=True, raw=text)


def parse_implicit(text: str) -> Judgment:
    """Upstream rule (CrossCheckQuestionsLLMPrompt.text_postprocessing): "yes" (has errors, 1.0) xor "no"
    (0.0) in the verdict, else 0.5, undecided. Whole words only: upstream's substring test finds "no" in
    "not", "know" or "another"."""
    words = set(_YES_NO.findall(text.lower()))
    if words == {"yes"}:
        return Judgment(1.0, raw=text)
    if words == {"no"}:
        return Judgment(0.0, raw=text)
    return Judgment(UNDECIDED, undecided=True, raw=text)


class _ChatJudge(BaseJudge):
    """Shared: greedy generation of one answer per prompt, `batch_size` prompts per model call."""

    kind: str

    def __init__(self, model: ChatModel, batch_size: int = 16) -> None:
        super().__init__()
        if not isinstance(model, ChatModel):
            raise TypeError(f"model must implement hallubench ChatModel (name, fingerprint, accepts, generate); got {type(model).__name__}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model = model
        self.batch_size = batch_size
        self.judge_id = f"llm-{self.kind}:{model.name}:{model.fingerprint}"

    def _judge(self, pairs: list[Pair]) -> list[Judgment]:
        return [j for judgments in self._judge_calls(pairs) for j in judgments]


def greedy_calls(model: ChatModel, conversations: list[Conversation], max_new_tokens: int,
                 batch_size: int) -> Iterator[list[str]]:
    """One greedy answer per conversation, `batch_size` conversations per model call, yielded call by call."""
    settings = GenerationSettings(max_new_tokens=max_new_tokens, temperature=0.0)
    for start in range(0, len(conversations), batch_size):
        chunk = conversations[start : start + batch_size]
        outputs = model.generate(chunk, settings)
        if len(outputs) != len(chunk) or any(len(out) < 1 for out in outputs):
            raise RuntimeError(f"{model.name}: expected one output for each of {len(chunk)} prompts, got {outputs!r:.200}")
        yield [out[0] for out in outputs]


def generate_greedy(model: ChatModel, conversations: list[Conversation], max_new_tokens: int,
                    batch_size: int) -> list[str]:
    """One greedy answer per conversation, `batch_size` conversations per model call."""
    return [text for texts in greedy_calls(model, conversations, max_new_tokens, batch_size) for text in texts]


def _conversations(prompts: list[str]) -> list[Conversation]:
    return [[Message("user", [TextPart(p)])] for p in prompts]


def explicit_prompts(pairs: list[Pair]) -> list[str]:
    return [EXPLICIT_PROMPT.format(context=e.replace("\n", " "), sentence=s) for s, e in pairs]


class ExplicitLLMJudge(_ChatJudge):
    """CrossCheck-explicit: is `sentence` supported by the evidence passage? Pairs are (sentence, passage)."""

    kind = "explicit"
    prompt_version = "crosscheck-explicit-v1"

    def _judge_calls(self, pairs: list[Pair]) -> Iterator[list[Judgment]]:
        for texts in greedy_calls(self.model, _conversations(explicit_prompts(pairs)), 5, self.batch_size):
            yield [parse_explicit(text) for text in texts]


class LogprobLLMJudge(_ChatJudge):
    """CrossCheck-explicit prompt, soft score P(no) / (P(yes) + P(no)) from one forward pass per batch."""

    kind = "explicit-logprob"
    prompt_version = "crosscheck-explicit-logprob-v1"

    def __init__(self, model: ChatModel, batch_size: int = 16) -> None:
        if not isinstance(model, NextTokenScorer):
            raise TypeError(f"{getattr(model, 'name', model)!r} cannot read next-token probabilities "
                            "(no next_token_probs); use the default generate-and-parse mode")
        super().__init__(model, batch_size)

    def _judge_calls(self, pairs: list[Pair]) -> Iterator[list[Judgment]]:
        # A call holds whole passages, up to `batch_size` prompts (one passage may hold more): the model runs the
        # prefix a passage's prompts share once for all of them (models/prefix_scoring.py), however many they are.
        # Each call's judgments are kept as it finishes.
        conversations = _conversations(explicit_prompts(pairs))
        for call in passage_calls(list(range(len(pairs))), [evidence for _, evidence in pairs], self.batch_size):
            judgments = []
            for yes, no in self.model.next_token_probs([conversations[i] for i in call], ["yes", "no"]):  # type: ignore[attr-defined]
                raw = f"P(yes)={yes:.4g} P(no)={no:.4g}"
                if yes + no < MIN_ANSWER_MASS:
                    judgments.append(Judgment(UNDECIDED, undecided=True, raw=raw))
                else:
                    judgments.append(Judgment(no / (yes + no), raw=raw))
            yield judgments


@register_judge("llm", config=LLMJudgeArgs)
def from_config(config: LLMJudgeArgs) -> _ChatJudge:
    """`--judge llm`: the explicit prompt, generated and parsed or (mode=logprob) read from one forward pass."""
    from hallubench.models import get_model

    judge_class = LogprobLLMJudge if config.mode == "logprob" else ExplicitLLMJudge
    return judge_class(get_model(config.adapter, **config.model_args), batch_size=config.batch_size)
