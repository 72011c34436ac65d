"""Typed arguments of plug-ins (model adapters, judges): a frozen dataclass per plug-in, built from the
`key=value` flags (`from_args`) or a YAML mapping (`from_yaml`). Unknown and missing keys are refused with
a ConfigError naming the allowed ones, before anything heavy (weights, a server) is touched.

Every field that can hold text, a path or a mapping says what it holds, with a kind annotation (`base_url:
Endpoint[str]`, `api_key_env: SecretEnv[str]`, `model: NameOrPath[str]`, `dtype: Benign[str]`, ...). The kinds decide
what a config read back from a file we did not write may say (`from_recorded`): a run folder is data, so it never
supplies a server, a credential, code to run or a path outside itself, whatever adapter it names.
tests/reliability/test_recorded_configs.py walks every registered model, judge and helper config and fails on a
text, path or mapping field without a kind."""
from __future__ import annotations

import dataclasses
import os
import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

from hallubench.errors import ConfigError, UntrustedRecordError

C = TypeVar("C", bound="PluginConfig")
T = TypeVar("T")

# What a field holds, for reading a config back from a file we did not write (`from_recorded`).
ENDPOINT = "endpoint"          # a network address the plug-in connects to (base_url, url)
SECRET_ENV = "secret_env"      # the name of an environment variable whose value the plug-in sends (api_key_env)
SECRET = "secret"              # a credential itself
LOCAL_PATH = "local_path"      # a file or folder on this machine (a corpus file)
NAME_OR_PATH = "name_or_path"  # a Hub id (or a name the plug-in knows, "serper") or a local file or folder
RUNS_CODE = "runs_code"        # a switch that lets the plug-in run code it is pointed at (trust_remote_code)
OPAQUE = "opaque"              # a mapping handed on as it is (to a library, a server): anything may hide in it
BENIGN = "benign"              # a choice among the plug-in's own values (dtype, device, a label name): harmless
KINDS = (ENDPOINT, SECRET_ENV, SECRET, LOCAL_PATH, NAME_OR_PATH, RUNS_CODE, OPAQUE, BENIGN)

# The annotations, by name (`hallubench models` shows a field's type without them, and its kind beside it).
Endpoint = Annotated[T, ENDPOINT]
SecretEnv = Annotated[T, SECRET_ENV]
Secret = Annotated[T, SECRET]
LocalPath = Annotated[T, LOCAL_PATH]
NameOrPath = Annotated[T, NAME_OR_PATH]
RunsCode = Annotated[T, RUNS_CODE]
Opaque = Annotated[T, OPAQUE]
Benign = Annotated[T, BENIGN]
KIND_NAMES = ("Endpoint", "SecretEnv", "Secret", "LocalPath", "NameOrPath", "RunsCode", "Opaque", "Benign")


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

    @classmethod
    def from_recorded(cls: type[C], recorded: Mapping[str, Any], *, source: str, folder: str | Path, what: str,
                      consent_flag: str, trusted: bool = False, given: Mapping[str, Any] | None = None,
                      where: str = "", aliases: Mapping[str, str] | None = None) -> C:
        """The config that `source` (a file in `folder` we did not write, e.g. a run's results.json) records, checked
        as `from_args` checks it and then by its field kinds: unless `trusted` (the user passed `consent_flag`), a
        field the user did not give (`given`: the user's own values) is refused when it names a server or a
        credential variable (even the plug-in's default: the file chose the plug-in), a credential, code to run, a
        path outside `folder`, an opaque mapping, or is a text field its plug-in left without a kind.
        UntrustedRecordError naming each such field (`where` + its name in the file: `aliases` maps a field to the key
        the file used), `source` and `consent_flag`; it comes before anything loads or connects: a config is data."""
        config = cls.from_args(recorded, what=f"{source}: {what}")
        if trusted:
            return config
        given = dict(given or {})
        kinds, hints = field_kinds(cls), typing.get_type_hints(cls)
        aliases = dict(aliases or {})
        refused = [aliases.get(f.name, f.name) + reason for f in dataclasses.fields(cls)
                   if not (f.name in given and given[f.name] == getattr(config, f.name))
                   for reason in [_refusal(f, kinds[f.name], hints[f.name], getattr(config, f.name), Path(folder))]
                   if reason]
        if refused:
            raise UntrustedRecordError(
                f"{source}: {what} would use what that file names: " + "; ".join(f"{where}{r}" for r in refused)
                + f". A file we did not write is data, not your word: check these, then pass {consent_flag} to allow it")
        return config

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


def field_kinds(cls: type[PluginConfig]) -> dict[str, str | None]:
    """Each field's kind (ENDPOINT, SECRET_ENV, ...; None when its annotation gives none)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return {f.name: next((m for m in getattr(hints[f.name], "__metadata__", ()) if m in KINDS), None)
            for f in dataclasses.fields(cls)}


def plain_type(annotation: Any) -> str:
    """A field's annotation as written, without its kind: "str | None" for "Benign[str | None]"."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    head, bracket, rest = text.partition("[")
    return rest[:-1] if bracket and head in KIND_NAMES and rest.endswith("]") else text


def unmarked_fields(cls: type[PluginConfig]) -> list[str]:
    """The fields that can hold text, a path or a mapping but have no kind: what `from_recorded` cannot judge."""
    hints, kinds = typing.get_type_hints(cls), field_kinds(cls)
    return [name for name, kind in kinds.items() if kind is None and _may_hold_text(hints[name])]


def _may_hold_text(hint: Any) -> bool:
    """Whether a value of this type can be text, a path or a container of them (str, Path, dict, list, Any)."""
    if hint is Any or hint is object:
        return True
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_may_hold_text(option) for option in typing.get_args(hint))
    kind = typing.get_origin(hint) or hint
    return not isinstance(kind, type) or issubclass(kind, (str, bytes, os.PathLike, Mapping, list, tuple, set))


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING


def _refusal(f: dataclasses.Field, kind: str | None, hint: Any, value: Any, folder: Path) -> str | None:
    """Why the value of field `f` may not come from a file we did not write (to follow its name); None when it may."""
    recorded = value != _default(f)  # else the plug-in's own default
    origin = "as recorded" if recorded else "the plug-in's default, which it would use because that file names it"
    if kind == ENDPOINT and value:
        return f"={value!r} ({origin}) is a server it would connect to"
    if kind == SECRET_ENV and value:
        return f"={value!r} ({origin}) is the environment variable whose value it would send"
    if not recorded or value is None:
        return None
    if kind == SECRET:
        return " is a credential"
    if kind == RUNS_CODE and value is not False:
        return f"={value!r} would let it run code that comes with what it loads (a checkpoint's own modules)"
    if kind in (LOCAL_PATH, NAME_OR_PATH):
        if not isinstance(value, (str, os.PathLike)):
            return f"={value!r} is no single path that could be checked to lie inside {folder}"
        if _outside(str(value), folder, names_allowed=kind == NAME_OR_PATH):
            return f"={str(value)!r} is a path outside {folder}"
    if kind == OPAQUE and value:
        return f"={value!r} is handed on as it is"
    if kind is None and _may_hold_text(hint):
        return f"={value!r}: its plug-in does not say what this field holds (hallubench/config.py field kinds)"
    return None


def _outside(value: str, folder: Path, names_allowed: bool) -> bool:
    """Whether `value` is a local path outside `folder` (relative ones as loading would read them, from the working
    directory; links followed); with `names_allowed`, a Hub id or plain name that is no existing path is not."""
    try:
        path = Path(value).expanduser()
        resolved = path.resolve()
        exists = path.exists()
    except (OSError, ValueError, RuntimeError):  # a NUL byte, ~nosuchuser: no path we could check, so not inside
        return True
    if names_allowed and not exists:
        from huggingface_hub.utils import HFValidationError, validate_repo_id

        try:
            validate_repo_id(value)
            return False
        except HFValidationError:
            pass
    return not resolved.is_relative_to(folder.resolve())


# A Hub repo id, org/name: what a checkpoint or dataset named by id looks like (a folder is checked as a path first).
HUB_REPO_ID = re.compile(r"[A-Za-z0-9][\w.\-]*/[\w.\-]+")
