"""No half-finished or mixed run folder is read as whole: after Ctrl-C, SIGTERM, a full disk at the merge or at
the chart, `publish`, `rank` and `run --from-outputs` refuse the folder naming the command that finishes it, and
that command resumes it to the same records; a folder being written is refused, naming the writer; a second
model cannot append to a folder, and a folder mixing models or --limits is refused by every reader."""
import errno
import json
import os
import signal
import sys
import time

import pytest

from hallubench.cli.main import main
from hallubench.harness import run_state, store

from conftest import hallubench, openai_run_argv, publish_gets_past_the_lock, wait_for_holder


pytestmark = pytest.mark.usefixtures("offline")


def _readers_refuse(folder, tmp_path, capfd, *expected):
    """`publish`, `rank` and `run --from-outputs` each exit 2 with every one of `expected` in their message, and
    leave the folder's files as they were."""
    before = {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file() and path.name[0] != "."}
    commands = (["publish", str(folder), "--repo", "me/x", "--allow-mini-data"],
                ["rank", str(folder), f"other={folder}", "--output-dir", str(tmp_path / "ranking")],
                ["run", "--from-outputs", str(folder)])
    for argv in commands:
        assert main(argv) == 2, argv
        err = capfd.readouterr().err
        assert all(text in err for text in expected), (argv, err)
    after = {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file() and path.name[0] != "."}
    assert after == before


def _records(folder):
    """The folder's records without their timings, by key."""
    return {key: {k: v for k, v in r.items() if k != "time_s"} for key, r in store.read_store(folder).records.items()}


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_is_refused_by_every_reader_and_the_same_command_resumes_it(
        server, data_dir, tmp_path, capfd, signum):
    out = tmp_path / "run"
    assert main(openai_run_argv(server, data_dir, out, "--limit", "1")) == 0  # finished: results.json on 1 sample
    capfd.readouterr()
    server.delay = 60.0
    argv = openai_run_argv(server, data_dir, out)  # the same settings on 2 samples: the second one hangs
    child = hallubench(*argv)
    wait_for_holder(out, child.pid)
    while not (out / run_state.UNFINISHED).is_file() or not server.requests[1:]:
        time.sleep(0.2)
    child.send_signal(signum)
    server.release.set()
    _, err = child.communicate(timeout=120)
    name = signal.Signals(signum).name
    assert child.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert (f"the run was interrupted ({name}); 1 finished samples are kept in {out}. Resume with the same command: "
            f"hallubench run --model openai") in err, err
    line = next(line for line in err.split("\n") if "the run was interrupted" in line)
    assert line.startswith("hallubench run: the run was interrupted"), f"drawn over the progress bar: {line!r}"
    _readers_refuse(out, tmp_path, capfd, f"{out} is unfinished", f"was interrupted ({name})",
                    "running the same command again: hallubench run --model openai")
    server.delay = 0.0
    assert main(argv) == 0
    assert f"resuming {out}: its last run was interrupted ({name})" in capfd.readouterr().err
    assert not (out / run_state.UNFINISHED).exists()
    assert json.loads((out / "results.json").read_text())["tasks"]["cmm"]["n_selected"] == 2
    publish_gets_past_the_lock(out)


@pytest.mark.parametrize("where", ["samples.jsonl", "results.png"])
def test_a_full_disk_at_the_merge_or_the_chart_is_a_named_error_and_the_rerun_is_identical(
        server, data_dir, tmp_path, capfd, monkeypatch, where):
    clean = tmp_path / "clean"
    assert main(openai_run_argv(server, data_dir, clean)) == 0
    replace = os.replace

    def full_disk(src, dst):
        if os.path.basename(dst) == where:
            raise OSError(errno.ENOSPC, "No space left on device", str(src))
        replace(src, dst)

    out = tmp_path / "run"
    argv = openai_run_argv(server, data_dir, out)
    monkeypatch.setattr(sys, "argv", ["hallubench", *argv])  # as the command line gave it
    monkeypatch.setattr("hallubench.harness.atomic.os.replace", full_disk)
    assert main(argv) == 2
    err = capfd.readouterr().err
    assert f"cannot write {out / where}: No space left on device" in err and "Traceback" not in err, err
    assert not [p.name for p in out.iterdir() if ".tmp" in p.name], "no temporary file is left behind"
    if where == "samples.jsonl":
        assert sorted(p.name for p in out.glob(store.RANK_GLOB)) == ["samples_rank0.jsonl"]  # kept until merged
    # readers name the error's class only: the mark's free text is never shown (run_state.why_stopped)
    _readers_refuse(out, tmp_path, capfd, f"{out} is unfinished", "its last run", "failed (FolderWriteError)",
                    "running the same command again: hallubench run --model openai --model-args")
    monkeypatch.setattr("hallubench.harness.atomic.os.replace", replace)
    asked = len(server.requests)
    assert main(argv) == 0
    assert len(server.requests) == asked, "the rerun generates nothing again"
    assert _records(out) == _records(clean)
    assert (out / "results.png").is_file() and not (out / run_state.UNFINISHED).exists()


def test_a_second_model_cannot_append_and_a_mixed_folder_is_refused_by_every_reader(server, data_dir, tmp_path,
                                                                                  capfd):
    out = tmp_path / "run"
    assert main(openai_run_argv(server, data_dir, out)) == 0
    kept = (out / store.MERGED).read_bytes()
    capfd.readouterr()
    other_model = openai_run_argv(server, data_dir, out, "--limit", "1")
    other_model[4] = other_model[4].replace("pretrained=tiny", "pretrained=other")  # the --model-args
    assert main(other_model) == 2
    err = capfd.readouterr().err
    assert f"{out} holds samples of another model (openai:tiny@" in err and "choose another --output-dir" in err
    assert (out / store.MERGED).read_bytes() == kept and not (out / run_state.UNFINISHED).exists()
    # A folder mixed by hand (or by an older hallubench): a record of another model beside the run's.
    record = json.loads(kept.splitlines()[0])
    stranger = {**record, "key": "x" * 32, "id": "other", "model": "openai:other@x", "model_fingerprint": "f" * 16}
    (out / store.MERGED).write_bytes(kept + json.dumps(stranger).encode() + b"\n")
    _readers_refuse(out, tmp_path, capfd, f"{out} holds samples of two models: openai:tiny@",
                    f"and openai:other@x (fingerprint {'f' * 16})", "run each model into its own --output-dir")


def test_a_folder_whose_results_were_scored_with_another_limit_is_refused(server, data_dir, tmp_path, capfd):
    out = tmp_path / "run"
    assert main(openai_run_argv(server, data_dir, out)) == 0
    assert main(openai_run_argv(server, data_dir, out, "--limit", "1")) == 0  # results.json now scores 1 of 2 rows
    capfd.readouterr()
    assert main(["publish", str(out), "--repo", "me/x", "--allow-mini-data"]) == 2
    err = capfd.readouterr().err
    assert "results.json scores task 'cmm' on 1 samples (--limit 1), but the folder holds 2 records of it" in err
    assert f"hallubench run --from-outputs {out}" in err
    assert main(["run", "--from-outputs", str(out)]) == 0  # the fix it names: score what the folder holds
    publish_gets_past_the_lock(out)


@pytest.mark.slow
def test_a_folder_being_written_is_refused_by_rank_and_from_outputs(server, data_dir, tmp_path, capfd):
    out = tmp_path / "run"
    assert main(openai_run_argv(server, data_dir, out, "--limit", "1")) == 0
    server.delay = 60.0
    child = hallubench(*openai_run_argv(server, data_dir, out))
    try:
        wait_for_holder(out, child.pid)
        deadline = time.monotonic() + 60  # the run opens its rank file after taking the lock: the folder as it writes
        while not store.rank_file(out, 0).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        capfd.readouterr()
        _readers_refuse(out, tmp_path, capfd, f"{out} is being written by hallubench run pid {child.pid}",
                        "nothing was")
    finally:
        server.release.set()
        child.communicate(timeout=120)
    assert child.returncode == 0


def test_a_full_disk_at_a_sample_append_names_the_file_that_failed(server, data_dir, tmp_path, capfd, monkeypatch):
    """The disk fills as a sample is appended; writing why the run stopped into its mark then fails too, but the
    error the user sees names the samples file, not the mark."""
    fsync, full = os.fsync, []

    def fsync_on_a_filling_disk(fd):
        if full or os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith("samples_rank"):
            full.append(fd)
            raise OSError(errno.ENOSPC, "No space left on device")
        fsync(fd)

    out = tmp_path / "run"
    monkeypatch.setattr(os, "fsync", fsync_on_a_filling_disk)
    assert main(openai_run_argv(server, data_dir, out)) == 2
    err = capfd.readouterr().err
    assert f"cannot write {out / 'samples_rank0.jsonl'}: No space left on device" in err, err
    assert run_state.UNFINISHED not in err and "the finished samples are kept" in err
    assert (out / run_state.UNFINISHED).is_file(), "the mark stays: readers refuse the folder"
