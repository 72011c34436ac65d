"""Every command that reads or uploads a run or ranking folder takes that folder's lock: it is refused while a live
writer holds the folder, and after a writer was killed with -9 half-way, naming the writer, touching nothing and
uploading nothing. The commands and their folder arguments are read from the CLI itself (the arguments marked with
cli/flags.reads_folders), each alone and with --push-to-hub where the command has it; a path argument that is
neither marked nor listed below as naming something else fails the test, so a new command is covered once it says
what its arguments are."""
import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

from hallubench.cli.main import build_parser, main

from conftest import ROOT, env

pytestmark = pytest.mark.slow  # each case starts a real writer process

TASK = "avhallubench_visual"
RED = "A red square moves to the left. A tone beeps twice a second."
# Path arguments that name no run or ranking folder to read, and why.
NOT_READ = {
    "output_dir": "the folder a command writes (its own lock: tests/reliability/test_one_writer.py)",
    "out": "the folder `build` or `view` writes, or `metrics push --dry-run` lays Spaces out in",
    "data_dir": "built datasets, read-only data",
    "cache": "the judgment cache (SQLite, its own locking)",
    "reference": "a reference scores file",
    "config": "a YAML file of options",
    "references": "the authors' released files, each checked against its pinned sha256 (hallubench reproduce)",
}
DUMMY = "me/x"  # the value of every other required argument (a Hub repo id)


def _path_like(action):
    from pathlib import Path

    return action.type is Path or action.dest.endswith(("_dir", "_dirs", "_path")) or action.dest in ("out",
                                                                                                        "from_outputs")


def _subcommands(parser, prefix=()):
    """(command words, its parser) for every command and nested subcommand (`metrics push`)."""
    for action in parser._actions:
        if isinstance(action.choices, dict):
            for name, sub in action.choices.items():
                yield (*prefix, name), sub
                yield from _subcommands(sub, (*prefix, name))


def _commands():
    return dict(_subcommands(build_parser()))


def _cases():
    """(command words, the marked action's dest, its kind, with --push-to-hub) for every marked argument."""
    cases, unknown = [], []
    for name, command in _commands().items():
        for action in command._actions:
            marked = getattr(action, "reads_folders", None)
            if marked:
                pushes = any(a.dest == "push_to_hub" for a in command._actions)
                cases += [(name, action.dest, kind, push) for kind in (("run", "ranking") if marked == "any" else
                                                                       (marked,))
                          for push in ([False, True] if pushes else [False])]
            elif _path_like(action) and action.dest not in NOT_READ:
                unknown.append(f"{' '.join(name)} {action.option_strings or action.dest}")
    return cases, unknown


def test_every_path_argument_says_whether_it_is_a_folder_read():
    cases, unknown = _cases()
    assert not unknown, (f"{unknown}: mark each argument naming a run or ranking folder that its command reads or "
                         "uploads with cli/flags.reads_folders, or add it to NOT_READ saying what it names")
    assert {(" ".join(c), d, k) for c, d, k, _ in cases} >= {
        ("publish", "run_dir", "run"), ("rank", "run_dirs", "run"), ("run", "from_outputs", "run"),
        ("view", "folders", "ranking"), ("view", "folders", "run"), ("verify", "run_dir", "run")}


def _run_folder(path):
    path.mkdir(parents=True)
    lines = [{"key": f"{path.name}-q{i}", "task": TASK, "id": f"q{i}", "outputs": [RED], "samples": [RED, RED],
              "reference": RED, "error": None} for i in range(2)]
    (path / "samples.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A run folder and a ranking folder, whole and unlocked, to copy."""
    root = tmp_path_factory.mktemp("folders")
    runs = [_run_folder(root / "a"), _run_folder(root / "b")]
    assert main(["rank", *map(str, runs), "--output-dir", str(root / "ranking"), "--cache",
                 str(root / "j.sqlite")]) == 0
    return {"run": runs[0], "ranking": root / "ranking"}


def _holder(folder, purpose):
    code = ("import sys, time\nfrom hallubench.harness import folder_lock\n"
            "lock = folder_lock.FolderLock(sys.argv[1], sys.argv[2])\nprint('held', flush=True)\ntime.sleep(300)")
    child = subprocess.Popen([sys.executable, "-c", code, str(folder), purpose], env=env(), cwd=ROOT,
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert child.stdout.readline().strip() == "held"
    return child


def _argv(command, dest, kind, push, folders, target, tmp_path):
    """`command` with `target` as its argument `dest` and whole copies of the folders for its other arguments."""
    parser = _commands()[command]
    argv = list(command)
    for action in parser._actions:
        other = getattr(action, "reads_folders", None)
        if action.dest == dest:
            values = [target] + ([tmp_path / f"copy-{dest}"] if action.nargs == "+" else [])
        elif other and (action.required or not action.option_strings) and action.nargs not in ("*", "?"):
            values = [shutil.copytree(folders["run" if other == "any" else other], tmp_path / f"copy-{action.dest}")]
        elif action.required and action.option_strings:
            values = [DUMMY]
        elif action.dest in ("output_dir", "out", "cache"):
            values = [tmp_path / f"new-{action.dest}"]
        else:
            continue
        if action.dest == dest and action.nargs == "+":  # a second folder beside it (of a run where either kind goes)
            shutil.copytree(folders["run" if other == "any" else kind], values[1])
        argv += ([action.option_strings[0]] if action.option_strings else []) + [str(v) for v in values]
    return argv + (["--push-to-hub", DUMMY] if push else [])


@pytest.mark.parametrize("killed", [False, True], ids=["live writer", "writer killed -9"])
def test_every_reader_and_uploader_is_refused_while_a_writer_holds_the_folder(folders, tmp_path, capfd, killed):
    cases, _ = _cases()
    for n, (command, dest, kind, push) in enumerate(cases):
        case = tmp_path / str(n)
        target = shutil.copytree(folders[kind], case / "target")
        holder = _holder(target, "run" if kind == "run" else "rank")
        try:
            if killed:
                os.killpg(holder.pid, signal.SIGKILL)
                holder.wait()
            before = {p.name: p.read_bytes() for p in target.iterdir() if p.is_file() and p.name[0] != "."}
            argv = _argv(command, dest, kind, push, folders, target, case)
            capfd.readouterr()
            code = main(argv)
            err = capfd.readouterr().err
            writer = f"hallubench {'run' if kind == 'run' else 'rank'} pid {holder.pid}"
            expected = (f"{target} is half-written: its last writer ({writer}" if killed else
                        f"{target} is being written by {writer}")
            assert code == 2 and expected in err, (argv, err)
            assert "nothing was uploaded" in err or "nothing was read" in err, (argv, err)
            assert {p.name: p.read_bytes() for p in target.iterdir() if p.is_file() and p.name[0] != "."} == before
        finally:
            if holder.poll() is None:
                os.killpg(holder.pid, signal.SIGKILL)
                holder.wait()
