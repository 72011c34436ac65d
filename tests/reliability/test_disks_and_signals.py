"""A full disk anywhere is a named error, a poisoned metric cache is repaired, and SIGTERM prints one line.

- The judgment cache (`rank --cache`) on a full disk: a real full tmpfs (when this process may mount one) and a file
  size limit (RLIMIT_FSIZE) give one line naming the cache, exit 2, no sqlite traceback.
- Every packaged metric's cached copies (the one `install` writes and the one `evaluate.load(PATH)` makes) emptied
  or cut short, as a full disk leaves them, are replaced by `metrics install` and before each load; a full disk
  during evaluate's own copy is a named error and the next load works.
- SIGTERM stops every command the way Ctrl-C does, from the one handler in cli/main.py: each command of the parser
  is walked in-process, and a real `run` and `rank` are stopped in child processes (one line, exit 130)."""
import argparse
import errno
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hallubench.cli import main as cli_main
from hallubench.cli.main import COMMANDS, main
from hallubench.errors import FolderWriteError
from hallubench.metrics import install as metrics

from conftest import ROOT, answers_run_folder, env, hallubench, openai_run_argv, wait_for_holder
from test_judging import CountingJudgeServer

pytestmark = pytest.mark.usefixtures("offline")


@pytest.fixture
def judge_server():
    server = CountingJudgeServer()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.hold_after = None
    server.shutdown()
    server.server_close()


def _rank_argv(tmp_path, judge_server, cache):
    runs = [tmp_path / name for name in ("a", "b")]
    for run in runs:
        if not run.exists():
            answers_run_folder(run, "yes", ["yes, it is.", "no, it is not."])
    return ["rank", *map(str, runs), "--output-dir", str(tmp_path / "ranking"), "--cache", str(cache), "--judge",
            "llm", "--judge-args", f"adapter=openai,model=judge,base_url={judge_server.url},api_key_env=HB_RELIABILITY_KEY"]


def _limit_file_size():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


@pytest.fixture
def full_disk(tmp_path):
    """(a folder whose disk is full, what the child process runs before `hallubench`): a 64 KiB tmpfs filled up
    where this process may mount one (root), else any folder under a 4 KiB file size limit."""
    folder = tmp_path / "full"
    folder.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
                      capture_output=True).returncode != 0:
        yield folder, _limit_file_size
        return
    try:
        with open(folder / "filler", "wb") as filler:
            filler.write(b"x" * (1 << 20))
    except OSError as err:
        assert err.errno == errno.ENOSPC
    yield folder, None
    subprocess.run(["umount", str(folder)], check=True)


def test_a_judgment_cache_on_a_full_disk_is_one_named_line(full_disk, judge_server, tmp_path):
    folder, limit = full_disk
    child = hallubench(*_rank_argv(tmp_path, judge_server, folder / "judgments.sqlite"), preexec_fn=limit)
    _, err = child.communicate(timeout=300)
    assert child.returncode == 2, err
    lines = [line for line in err.splitlines() if line.startswith("hallubench rank:")]
    assert len(lines) == 1 and f"cannot write judgment cache {folder / 'judgments.sqlite'}" in lines[0], err
    assert "Traceback" not in err and "sqlite3" not in err, err


def _poison(cache, name, cut):
    """Every cached copy of metric `name` cut to `cut` bytes (None: left whole), as a full disk leaves a copy."""
    copies = sorted((cache / "evaluate_modules" / "metrics").glob(f"*{name}/*/{name}.py"))
    for path in copies:
        path.write_bytes(path.read_bytes()[:cut])
    return copies


LOAD = """
from hallubench.metrics import install
print(install.load("pa_hr", install.script("pa_hr"), keep_in_memory=True).compute(predictions=["yes"], references=["yes"]))
"""


def _load_in_a_fresh_process(cache):
    """pa_hr loaded by hallubench's scoring path in a new process (evaluate reads HF_MODULES_CACHE at import)."""
    out = subprocess.run([sys.executable, "-c", LOAD], env={**env(), "HF_MODULES_CACHE": str(cache)}, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-3000:]
    return out.stdout


def test_every_metric_copy_a_full_disk_spoiled_is_repaired(tmp_path, capsys):
    cache = tmp_path / "modules"
    metrics.install(cache)
    assert _load_in_a_fresh_process(cache)  # evaluate's own by-path copy of pa_hr is made too
    made = {name: _poison(cache, name, None) for name in metrics.available()}
    assert len(made["pa_hr"]) == 2 and all(made.values())

    def spoil(cut):
        for name, copies in made.items():
            for path in copies:  # the copies repair removed (evaluate's own), made again as evaluate makes them
                path.parent.mkdir(exist_ok=True)
                path.exists() or shutil.copyfile(metrics.script(name), path)
        return {name: _poison(cache, name, cut) for name in metrics.available()}
    for cut in (0, 200):  # emptied, cut short
        spoiled = spoil(cut)
        assert spoiled == made
        assert main(["metrics", "install", "--modules-cache", str(cache)]) == 0
        out = capsys.readouterr().out
        for name, copies in spoiled.items():
            assert f"{name}: installed" in out, out
            source = metrics.script(name)
            assert metrics._cached_script(cache, name, source).read_bytes() == source.read_bytes()
            assert all(not p.exists() or p.read_bytes() == source.read_bytes() for p in copies)
    spoil(0)
    assert "'pa': 1.0" in _load_in_a_fresh_process(cache)  # checked before use: the spoiled copy is not imported


def test_a_full_disk_during_evaluates_copy_is_named_and_the_copy_removed(tmp_path, monkeypatch):
    import evaluate.loading

    cache = tmp_path / "modules"
    monkeypatch.setattr(evaluate.config, "HF_MODULES_CACHE", cache)  # evaluate read the variable at its import
    made = []

    def full(source, target, *args, **kwargs):
        Path(target).write_bytes(b"")  # what a full disk leaves: the file made, nothing in it
        made.append(Path(target))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(evaluate.loading.shutil, "copyfile", full)
    with pytest.raises(FolderWriteError, match="No space left on device.*was not loaded and its cached copy was removed"):
        metrics.load("pope", metrics.script("pope"), keep_in_memory=True)
    assert made and not any(path.exists() for path in made)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_sigterm_stops_every_command_with_one_line(command, monkeypatch, capsys):
    def terminated(args):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        raise AssertionError("SIGTERM did not stop the command")

    def parse_known_args(self, argv=None, namespace=None):  # the command chosen, its handler replaced
        return argparse.Namespace(command=command, func=terminated), []

    monkeypatch.setattr(cli_main.Parser, "parse_known_args", parse_known_args)
    code = main([command])
    err = capsys.readouterr().err
    assert code == 130 and err.count("\n") == 1 and "interrupted (SIGTERM)" in err and err.startswith(
        f"hallubench {command}:"), err


def _stop(child, is_busy, release, timeout=120):
    """SIGTERM to `child` once `is_busy()`; then `release()` answers what it waits on (the calls in flight end)."""
    deadline = time.monotonic() + timeout
    while not is_busy():
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()[1][-3000:]
        time.sleep(0.1)
    child.send_signal(signal.SIGTERM)
    release()
    return child.communicate(timeout=120)[1]


def test_sigterm_during_a_real_run_and_rank_prints_one_line(server, data_dir, judge_server, tmp_path):
    server.delay = 60.0
    run = hallubench(*openai_run_argv(server, data_dir, tmp_path / "run"))
    wait_for_holder(tmp_path / "run", run.pid)
    err = _stop(run, lambda: server.requests, server.release.set)
    assert run.returncode == 130 and "Traceback" not in err, err
    assert [line for line in err.splitlines() if "SIGTERM" in line][0].startswith("hallubench run: the run was "
                                                                                  "interrupted (SIGTERM)"), err
    judge_server.hold_after = 0  # the first judge call is held: rank is judging when the signal comes
    rank = hallubench(*_rank_argv(tmp_path, judge_server, tmp_path / "judgments.sqlite"))
    err = _stop(rank, lambda: judge_server.calls, lambda: setattr(judge_server, "hold_after", None))
    assert rank.returncode == 130 and "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("hallubench rank:")]
    assert len(lines) == 1 and "interrupted (SIGTERM)" in lines[0] and "run the same command again" in lines[0], err
