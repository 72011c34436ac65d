"""The `hallubench` command: one subcommand per module in this package.

Only the module of the subcommand being run is imported (each pulls in torch, datasets or evaluate),
so `hallubench --help` and `hallubench COMMAND --help` answer at once.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import signal
import sys
import threading
from importlib.metadata import version

# Other libraries' progress bars (dataset generation, weight loading and saving, downloads) and their info and
# warning chatter bury what hallubench says; each is off unless the user set the variable. Read when each library
# is imported, i.e. after this, and inherited by `accelerate launch` workers. hallubench's own bars stay.
QUIET_LIBRARIES = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # huggingface_hub, and transformers' bars follow it
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "DATASETS_VERBOSITY": "error",
    "EVALUATE_VERBOSITY": "error",
    "HF_HUB_VERBOSITY": "error",
    "ACCELERATE_LOG_LEVEL": "error",
}


class NotesToStderr(logging.Handler):
    """hallubench's notes (the `hallubench` logger: a resumed folder, failed samples, where an upload went) as the
    command's own lines on stderr; the Python API leaves them to its caller's logging."""

    def emit(self, record: logging.LogRecord) -> None:
        print(record.getMessage(), file=sys.stderr)  # sys.stderr at each note: a redirected one gets it


def show_notes() -> None:
    logger = logging.getLogger("hallubench")
    if not any(isinstance(handler, NotesToStderr) for handler in logger.handlers):
        logger.addHandler(NotesToStderr())
    logger.setLevel(logging.INFO)


def quiet_libraries() -> None:
    for name, value in QUIET_LIBRARIES.items():
        os.environ.setdefault(name, value)


quiet_libraries()  # before the import below, which imports huggingface_hub (its constants read these once)
import hallubench.metrics  # noqa: E402,F401  its import puts the metrics into evaluate's cache (bare-name evaluate.load)
from hallubench.cli.includes import add_include_argument, included  # noqa: E402
from hallubench.errors import ConfigError, HallubenchError, RunInterrupted, did_you_mean  # noqa: E402
from hallubench.markup import escape_terminal  # noqa: E402
from hallubench.redact import redact, redact_log_records  # noqa: E402
from hallubench.registry import include  # noqa: E402

# Each module exposes `register(subparsers)`, adding its parser with `func=handler(args) -> int`.
COMMANDS: dict[str, str] = {
    "demo": "run the main job offline on the embedded mini benchmarks",
    "run": "evaluate a model on benchmark tasks",
    "tasks": "list the benchmark tasks: what each measures and needs (media, helper models) and what scores it",
    "build": "convert an official benchmark release into a Hub-ready dataset folder",
    "metrics": "list, install (for bare-name evaluate.load) or push the metrics",
    "models": "list the model families the hf adapter knows and the --model-args each adapter takes",
    "publish": "publish a run folder to the Hugging Face Hub",
    "verify": "check that a run folder's per-answer verdicts re-aggregate to its results.json",
    "crosscheck": "generate evidence with several models and rank them",
    "rank": "CrossCheck leaderboard from run folders",
    "view": "a static site of a ranking: leaderboards, sentences coloured by CrossCheck score, run samples",
    "reproduce": "recompute the papers' published numbers from the authors' released files, published against ours",
}


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose every `--dashed-flag` also answers to `--dashed_flag` (lm-eval's spelling), so each
    flag takes both spellings without listing them, and whose errors for a mistyped command, choice or flag say
    "did you mean" (Python 3.14's `suggest_on_error`, which 3.11 lacks); sub-parsers are of this class too."""

    def add_argument(self, *names, **kwargs):
        twins = [name.replace("-", "_").replace("__", "--", 1) for name in names
                 if name.startswith("--") and "-" in name[2:]]
        return super().add_argument(*names, *(twin for twin in twins if twin not in names), **kwargs)

    def _check_value(self, action: argparse.Action, value) -> None:
        if action.choices is not None and value not in action.choices:
            choices = ", ".join(map(str, action.choices))
            raise argparse.ArgumentError(
                action, f"invalid choice: {value!r}{did_you_mean(str(value), action.choices)} (choose from {choices})")

    def error(self, message: str):
        """A usage error as one line, `PROG: error: MESSAGE`, as every other error prints (argparse puts its whole
        usage first, which for `run` is 15 lines burying the message); --help has the usage."""
        self.exit(2, f"{self.prog}: error: {said(message)} (see `{self.prog} --help`)\n")  # as every error line

    def unrecognized(self, unknown: list[str]) -> None:
        """argparse's "unrecognized arguments" usage error, naming the closest flag of this parser for each."""
        flags = [flag for action in self._actions for flag in action.option_strings]
        dashed = [flag for flag in flags if "_" not in flag]  # each flag once, unless the user spelled it with "_"
        named = [arg + (did_you_mean(arg.partition("=")[0], flags if "_" in arg else dashed) if arg.startswith("-") else "") for arg in unknown]
        self.error(f"unrecognized arguments: {' '.join(named)}")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with `command`'s full sub-parser (every command's when None); the others are listed only."""
    parser = Parser(
        prog="hallubench",
        description="Measure hallucination in audio, video and image language models.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('hallubench')}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, summary in COMMANDS.items():
        if command in (None, name):
            importlib.import_module(f"hallubench.cli.{name}").register(subparsers, summary)
            add_include_argument(subparsers.choices[name])
        else:
            subparsers.add_parser(name, help=summary)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    quiet_libraries()
    redact_log_records()
    show_notes()
    command = next((arg for arg in argv if not arg.startswith("-")), "")
    name = f"hallubench {command}" if command in COMMANDS else "hallubench"
    try:
        with sigterm_as_interrupt():
            return _dispatch(argv, command)
    except RunInterrupted as err:  # not an error: the message says what was kept and how to resume
        print(f"{name}: {said(err)}", file=sys.stderr)
        return err.exit_code
    except HallubenchError as err:  # every user-facing error, a broken plug-in's included: its message, no traceback
        print(f"{name}: error: {said(err)}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt as err:  # a run turns it into RunInterrupted; other commands write their output whole
        print(f"{name}: interrupted ({err.args[0] if err.args else 'SIGINT'}) before it finished; it writes its output "
              "whole at the end, so none of it was changed (a --cache keeps the judgments already made): run the "
              "same command again", file=sys.stderr)
        return RunInterrupted.exit_code
    except BrokenPipeError:  # the reader left (`hallubench models | head`): as the Python docs advise, no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # and no second error at exit's flush
        return 1
    except OSError as err:  # the system refused a path given or written (name too long, not a folder, no access)
        where = f"{err.filename}: " if err.filename is not None else ""
        print(f"{name}: error: {said(where + (err.strerror or str(err)))}; check the path and try again",
              file=sys.stderr)
        return 1


def said(message: object, longest: int = 160) -> str:
    """An error's message as printed: redacted, each word longer than `longest` (a 5,000-character path given as a
    flag, a value from a file) cut in its middle, and any line break or control character it quotes (a path given
    with a vertical tab) shown escaped, so the one line stays one readable line whichever message it is."""
    words = redact(str(message)).split(" ")
    return escape_terminal(" ".join(word if len(word) <= longest else f"{word[:100]}…{word[-50:]}" for word in words))


@contextlib.contextmanager
def sigterm_as_interrupt():
    """SIGTERM stops every command as Ctrl-C does (KeyboardInterrupt("SIGTERM")), so each prints its one line and
    keeps what it finished; a command added later is covered without saying so."""
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt("SIGTERM")


def _dispatch(argv: list[str], command: str) -> int:
    for spec in included(argv):  # the plug-ins first: they are among the parser's choices and in its --help
        include(spec)
    parser = build_parser(command if command in COMMANDS else "")
    args, unknown = parser.parse_known_args(argv)
    for dest, value in vars(args).items():  # no file name or text we take holds one: os calls would raise instead
        if any("\0" in str(item) for item in (value if isinstance(value, (list, tuple)) else [value])):
            raise ConfigError(f"--{dest.replace('_', '-')}: its value holds a NUL byte, which no path or text may hold")
    if unknown:  # argparse would show the top-level usage; the command's own is the one that helps
        subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        subparsers.choices.get(args.command, parser).unrecognized(unknown)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
