"""Model adapters behind one chat interface: typed messages in, n texts out per conversation."""
from __future__ import annotations

from typing import Any

from hallubench.registry import MODELS, register_model

from . import search, vision_tools  # noqa: F401  (they register the tool adapters: UniHD's tools)
from .configs import HFArgs, OpenAIArgs
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


@register_model("hf", config=HFArgs)
def _hf(**model_args: Any) -> ChatModel:
    from .hf import HFChatModel

    return HFChatModel(**model_args)


@register_model("openai", config=OpenAIArgs)
def _openai(**model_args: Any) -> ChatModel:
    from .openai_compat import OpenAIChatModel

    return OpenAIChatModel(**model_args)


def model_config(name: str, model_args: dict[str, Any], what: str | None = None) -> dict[str, Any]:
    """`model_args` checked against the config the adapter `name` registered (ConfigError saying `what` had
    unknown or missing keys, and the allowed ones); as given for an adapter registered without one."""
    if name not in MODELS:
        raise ValueError(f"unknown model adapter {name!r}; valid names: {', '.join(sorted(MODELS))}")
    config = getattr(MODELS[name], "config", None)
    return model_args if config is None else config.from_args(model_args, what=what or f"--model-args for --model {name}").kwargs()


def get_model(name: str, **model_args: Any) -> ChatModel:
    """Build the adapter registered under `name` (`@register_model`: "hf", "openai") with its keyword arguments.

    The Python API: arguments go to the adapter as they are (objects such as an httpx transport included);
    the CLI and judges check user-given `key=value` arguments with `model_config` first."""
    if name not in MODELS:
        raise ValueError(f"unknown model adapter {name!r}; valid names: {', '.join(sorted(MODELS))}")
    return MODELS[name](**model_args)


__all__ = ["AudioPart", "ChatModel", "Conversation", "GenerationError", "GenerationSettings", "ImagePart",
           "HFArgs", "MODELS", "Message", "OpenAIArgs", "Part", "TextPart", "VideoPart", "get_model",
           "model_config"]
