"""Every `hallubench` command line hallubench prints or writes (a card's Reproduce line, the resume hint of a stopped
run and its `.hallubench-unfinished.json`, the "run X" of an error) is rendered here from options, so that it parses:
each value in its flag's own syntax (a switch as the bare flag, never `--answer-probs False`), shell-quoted, with
the options at their defaults left out. tests/reliability/test_generated_commands.py parses what these give with
the `hallubench` parser itself and checks it gives back the same options, for every option of `run`.
"""
from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Any, Iterable, Mapping

from hallubench.harness.options import RunOptions

# Options whose flag is not `--<name with dashes>`, and the repeatable ones (one flag per entry).
FLAGS = {"helpers": "--helper"}
REPEATED = ("helpers", "perturb", "include")


def _defaults() -> dict[str, Any]:
    return {f.name: f.default if f.default is not dataclasses.MISSING else f.default_factory()
            for f in dataclasses.fields(RunOptions)}


def _pairs(values: Mapping[str, Any]) -> str:
    """`key=value,...` as parse_kv reads it back (True/False/None in words it types again)."""
    return ",".join(f"{key}={value}" for key, value in values.items())


def _words(name: str, value: Any) -> list[str]:
    flag = FLAGS.get(name, "--" + name.replace("_", "-"))
    if isinstance(value, bool):
        if value is not True:  # a store_true flag: False is its absence
            return []
        return [flag]
    if name in REPEATED:
        if isinstance(value, Mapping):
            entries = value.items()
            if name == "helpers":
                return [word for role, args in entries for word in (flag, str(role), _pairs(args))]
            return [word for kind, levels in entries for word in (flag, f"{kind}={','.join(map(str, levels))}")]
        return [word for entry in value for word in (flag, str(entry))]
    if isinstance(value, Mapping):
        return [flag, _pairs(value)]
    if isinstance(value, (list, tuple)):
        return [flag, ",".join(map(str, value))]
    return [flag, str(value)]


def run_argv(options: RunOptions | Mapping[str, Any], omit: Iterable[str] = ()) -> list[str]:
    """`run` and its flags that give `options` (a RunOptions, or the `run.options` recorded in results.json), the
    options at their defaults and those named in `omit` left out."""
    values = dataclasses.asdict(options) if isinstance(options, RunOptions) else dict(options)
    defaults, skip = _defaults(), set(omit)
    argv = ["run"]
    for name, value in values.items():
        if name in skip or name not in defaults or value is None or value == defaults[name]:
            continue
        argv += _words(name, str(value) if isinstance(value, Path) else value)
    return argv


def _of_kind(value: Any, default: Any) -> bool:
    """Whether a recorded `value` has the kind of its option (that of `default`; any plain JSON value where the
    default is None), with no control character in any text."""
    if isinstance(value, str):
        return value.isprintable() and not isinstance(default, (bool, list, Mapping))
    if isinstance(value, bool):
        return default is None or isinstance(default, bool)
    if isinstance(value, (int, float)):
        return default is None or (isinstance(default, (int, float)) and not isinstance(default, bool))
    if isinstance(value, (list, Mapping)):
        if default is not None and not isinstance(default, type(value) if isinstance(value, list) else Mapping):
            return False
        items = value.items() if isinstance(value, Mapping) else enumerate(value)
        return all(_of_kind(str(key), None) and (item is None or _of_kind(item, None)) for key, item in items)
    return value is None


def recorded_run_argv(recorded: object) -> list[str] | None:
    """`run_argv` of run options read back from a file we did not write (an unfinished mark), or None when they are
    not options a run records: a mapping of RunOptions fields to values of each field's kind that RunOptions accepts.
    What is printed is rendered here from those options, never copied from the file."""
    defaults = _defaults()
    if not isinstance(recorded, Mapping) or not all(
            name in defaults and _of_kind(value, defaults[name]) for name, value in recorded.items()):
        return None
    values = dict(recorded)
    if values.get("output_dir") is not None:
        values["output_dir"] = Path(values["output_dir"])
    try:
        return run_argv(RunOptions(**values))
    except (TypeError, ValueError):  # ConfigError is a ValueError: a value RunOptions refuses
        return None


def from_outputs_argv(folder: Path | str, output_dir: Path | str | None = None) -> list[str]:
    """The command that scores a run folder's records again (`run --from-outputs FOLDER`), into `output_dir` when
    that is another folder."""
    return ["run", "--from-outputs", str(folder), *(["--output-dir", str(output_dir)] if output_dir else [])]


def command_line(argv: list[str]) -> str:
    """`argv` as a shell command line: `hallubench` and each word quoted where the shell needs it."""
    return shlex.join(["hallubench", *argv])


def rescore_hint(folder: Path | str, output_dir: Path | str | None = None) -> str:
    """The command that scores a run folder's records again, as it is printed in errors."""
    return f"`{command_line(from_outputs_argv(folder, output_dir))}`"
