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


def from_outputs_argv(folder: Path | str) -> list[str]:
    """The command that scores a run folder's records again (`run --from-outputs FOLDER`)."""
    return ["run", "--from-outputs", str(folder)]


def command_line(argv: list[str]) -> str:
    """`argv` as a shell command line: `hallubench` and each word quoted where the shell needs it."""
    return shlex.join(["hallubench", *argv])


def rescore_hint(folder: Path | str) -> str:
    """The command that scores a run folder's records again, as it is printed in errors."""
    return f"`{command_line(from_outputs_argv(folder))}`"
