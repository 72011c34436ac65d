"""The `--model-args` each built-in adapter takes, as typed configs: checked (unknown or missing keys) before
any weights load or any request is sent. Fields mirror the adapters' constructor arguments; test-only hooks
(an HTTP transport, a sleep function) are left out. Each built-in adapter registers here, with its config, as
a lazy target: its module imports torch or httpx, so it is imported only when the adapter is built.

What the harness gives an adapter is read from its config, not its name (`runs_locally`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hallubench.config import (AtLeastOne, Benign, Endpoint, NameOrPath, Opaque, PluginConfig, RunsCode, Seconds,
                               SecretEnv, Timeout)
from hallubench.registry import register_model

# transformers' GenerationConfig cache implementations (generation/configuration_utils.py), listed here so the
# arguments are checked without importing transformers.
AUTO = "auto"  # batch_size=auto: the hf adapter finds the largest greedy batch that fits (HFChatModel._fitting_batch)
AUTO_MAX_BATCH = 64  # where auto starts (lm-eval's default max_batch_size)
AUTO_BATCH_OFF_CUDA = 4  # what auto picks off CUDA, where no out-of-memory error can be probed

CACHE_IMPLEMENTATIONS = ("static", "offloaded_static", "sliding_window", "hybrid", "hybrid_chunked",
                         "offloaded_hybrid", "offloaded_hybrid_chunked", "dynamic", "offloaded", "quantized")


@dataclass(frozen=True)
class HFArgs(PluginConfig):
    """`--model hf`: a transformers checkpoint (`pretrained=` on the command line is `model`).

    `use_audio_in_video` (transformers' name; `audio_in_video` before) and `min_pixels`/`max_pixels` are taken
    by some families only (`hallubench models` says which); `device_map` (accelerate's) wins over `device`.
    `cache_implementation` goes to every `generate` call: "static" makes transformers compile the decoding step
    on a GPU (CUDA graphs; a one-off compile per batch shape and 64-token prompt-length bucket). Left out, it is
    "static" on one CUDA device for models transformers can compile whole (unless the family table says it fails
    there), else transformers' dynamic cache; "dynamic" turns compiled decoding off. `batch_size=auto`: on CUDA the largest greedy batch
    that fits, found on the first batch (from 64, halved on out-of-memory, and again if a later one does not fit);
    elsewhere 4."""

    model: NameOrPath[str]
    revision: Benign[str | None] = None
    dtype: Benign[str] = "auto"
    device: Benign[str] = "cpu"
    device_map: Benign[str | dict[str, Any] | None] = None  # accelerate's: "auto" or module -> device
    batch_size: AtLeastOne[Benign[int | str]] = 4  # or "auto"
    attn_implementation: Benign[str | None] = None  # one of hf_loading.ATTENTION, checked before loading
    trust_remote_code: RunsCode[bool] = False
    processor_kwargs: Opaque[dict[str, Any] | None] = None
    min_pixels: AtLeastOne[int | None] = None
    max_pixels: AtLeastOne[int | None] = None
    use_audio_in_video: bool = False
    cache_implementation: Benign[str | None] = None

    def __post_init__(self) -> None:
        if self.batch_size != AUTO and (isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int)
                                        or self.batch_size < 1):
            raise ValueError(f"batch_size must be a whole number >= 1 or auto; got {self.batch_size!r}")
        for name in ("min_pixels", "max_pixels"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive whole number of pixels; got {value!r}")
        if self.min_pixels and self.max_pixels and self.min_pixels > self.max_pixels:
            raise ValueError(f"min_pixels ({self.min_pixels}) is above max_pixels ({self.max_pixels})")
        if self.cache_implementation is not None and self.cache_implementation not in CACHE_IMPLEMENTATIONS:
            raise ValueError(f"cache_implementation must be one of {', '.join(CACHE_IMPLEMENTATIONS)}; "
                             f"got {self.cache_implementation!r}")
        for name in ("trust_remote_code", "use_audio_in_video"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false; got {getattr(self, name)!r}")


register_model("hf", config=HFArgs, target="hallubench.models.hf:HFChatModel")


@dataclass(frozen=True)
class OpenAIArgs(PluginConfig):
    """`--model openai`: an OpenAI-compatible chat completions server."""

    model: Benign[str]  # the name the server knows the model by
    base_url: Endpoint[str] = "https://api.openai.com/v1"
    api_key_env: SecretEnv[str | None] = "OPENAI_API_KEY"
    timeout: Timeout[float] = 120.0
    max_retries: int = 5
    backoff: Seconds[float] = 1.0
    max_backoff: Seconds[float] = 60.0
    concurrency: AtLeastOne[int] = 8
    video_mode: Benign[str] = "frames"
    extra_body: Opaque[dict[str, Any] | None] = None
    retry_budget: Seconds[float] = 600.0


register_model("openai", config=OpenAIArgs, target="hallubench.models.openai_compat:OpenAIChatModel")


def runs_locally(config: type[PluginConfig] | None) -> bool:
    """Whether an adapter with this config runs on this machine: its config has a `device` field. The harness then
    gives it the process's device, and --batch-size and --dtype where its config has those fields, and checks its
    `model` as a checkpoint folder or Hub id (unless the config says `model_is_checkpoint = False`); a remote adapter
    (openai) gets none of them."""
    return config is not None and "device" in config.keys()
