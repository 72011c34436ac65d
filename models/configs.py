"""The `--model-args` each built-in adapter takes, as typed configs: checked (unknown or missing keys) before
any weights load or any request is sent. Fields mirror the adapters' constructor arguments; test-only hooks
(an HTTP transport, a sleep function) are left out."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hallubench.config import PluginConfig


@dataclass(frozen=True)
class HFArgs(PluginConfig):
    """`--model hf`: a transformers checkpoint (`pretrained=` on the command line is `model`)."""

    model: str
    revision: str | None = None
    dtype: str = "auto"
    device: str = "cpu"
    batch_size: int = 4
    processor_kwargs: dict[str, Any] | None = None
    audio_in_video: bool = False
    attn_implementation: str | None = None


@dataclass(frozen=True)
class OpenAIArgs(PluginConfig):
    """`--model openai`: an OpenAI-compatible chat completions server."""

    model: str
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str | None = "OPENAI_API_KEY"
    timeout: float = 120.0
    max_retries: int = 5
    backoff: float = 1.0
    max_backoff: float = 60.0
    concurrency: int = 8
    video_mode: str = "frames"
    extra_body: dict[str, Any] | None = None
    retry_budget: float = 600.0
