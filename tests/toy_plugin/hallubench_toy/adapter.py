"""A model adapter: `--model toy_echo --model-args pretrained=org/any,answer=yes`. Its config has a `device`, so
the harness treats it as a model on this machine (it is given --device)."""
from __future__ import annotations

from dataclasses import dataclass

from hallubench.config import Benign, NameOrPath, PluginConfig
from hallubench.models.protocol import TextPart
from hallubench.registry import register_model


@dataclass(frozen=True)
class ToyEchoArgs(PluginConfig):
    model: NameOrPath[str]  # each text field says what it holds (hallubench/config.py field kinds)
    device: Benign[str] = "cpu"
    answer: Benign[str] = "yes"


@register_model("toy_echo", config=ToyEchoArgs)
class ToyEcho:
    """Answers `answer` to a question; describes the sky in its own words, drawn by each sample's seed."""

    accepts = frozenset()

    def __init__(self, model: str, device: str = "cpu", answer: str = "yes") -> None:
        self.answer, self.device = answer, device
        self.name = f"toy-echo-{answer}"
        self.fingerprint = f"toy-echo-v1:{model}:{answer}"

    def generate(self, conversations, settings, seeds=None):
        out = []
        for conversation, seed in zip(conversations, seeds or [0] * len(conversations)):
            text = " ".join(p.text for m in conversation for p in m.content if isinstance(p, TextPart))
            if "yes or no" in text:
                out.append([f"{self.answer.capitalize()}."] * settings.n)
            else:
                colour = "blue" if self.answer == "yes" else "green"
                out.append([f"The sky is {colour}. Sample {(seed or 0) + i} has clouds." for i in range(settings.n)])
        return out
