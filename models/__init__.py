"""Model adapters behind one chat interface: typed messages in, n texts out per conversation."""
from __future__ import annotations

from typing import Any

from hallubench.registry import MODELS, register_model

from .protocol import (
    AudioPart,
    ChatModel,
    Conversation,
    GenerationError,
    GenerationSettings,
    ImagePart,
    Message,
    Part,
    TextPart,
    VideoPart,
)


@register_model("hf")
def _hf(**model_args: Any) -> ChatModel:
    from .hf import HFChatModel

    return HFChatModel(**model_args)


@register_model("openai")
def _openai(**model_args: Any) -> ChatModel:
    from .openai_compat import OpenAIChatModel

    return OpenAIChatModel(**model_args)


def get_model(name: str, **model_args: Any) -> ChatModel:
    """Build the adapter registered under `name` (`@register_model`: "hf", "openai") with its keyword arguments."""
    if name not in MODELS:
        raise ValueError(f"unknown model adapter {name!r}; valid names: {', '.join(sorted(MODELS))}")
    return MODELS[name](**model_args)


__all__ = ["AudioPart", "ChatModel", "Conversation", "GenerationError", "GenerationSettings", "ImagePart",
           "MODELS", "Message", "Part", "TextPart", "VideoPart", "get_model"]
