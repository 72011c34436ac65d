"""One catch for every user-facing error (cli/main.py): a user mistake in any subcommand prints `hallubench COMMAND:
error: MESSAGE` and exits with the error's code (2 for what the user asked for, 1 for what failed), no traceback."""
from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from hallubench.cli import main as cli
from hallubench.errors import ConfigError, HallubenchError, RunInterrupted


def _errors(tmp_path) -> dict[str, tuple[list[str], int, str]]:
    """Command -> (argv making a user mistake, exit code, part of the message)."""
    missing = str(tmp_path / "missing")
    return {
        "run": (["run", "--model", "hf", "--tasks", "cmm"], 2, "--data-dir is required"),
        "build": (["build", "cmm", "--source", missing, "--out", str(tmp_path / "out")], 1, f"source {missing} does not exist"),
        "rank": (["rank", missing, "--output-dir", str(tmp_path / "ranking")], 2, "holds no samples.jsonl"),
        "crosscheck": (["crosscheck", "--tasks", "cmm"], 2, "give the models"),
        "publish": (["publish", missing, "--repo", "org/name"], 2, "has no results.json"),
        "view": (["view", missing], 2, "is neither a ranking folder"),
        "metrics": (["metrics", "push", "pa_hr", "cchall", "--repo", "org/name"], 2, "--repo names one Space"),
        "verify": (["verify", missing], 2, "is not a run folder"),
        "tasks": (["tasks", "cmn"], 2, "no task or group 'cmn' (did you mean 'cmm'?)"),
        "reproduce": (["reproduce", "--references", missing], 2, f"--references {missing}: no such folder"),
    }


# Commands with no argument a user can get wrong cheaply: an error raised inside them stands in.
RAISED_INSIDE = {"demo": ("show_datasets", ["demo"]), "models": ("_families", ["models"])}


def test_every_command_has_an_error_case(tmp_path):
    assert set(_errors(tmp_path)) | set(RAISED_INSIDE) == set(cli.COMMANDS)


@pytest.mark.parametrize("command", ["run", "build", "rank", "crosscheck", "publish", "view", "metrics", "verify",
                                     "tasks", "reproduce"])
def test_a_user_error_prints_its_message_and_exit_code(command, tmp_path, capsys):
    argv, code, message = _errors(tmp_path)[command]
    assert cli.main(argv) == code
    err = capsys.readouterr().err
    assert err.startswith(f"hallubench {command}: error: ") and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", sorted(RAISED_INSIDE))
def test_an_error_inside_a_command_is_caught_once_in_main(command, monkeypatch, capsys):
    function, argv = RAISED_INSIDE[command]
    module = importlib.import_module(f"hallubench.cli.{command}")

    def fail(*args, **kwargs):
        raise ConfigError("the planted mistake; do this instead")

    monkeypatch.setattr(module, function, fail)
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == f"hallubench {command}: error: the planted mistake; do this instead\n"


@pytest.mark.parametrize("error, code, prefix", [(ConfigError("x"), 2, "error: "), (HallubenchError("x"), 1, "error: "),
                                                 (RunInterrupted("x"), 130, "")])
def test_exit_codes_come_from_the_error(error, code, prefix, monkeypatch, capsys):
    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(importlib.import_module("hallubench.cli.models"), "_families", fail)
    assert cli.main(["models"]) == code
    assert capsys.readouterr().err == f"hallubench models: {prefix}x\n"


def test_every_error_type_is_a_hallubench_error_in_errors_py():
    """One root: every exception class of the package lives in hallubench/errors.py, under HallubenchError."""
    import hallubench.errors as errors
    from test_architecture import ROOT, modules

    defined = [cls for _, cls in inspect.getmembers(errors, inspect.isclass) if cls.__module__ == errors.__name__]
    assert len(defined) > 20 and all(issubclass(cls, HallubenchError) for cls in defined)
    elsewhere = [f"{name}.{node.name}" for name, path in modules(ROOT).items() if name != errors.__name__
                 for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8")))
                 if isinstance(node, ast.ClassDef) and any(ast.unparse(base).endswith(("Error", "Exception", "Unusable",
                                                                                      "Interrupted", "Busy"))
                                                           for base in node.bases)]
    assert elsewhere == []
