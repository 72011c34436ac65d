"""Typed arguments of plug-ins (model adapters, judges): a frozen dataclass per plug-in, built from the
`key=value` flags (`from_args`) or a YAML mapping (`from_yaml`). Unknown and missing keys are refused with
a ConfigError naming the allowed ones, before anything heavy (weights, a server) is touched."""
from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from hallubench.errors import ConfigError

C = TypeVar("C", bound="PluginConfig")


@dataclasses.dataclass(frozen=True)
class PluginConfig:
    """Base of the plug-in configs; subclasses declare their keys as dataclass fields."""

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_args(cls: type[C], args: Mapping[str, Any] | None, *, what: str) -> C:
        """The config from `args`; ConfigError saying `what` (e.g. "--model-args for --model hf") was wrong."""
        args = dict(args or {})
        unknown = sorted(set(args) - set(cls.keys()))
        if unknown:
            raise ConfigError(f"{what}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(cls.keys()))}")
        missing = [f.name for f in dataclasses.fields(cls) if f.name not in args
                   and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        if missing:
            raise ConfigError(f"{what}: missing {', '.join(missing)}")
        hints = typing.get_type_hints(cls)
        for key, value in args.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and not _matches(value, hints[key]) \
                    and _matches(str(value), hints[key]):
                args[key] = str(value)  # key=value text read as a number (revision=2024): the text it was
        try:
            config = cls(**args)
        except ValueError as err:  # a field's own check (__post_init__), whose message says more than a type's
            raise ConfigError(f"{what}: {err}") from None
        except TypeError:
            config = None  # a check tripped over a value of the wrong type: named below
        for key, value in args.items():
            if not _matches(value, hints[key]):
                raise ConfigError(f"{what}: {key}={value!r} is not of type {_describe(hints[key])}")
        return config

    @classmethod
    def from_yaml(cls: type[C], path: str | Path, *, what: str | None = None) -> C:
        """The config from a YAML file holding one mapping of these keys."""
        import yaml

        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as err:
            raise ConfigError(f"{path}: {err}") from None
        if not isinstance(data, Mapping):
            raise ConfigError(f"{path}: expected a mapping of {', '.join(cls.keys())}")
        return cls.from_args(data, what=what or str(path))

    def kwargs(self) -> dict[str, Any]:
        """The keyword arguments for the plug-in's constructor."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def _matches(value: Any, hint: Any) -> bool:
    """Whether `value` has the declared type (an int is a valid float; a bool is no number)."""
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, option) for option in typing.get_args(hint))
    if hint is type(None):
        return value is None
    kind = origin or hint
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind) if isinstance(kind, type) else True


def _describe(hint: Any) -> str:
    """'float', 'str or None', ... for an error message."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    return " or ".join("None" if option is type(None) else getattr(typing.get_origin(option) or option, "__name__",
                                                                   str(option)) for option in options)
