"""Typed chat messages in, text out: the one interface every model adapter implements."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Literal, Protocol, Union, runtime_checkable

import numpy as np
from PIL import Image

from hallubench.config import AtLeastOne, PositiveFraction, check_numbers
from hallubench.errors import GenerationError, ModelUnusable  # noqa: F401  (importable from here, as before)


@dataclass(frozen=True)
class TextPart:
    text: str


@dataclass(frozen=True)
class ImagePart:
    image: Image.Image


@dataclass(frozen=True)
class VideoPart:
    """Frames already sampled by the caller (THWC uint8) and the rate they were sampled at."""

    frames: np.ndarray
    fps: float

    def __post_init__(self) -> None:
        if not (isinstance(self.frames, np.ndarray) and self.frames.ndim == 4 and self.frames.shape[-1] == 3
                and self.frames.dtype == np.uint8 and len(self.frames) > 0):
            shape = getattr(self.frames, "shape", None)
            dtype = getattr(self.frames, "dtype", type(self.frames).__name__)
            raise ValueError(f"VideoPart.frames must be a non-empty uint8 array (T, H, W, 3); got {shape} {dtype}")
        if not self.fps > 0:
            raise ValueError(f"VideoPart.fps must be > 0; got {self.fps}")


@dataclass(frozen=True)
class AudioPart:
    """Mono waveform (1-D float32) at sample rate `sr`."""

    samples: np.ndarray
    sr: int

    def __post_init__(self) -> None:
        if not (isinstance(self.samples, np.ndarray) and self.samples.ndim == 1 and len(self.samples) > 0):
            shape = getattr(self.samples, "shape", None)
            raise ValueError(f"AudioPart.samples must be a non-empty 1-D mono array; got shape {shape}")
        if self.samples.dtype != np.float32:
            object.__setattr__(self, "samples", self.samples.astype(np.float32))
        if not self.sr > 0:
            raise ValueError(f"AudioPart.sr must be > 0; got {self.sr}")


Part = Union[TextPart, ImagePart, VideoPart, AudioPart]
Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: list[Part] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.role not in ("system", "user", "assistant"):
            raise ValueError(f"Message.role must be system, user or assistant; got {self.role!r}")
        for part in self.content:
            if not isinstance(part, (TextPart, ImagePart, VideoPart, AudioPart)):
                raise TypeError(f"Message content must hold TextPart/ImagePart/VideoPart/AudioPart; got {type(part)}")


Conversation = list[Message]
DTYPES = ("auto", "bfloat16", "float16", "float32")  # weight dtypes of adapters that run on this machine


@dataclass(frozen=True)
class GenerationSettings:
    """Decoding options shared by all adapters; sampling happens iff temperature > 0. `temperature=None` leaves
    decoding to the model's own defaults (hf: the checkpoint's generation_config, sampling or not; an
    OpenAI-compatible server: no temperature or top_p sent), for papers that "retain the default" of each model."""

    max_new_tokens: AtLeastOne[int] = 256
    temperature: float | None = 0.0
    top_p: PositiveFraction[float] = 1.0
    n: AtLeastOne[int] = 1
    seed: int | None = None

    def __post_init__(self) -> None:  # each number finite and in its field's range (hallubench/config.py)
        check_numbers(GenerationSettings, {f.name: getattr(self, f.name) for f in fields(self)})

    @property
    def do_sample(self) -> bool:
        """True where decoding may draw random numbers (the model's defaults may sample)."""
        return self.temperature is None or self.temperature > 0

    @property
    def model_default(self) -> bool:
        return self.temperature is None


@runtime_checkable
class ChatModel(Protocol):
    name: str
    fingerprint: str
    accepts: frozenset[str]  # the media part kinds it takes: "image", "video", "audio"

    def generate(self, conversations: list[Conversation], settings: GenerationSettings,
                 seeds: list[int] | None = None) -> list[list[str]]:
        """Return `settings.n` outputs for each conversation, in input order.

        `seeds`, when given, holds one seed per conversation that replaces `settings.seed` for it: each
        conversation is sampled from its own seed, so its sampled outputs are those of a call with it alone
        (`settings.seed=seed`), whatever else shares the call.
        """
        ...


@runtime_checkable
class NextTokenScorer(Protocol):
    """An adapter that can read the first reply token's distribution (the LLM judge's logprob mode)."""

    def next_token_probs(self, conversations: list[Conversation], words: list[str]) -> list[list[float]]:
        """Per conversation, the probability that the reply starts with each of `words` (any casing)."""
        ...


@runtime_checkable
class PreparesAhead(Protocol):
    """An adapter whose per-call input work (the processor) can run before `generate` asks for it, on another
    thread, while the model works on the call before (the harness's look-ahead)."""

    def prepare_ahead(self, conversations: list[Conversation]) -> None:
        """Make now what `generate(conversations, ...)` will need; nothing is raised here (a failure is raised by
        the `generate` call that meets it)."""
        ...


@runtime_checkable
class KLGuidedDecoder(Protocol):
    """An adapter that decodes with VDGD's KL-guided rule (models/kl_guided.py): it needs the logits at each step."""

    def generate_kl_guided(self, conversations: list[Conversation], guides: list[tuple[Conversation, str]],
                           settings: GenerationSettings) -> list[list[str]]:
        """`settings.n` outputs per conversation, each decoded under the guidance of its (conversation, text) pair:
        the text the model gave to that conversation (VDGD: the description prompt with the media, and the
        description)."""
        ...


def collect(outcomes: list[list[str] | GenerationError]) -> list[list[str]]:
    """The outputs of a call whose conversations were each tried; else its first error, `partial` set."""
    errors = [outcome for outcome in outcomes if isinstance(outcome, GenerationError)]
    if errors:
        errors[0].partial = [None if isinstance(outcome, GenerationError) else outcome for outcome in outcomes]
        errors[0].outcomes = list(outcomes)
        raise errors[0]
    return outcomes  # type: ignore[return-value]


def check_seeds(conversations: list[Conversation], seeds: list[int] | None) -> None:
    """ValueError unless `seeds` is None or holds one seed per conversation."""
    if seeds is not None and len(seeds) != len(conversations):
        raise ValueError(f"generate: seeds must hold one seed per conversation; got {len(seeds)} seeds for "
                         f"{len(conversations)} conversations")
