"""Running the documented `hallubench` commands as a new reader would, on the mini data (tests/test_docs_commands.py).

Every whole command shown in the README and the docs pages runs once (repeats left out), in reading order, in one
shared working folder, so a command that reads what an earlier one wrote (`rank runs/demo/crosscheck/runs/*` after
`demo`) finds it. What a reader would swap for their own, the run swaps by rule, never by a list of commands:

- `--data-dir X` becomes `--data-dir mini`; `run`, `crosscheck` and `demo` get `--limit 1`, `max_new_tokens=8` and
  at most 2 sampled passages;
- a model checkpoint (`pretrained=`, `--models`) that is not on disk becomes a tiny random checkpoint, linked under
  the checkpoint's own last name so the models keep their names;
- `build --source DIR` builds from the benchmark's mini release in its official layout;
- an `--output-dir` that another page's command made already gets a name of its own (pages are independent).

A command whose needs have no stand-in here is not run, and `why_not_run` says why: an elided command (`...`),
`accelerate launch`, a URL or an OpenAI-compatible server, the Hub (downloads, `publish`, `--push-to-hub`), a GPU,
`--serve`, and a file or folder the reader brings (a plug-in, a reference CSV, a run folder no command before it
makes). The commands run in-process (`hallubench.cli.main.main`), which keeps them to seconds each, until a budget of
CPU seconds is spent (CPU, not wall-clock, so that a busy machine reaches as far as an idle one); those past it are
counted as not reached.
"""
from __future__ import annotations

import contextlib
import glob
import io
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from docs_checks import invocations, shown_commands, where

FILE_FLAGS = ("--include", "--reference", "--config")  # flags whose value is a file the reader brings
SAMPLING = ("run", "crosscheck", "demo")


@dataclass
class Shown:
    where: str
    before: list[str]  # what precedes `hallubench` on its line: a launcher, environment assignments
    arguments: list[str]


@dataclass
class Outcome:
    ran: list[str] = field(default_factory=list)
    cpu_s: dict[str, float] = field(default_factory=dict)  # where -> CPU seconds it took
    failed: list[str] = field(default_factory=list)
    skipped: dict[str, list[str]] = field(default_factory=dict)  # reason -> where
    not_reached: list[str] = field(default_factory=list)

    def summary(self) -> str:
        slowest = sorted(self.cpu_s, key=self.cpu_s.get, reverse=True)[:3]
        lines = [f"ran {len(self.ran)} documented commands in {sum(self.cpu_s.values()):.0f} CPU s; "
                 f"{len(self.failed)} failed; slowest: " + ", ".join(f"{w} {self.cpu_s[w]:.0f} s" for w in slowest)]
        lines += [f"not run ({len(places)}): {reason}, e.g. {places[0]}" for reason, places in self.skipped.items()]
        if self.not_reached:
            lines.append(f"not reached within the time budget: {len(self.not_reached)}, from {self.not_reached[0]}")
        return "\n".join(lines)


def documented_commands(files: list[Path]) -> list[Shown]:
    """Every whole `hallubench` command of `files`, in order, each once."""
    seen, commands = set(), []
    for path in files:
        for line, text, whole in shown_commands(path):
            for before, arguments in invocations(text) if whole else []:
                if tuple(arguments) not in seen:
                    seen.add(tuple(arguments))
                    commands.append(Shown(where(path, line), before, arguments))
    return commands


def normalized(arguments: list[str]) -> list[str]:
    """`--flag=value` as two words and `--under_scored` flags dashed, so the rules below see one spelling."""
    words = []
    for word in arguments:
        if word.startswith("--"):
            flag, equals, value = word.partition("=")
            words += [flag.replace("_", "-")] + ([value] if equals else [])
        else:
            words.append(word)
    return words


def value(words: list[str], flag: str) -> str | None:
    return words[words.index(flag) + 1] if flag in words[:-1] else None


def with_value(words: list[str], flag: str, new: str) -> list[str]:
    if flag in words[:-1]:
        at = words.index(flag)
        return words[:at + 1] + [new] + words[at + 2:]
    return words + [flag, new]


def key_values(text: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in text.split(",") if "=" in part)


def positionals(words: list[str]) -> list[str]:
    """The words that are no flag and no flag's value, the command's name left out."""
    from hallubench.cli.main import build_parser

    parser = build_parser(words[0])
    commands = next(action for action in parser._actions if action.choices and words[0] in action.choices)
    options = commands.choices[words[0]]._option_string_actions
    found, skip = [], False
    for word in words[1:]:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in options and options[word].nargs != 0
        else:
            found.append(word)
    return found


def expanded(words: list[str], workdir: Path) -> list[str]:
    """Shell globs matched in the working folder, as bash would (no match: the word as written)."""
    out = []
    for word in words:
        matches = sorted(glob.glob(word, root_dir=workdir)) if any(c in word for c in "*?[") else []
        out += matches or [word]
    return out


def why_not_run(shown: Shown, words: list[str], workdir: Path) -> str | None:
    """Why this command cannot run here (None: it can), by what it needs."""
    command = words[0] if words else ""
    text = " ".join(words)
    if "..." in words:
        return "an elided command (`...`)"
    if any(word in ("--help", "-h", "--version") for word in words):
        return None
    if "accelerate" in shown.before:
        return "starts several processes (accelerate launch)"
    if "://" in text or value(words, "--model") == "openai" or "adapter=openai" in text:
        return "needs an OpenAI-compatible server or API"
    if command == "publish" or "--push-to-hub" in words:
        return "uploads to the Hub"
    if "--serve" in words:
        return "serves until stopped"
    if command == "reproduce" and "--list" not in words:
        return "fetches the authors' released files, or reads the reader's --references folder"
    if re.search(r"\bcuda\b", text):
        return "needs a GPU"
    if command == "build" and (value(words, "--source") or "hub:").startswith("hub:"):
        return "downloads a release from the Hub"
    for flag in FILE_FLAGS:
        if value(words, flag) and not (workdir / value(words, flag)).exists():
            return f"reads the reader's own file ({flag} {value(words, flag)})"
    for flag in ("--helper", "--judge-args"):
        for at, word in enumerate(words[:-1]):
            wanted = key_values(words[at + 1]).get("pretrained") if word == flag else None
            if wanted and not (workdir / wanted).exists():
                return f"downloads a helper or judge model from the Hub ({flag} pretrained={wanted})"
    if command != "build":
        for word in positionals(words):
            folder = word.split("=", 1)[-1]
            if "/" in folder and not (workdir / folder).exists():
                return f"reads a folder that no command before it makes ({word})"
    return None


def stand_in_checkpoint(wanted: str, tiny: Path, workdir: Path) -> str:
    """A checkpoint the docs name but the disk lacks: the tiny one, linked under its last name."""
    if (workdir / wanted).exists():
        return wanted
    link = workdir / "stand-ins" / re.sub(r"[^\w.+-]", "-", Path(wanted.rstrip("/")).name)
    link.parent.mkdir(exist_ok=True)
    if not link.exists():
        link.symlink_to(tiny, target_is_directory=True)
    return str(link.relative_to(workdir))


def as_run(words: list[str], workdir: Path, tiny: Path, releases: Path) -> list[str]:
    """The command with the rules' stand-ins (see the module's docstring)."""
    command = words[0]
    if "--data-dir" in words:
        words = with_value(words, "--data-dir", "mini")
    if command in SAMPLING:
        words = with_value(words, "--limit", "1")
    if command in ("run", "crosscheck"):
        kwargs = {**key_values(value(words, "--gen-kwargs") or ""), "max_new_tokens": "8"}
        words = with_value(words, "--gen-kwargs", ",".join(f"{k}={v}" for k, v in kwargs.items()))
        if command == "crosscheck" or "--num-samples" in words:
            words = with_value(words, "--num-samples", str(min(int(value(words, "--num-samples") or 2), 2)))
    if value(words, "--model-args") and value(words, "--model") in (None, "hf"):
        args = key_values(value(words, "--model-args"))
        if "pretrained" in args:
            args["pretrained"] = stand_in_checkpoint(args["pretrained"], tiny, workdir)
            words = with_value(words, "--model-args", ",".join(f"{k}={v}" for k, v in args.items()))
    if value(words, "--models"):
        models = [stand_in_checkpoint(m, tiny, workdir) for m in value(words, "--models").split(",")]
        words = with_value(words, "--models", ",".join(models))
    if command == "build" and value(words, "--source"):
        words = with_value(words, "--source", str(releases / words[1]))
    return words


def own_output(words: list[str], page: str, made: dict[str, str], workdir: Path) -> list[str]:
    """Pages are read one at a time, commands on one page in order: an --output-dir that another page's command
    made already gets a name of its own (two pages both build datasets/mhalubench), one this page made is reused
    (a resumed run)."""
    out = value(words, "--output-dir")
    if out is None:
        return words
    key = os.path.normpath(out)
    if made.get(key, page) != page:
        n = 2
        while (workdir / f"{key}-{n}").exists():
            n += 1
        words, key = with_value(words, "--output-dir", f"{key}-{n}"), f"{key}-{n}"
    made[key] = page
    return words


def run_one(arguments: list[str]) -> tuple[int, str]:
    """`hallubench ARGUMENTS` in this process: its exit status and what it printed."""
    from hallubench.cli.main import main

    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
        try:
            code = main(arguments)
        except SystemExit as stop:  # argparse
            code = stop.code if isinstance(stop.code, int) else 1
        except Exception as error:  # noqa: BLE001  a traceback is a failure to report, with the command
            code, _ = 1, said.write(f"{type(error).__name__}: {error}")
    return code, said.getvalue()


def run_documented(commands: list[Shown], workdir: Path, tiny: Path, releases: Path, budget_s: float) -> Outcome:
    outcome, start, made = Outcome(), time.process_time(), {}
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        for shown in commands:
            if time.process_time() - start > budget_s:  # CPU seconds: the same on a busy machine
                outcome.not_reached.append(shown.where)
                continue
            words = expanded(normalized(shown.arguments), workdir)
            reason = why_not_run(shown, words, workdir)
            if reason:
                kind, _, what = reason.partition(" (")
                outcome.skipped.setdefault(kind, []).append(f"{shown.where} ({what}" if what else shown.where)
                continue
            arguments = as_run(words, workdir, tiny, releases) if "--help" not in words else words
            arguments = own_output(arguments, shown.where.split(":")[0], made, workdir)
            began = time.process_time()
            code, said = run_one(arguments)
            outcome.ran.append(shown.where)
            outcome.cpu_s[shown.where] = time.process_time() - began
            if code != 0:
                last = [line for line in said.splitlines() if line.strip()][-3:]
                outcome.failed.append(f"{shown.where}: `hallubench {' '.join(shown.arguments)}` (run as "
                                      f"`hallubench {' '.join(arguments)}`) exited {code}: {' | '.join(last)}")
    finally:
        os.chdir(cwd)
    return outcome
