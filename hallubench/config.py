"""Typed arguments of plug-ins (model adapters, judges): a frozen dataclass per plug-in, built from the
`key=value` flags (`from_args`) or a YAML mapping (`from_yaml`). Unknown and missing keys are refused with
a ConfigError naming the allowed ones, before anything heavy (weights, a server) is touched.

Every field that can hold text, a path or a mapping says what it holds, with a kind annotation (`base_url:
Endpoint[str]`, `api_key_env: SecretEnv[str]`, `model: NameOrPath[str]`, `dtype: Benign[str]`, ...). The kinds decide
what a config read back from a file we did not write may say (`from_recorded`): a run folder is data, so it never
supplies a server, a credential, code to run or a path outside itself, whatever adapter it names.
tests/reliability/test_recorded_configs.py walks every registered model, judge and helper config and fails on a
text, path or mapping field without a kind.

Every number that comes from outside (a flag, a `key=value`, a YAML key) is read here too: a numeric field of any
typed config (plug-in configs, GenerationSettings, RunOptions, the CLI's number flags) takes a finite number in its
range, declared once with its annotation (`timeout: Timeout[float]`, `top_p: PositiveFraction[float]`; a number field
without one is in DEFAULT_RANGE, [0, 2**63-1]) and checked by `number_error`, so a field added later is checked
without being listed (tests/reliability/test_numbers_and_texts.py walks every config and flag). Text files from
outside are read by `read_text` (UTF-8 or a named error with the byte offset, bounded in size) and YAML by
`read_yaml` (no aliases, bounded size and depth)."""
from __future__ import annotations

import dataclasses
import math
import os
import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

from hallubench.errors import ConfigError, UntrustedRecordError, did_you_mean
from hallubench.markup import escape_terminal
from hallubench.redact import note_secret, note_secret_variable, note_url, shown

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


# What a number field takes. Its annotation declares it once; `number_error` checks every number given to it.
@dataclasses.dataclass(frozen=True)
class Range:
    low: float = 0
    high: float = 2 ** 63 - 1  # the largest number a C library (torch, a socket timeout's integer ns) still takes
    low_open: bool = False
    high_open: bool = False

    def __contains__(self, value: float) -> bool:
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    def describe(self, value: float = 0) -> str:
        """">= 1", "in (0, 1]": the bound a number beyond 2**63-1 broke is named only then."""
        if self.high == Range.high and value <= self.high:
            return f"{'>' if self.low_open else '>='} {self.low:g}"
        high = "2**63-1" if self.high == Range.high else f"{self.high:g}"
        return f"in {'(' if self.low_open else '['}{self.low:g}, {high}{')' if self.high_open else ']'}"


DEFAULT_RANGE = Range()
WEEK_S = 7 * 24 * 3600  # the longest wait a timeout or retry budget may ask for
Positive = Annotated[T, Range(0, low_open=True)]
AtLeastOne = Annotated[T, Range(1)]
Fraction = Annotated[T, Range(0, 1)]
PositiveFraction = Annotated[T, Range(0, 1, low_open=True)]
Seconds = Annotated[T, Range(0, WEEK_S)]
Timeout = Annotated[T, Range(0, WEEK_S, low_open=True)]
Port = Annotated[T, Range(0, 65535)]
RANGE_NAMES = ("Positive", "AtLeastOne", "Fraction", "PositiveFraction", "Seconds", "Timeout", "Port")


def number_range(hint: Any) -> Range:
    """The range a field's annotation declares (DEFAULT_RANGE when none)."""
    return next((m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Range)), DEFAULT_RANGE)


def takes_number(hint: Any) -> type | None:
    """int or float when a field of this annotation takes a number (float when it takes both), else None."""
    options = _options(hint)
    return float if float in options else int if int in options else None


def number_error(hint: Any, value: Any) -> str | None:
    """What a field annotated `hint` needs that `value` is not ("must be >= 1", "must be a finite number in (0, 1]"):
    a float that is not finite (NaN, inf: a `>= 0` check lets NaN through) or a number outside the field's range;
    None when it is fine, or is no number (the type check names a number given to a field that takes none, and text)."""
    kind = takes_number(hint)
    if kind is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be {'a whole number' if kind is int else 'a finite number'} {number_range(hint).describe()}"
    if value not in number_range(hint):
        return f"must be {number_range(hint).describe(abs(value))}"
    return None


def check_numbers(cls: type, values: Mapping[str, Any], name: Any = str) -> None:
    """ConfigError "NAME=VALUE is ...; expected ..." for the first number among `values` (field -> value) that a
    field of the dataclass `cls` does not take; `name(field)` names it as the user wrote it (a flag, a key)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    for key, value in values.items():
        why = number_error(hints[key], value) if key in hints else None
        if why:
            raise ConfigError(f"{name(key)} {why}; got {shown(value)}")


def read_number(hint: Any, text: str, name: str = "") -> int | float:
    """A number written as text (a flag's value) for a field annotated `hint`, checked as `number_error` checks it;
    ConfigError "NAME must be ...; got TEXT" otherwise (just "must be ..." without a `name`: argparse names the flag)."""
    kind = takes_number(hint)
    try:
        value = kind(text)
    except (TypeError, ValueError):
        why = f"must be {'a whole number' if kind is int else 'a number'} {number_range(hint).describe()}"
    else:
        why = number_error(hint, value)
    if why:
        raise ConfigError(f"{name} {why}; got {shown(text)}".lstrip())
    return value


def typed_value(text: str) -> Any:
    """A `key=value` value as lm-eval's simple_parse_args_string reads it: true/false, none/null, an int, a float,
    else the text; the one reading of such values, from the command line or a `--config` file alike."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def typed_texts(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """A YAML mapping of `key: value` options with each text typed as `typed_value` types it on the command line (in
    nested mappings too), so `api_key_env: None` in a file means what `api_key_env=None` means in a flag."""
    return {key: typed_value(value) if isinstance(value, str) else typed_texts(value) if isinstance(value, Mapping)
            else value for key, value in mapping.items()}


def _options(hint: Any) -> tuple[Any, ...]:
    """The plain types a field annotation allows (Annotated and unions unwrapped)."""
    hint = getattr(hint, "__origin__", hint) if typing.get_origin(hint) is Annotated else hint
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return tuple(o for option in typing.get_args(hint) for o in _options(option))
    return (typing.get_origin(hint) or hint,)


# Files from outside: bounded, and decoded or refused with the byte that is wrong.
MAX_CONFIG_BYTES = 1 << 20  # a config file is a page of options; anything larger is no config
MAX_YAML_DEPTH = 32


def _named(path: str | Path, what: str) -> str:
    """How an error names the file: `what` and the path as one terminal line (a path may hold a line break)."""
    return f"{what} {escape_terminal(path)}".strip()


def read_text(path: str | Path, what: str = "", max_bytes: int | None = None) -> str:
    """A text file we did not write, as UTF-8 (a leading BOM dropped); ConfigError naming `what` (e.g. "--config")
    and the file when it cannot be read, is larger than `max_bytes`, or holds a byte that is not UTF-8 (its offset)."""
    name = _named(path, what)
    try:
        with open(path, "rb") as handle:
            data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
    except OSError as err:
        raise ConfigError(f"{name}: cannot be read ({err.strerror or err})") from None
    if max_bytes is not None and len(data) > max_bytes:
        raise ConfigError(f"{name}: larger than {max_bytes} bytes, more than such a file holds; is it the right file?")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{name}: byte {err.start} (0x{data[err.start]:02x}) is not UTF-8; save the file as UTF-8")\
            from None


def read_yaml(path: str | Path, what: str = "") -> Any:
    """A YAML file we did not write (a `--config`; a dataset card's header goes through `parse_yaml`), read safely
    (yaml.SafeLoader) and bounded: at most MAX_CONFIG_BYTES, no aliases (`*name`: a few lines of them expand to
    billions of values, the "billion laughs"), nesting at most MAX_YAML_DEPTH deep; ConfigError naming the file and
    the line otherwise."""
    return parse_yaml(read_text(path, what, MAX_CONFIG_BYTES), _named(path, what))


def parse_yaml(text: str, name: str) -> Any:
    """YAML text we did not write, read as `read_yaml` reads a file (no aliases, bounded nesting); ConfigError
    naming `name` and the line otherwise."""
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent, index):
            mark = self.peek_event().start_mark
            if self.check_event(yaml.AliasEvent):
                raise ConfigError(f"{name}: line {mark.line + 1}: an alias (*name) is not taken in a config; write the "
                                  "value out")
            self.depth += 1
            if self.depth > MAX_YAML_DEPTH:
                raise ConfigError(f"{name}: line {mark.line + 1}: nested more than {MAX_YAML_DEPTH} levels deep")
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    loader = BoundedLoader(text)
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ConfigError(f"{name}: {where}{err.problem or err.context} (not YAML)") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{name}: {shown(str(err))} (not YAML)") from None
    finally:
        loader.dispose()


@dataclasses.dataclass(frozen=True)
class PluginConfig:
    """Base of the plug-in configs; subclasses declare their keys as dataclass fields."""

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_args(cls: type[C], args: Mapping[str, Any] | None, *, what: str, other_names: tuple[str, ...] = ()) -> C:
        """The config from `args`; ConfigError saying `what` (e.g. "--model-args for --model hf") was wrong: an
        unknown key (with the closest known one, or one of `other_names`, the spellings a caller reads as a field:
        lm-eval's `pretrained`), a missing one, a value of the wrong type, or a number not finite or out of range."""
        args = dict(args or {})
        unknown = sorted(set(args) - set(cls.keys()))
        if unknown:
            named = ", ".join(key + did_you_mean(key, [*cls.keys(), *other_names]) for key in unknown)
            raise ConfigError(f"{what}: unknown key(s) {named}; allowed: {', '.join(sorted([*cls.keys(), *other_names]))}")
        missing = [f.name for f in dataclasses.fields(cls) if f.name not in args
                   and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        if missing:
            raise ConfigError(f"{what}: missing {', '.join(missing)}")
        hints = typing.get_type_hints(cls)
        for key, value in args.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and not _matches(value, hints[key]) \
                    and _matches(str(value), hints[key]):
                args[key] = str(value)  # key=value text read as a number (revision=2024): the text it was
        check_numbers(cls, args, name=lambda key: f"{what}: {key}")  # before a field's own check compares a NaN
        try:
            config = cls(**args)
        except ValueError as err:  # a field's own check (__post_init__), whose message says more than a type's
            raise ConfigError(f"{what}: {err}") from None
        except TypeError:
            config = None  # a check tripped over a value of the wrong type: named below
        for key, value in args.items():
            if not _matches(value, hints[key]):
                raise ConfigError(f"{what}: {key}={shown(value)} is not of type {_describe(hints[key])}")
        if config is not None:
            note_credentials(config)
        return config

    @classmethod
    def from_yaml(cls: type[C], path: str | Path, *, what: str | None = None) -> C:
        """The config from a YAML file holding one mapping of these keys (read_yaml: bounded, no aliases)."""
        data = read_yaml(path)
        if not isinstance(data, Mapping):
            raise ConfigError(f"{path}: expected a mapping of {', '.join(cls.keys())}")
        return cls.from_args(typed_texts(data), what=what or str(path))

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


def note_credentials(config: PluginConfig) -> None:
    """Tell the one redaction (hallubench/redact.py) the credentials `config` holds or names: the value of each
    `SecretEnv` variable and `Secret` is masked wherever it would be written, and so is an `Endpoint`'s password."""
    noting = {SECRET_ENV: note_secret_variable, SECRET: note_secret, ENDPOINT: note_url}
    for name, kind in field_kinds(type(config)).items():
        value = getattr(config, name)
        if kind in noting and isinstance(value, str):
            noting[kind](value)


def field_kinds(cls: type[PluginConfig]) -> dict[str, str | None]:
    """Each field's kind (ENDPOINT, SECRET_ENV, ...; None when its annotation gives none)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return {f.name: next((m for m in getattr(hints[f.name], "__metadata__", ()) if m in KINDS), None)
            for f in dataclasses.fields(cls)}


def plain_type(annotation: Any) -> str:
    """A field's annotation as written, without its kind and range: "str | None" for "Benign[str | None]"."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    head, bracket, rest = text.partition("[")
    if bracket and head in (*KIND_NAMES, *RANGE_NAMES) and rest.endswith("]"):
        return plain_type(rest[:-1])
    return text


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
