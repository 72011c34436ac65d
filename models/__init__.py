"""Model adapters behind one chat interface: typed messages in, n texts out per conversation.

Importing this package imports each of its modules but the heavy ones in HEAVY (torch, httpx): an adapter
registers where it is defined (`@register_model`), or, when its module is heavy, by a lazy "module:object" target
next to its config (models/configs.py), so `hallubench models` and `--help` import no torch."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hallubench.errors import ConfigError, UntrustedRecordError, did_you_mean
from hallubench.registry import MODELS, discover_modules

from .configs import HFArgs, OpenAIArgs, runs_locally
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


def model_config(name: str, model_args: dict[str, Any], what: str | None = None) -> dict[str, Any]:
    """`model_args` checked against the config the adapter `name` registered (ConfigError saying `what` had
    unknown or missing keys, and the allowed ones); as given for an adapter registered without one."""
    if name not in MODELS:
        raise ValueError(MODELS.unknown(name))
    config = getattr(MODELS[name], "config", None)
    if config is None:
        return model_args
    spellings = ("pretrained",) if "model" in config.keys() else ()  # model_named reads it as `model`
    return config.from_args(model_args, what=what or f"--model-args for --model {name}", other_names=spellings).kwargs()


def get_model(name: str, **model_args: Any) -> ChatModel:
    """Build the adapter registered under `name` (`register_model`: "hf", "openai", ...) with its keyword arguments.

    The Python API: arguments go to the adapter as they are (objects such as an httpx transport included);
    the CLI and judges check user-given `key=value` arguments with `model_config` first."""
    if name not in MODELS:
        raise ValueError(MODELS.unknown(name))
    return MODELS[name](**model_args)


def recorded_model_args(name: str, args: Mapping[str, Any], *, source: str, folder: str | Path, consent_flag: str,
                        trusted: bool = False, given: Mapping[str, Any] | None = None, where: str = "") -> dict[str, Any]:
    """The arguments of adapter `name` as `source` (a file in `folder` we did not write: a run's results.json) records
    them, to reload that model: checked by the adapter's config and its field kinds (PluginConfig.from_recorded), so
    unless `trusted` (the user passed `consent_flag`) or the user `given` them, they name no server, credential
    variable, code to run or path outside `folder` (UntrustedRecordError, before anything loads or connects). An
    adapter with no config cannot be checked, so it needs the consent. Returns the arguments as recorded."""
    if name not in MODELS:
        raise ConfigError(f"{source}: {where}model: {MODELS.unknown(name)}")
    config = getattr(MODELS[name], "config", None)
    if config is None and not trusted:
        raise UntrustedRecordError(f"{source}: adapter {name!r} declares no config, so what the file records for it "
                                   f"cannot be checked. A file we did not write is data: pass {consent_flag} to allow it")
    if config is not None:
        config.from_recorded(model_named(args), source=source, folder=folder, what=f"reloading the {name} adapter",
                             consent_flag=consent_flag, trusted=trusted, given=model_named(given or {}),
                             where=f"{where}model_args.",
                             aliases={"model": "pretrained"} if "pretrained" in args and "model" not in args else None)
    return dict(args)


def model_named(args: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `args` with lm-eval's name for the checkpoint, `pretrained`, read as the adapters' `model`."""
    args = dict(args)
    if "pretrained" in args and "model" not in args:
        args["model"] = args.pop("pretrained")
    return args


def model_role(name: str) -> str:
    """The role `name` was registered with (registry.MODEL_ROLES: "chat" or "tool"); "chat" for an adapter
    registered before roles were declared (an object without the attribute)."""
    return getattr(MODELS[name], "role", "chat")


def chat_adapters() -> list[str]:
    """The adapters `--model` takes: those registered as chat models, sorted."""
    return [name for name in sorted(MODELS) if model_role(name) == "chat"]


def check_chat_adapter(name: str, flag: str = "--model") -> str:
    """`name` when it is a registered chat model adapter; ConfigError otherwise, read from the registration alone
    (nothing is imported or loaded): an unknown name with the closest ones, a tool with where tools go."""
    if name not in MODELS:
        raise ConfigError(f"{flag}: unknown chat model adapter {name!r}{did_you_mean(name, chat_adapters())}; valid: "
                          f"{', '.join(chat_adapters())} (`hallubench models` lists them and their --model-args)")
    if model_role(name) != "chat":
        raise ConfigError(f"{flag} {name}: {name} is a tool adapter, not a chat model; a multi-step task's step calls "
                          f"it through --helper ROLE \"adapter={name},pretrained=...\" (chat model adapters: "
                          f"{', '.join(chat_adapters())})")
    return name


def adapter_runs_locally(name: str) -> bool:
    """Whether the adapter `name` runs on this machine (its config has a `device`; models/configs.runs_locally); an
    unknown name does not."""
    return name in MODELS and runs_locally(getattr(MODELS[name], "config", None))


# The modules behind the lazy targets of models/configs.py and their helpers: imported when an adapter is built.
HEAVY = ("hf", "hf_inputs", "hf_loading", "kl_guided", "openai_compat", "prefix_scoring", "seeded_sampling")
discover_modules(__name__, __path__, skip=HEAVY)


__all__ = ["AudioPart", "ChatModel", "Conversation", "GenerationError", "GenerationSettings", "ImagePart",
           "HFArgs", "MODELS", "Message", "OpenAIArgs", "Part", "TextPart", "VideoPart", "adapter_runs_locally",
           "chat_adapters", "check_chat_adapter", "get_model", "model_config", "model_named", "model_role", "recorded_model_args"]
