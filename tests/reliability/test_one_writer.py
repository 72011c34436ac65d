"""One writer per run folder and per ranking folder, with real processes: a second writer stops at once
naming the holder; a killed writer's lock is taken over; survivors of a killed launch block a new run;
`publish` and a ranking's push are refused while a writer holds the folder, or after one was killed half-way."""
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from hallubench.harness import folder_lock, store

from conftest import ROOT, answers_run_folder, env, hallubench, openai_run_argv, publish_gets_past_the_lock, wait_for_holder

pytestmark = pytest.mark.slow  # every test here starts real writer processes


def _holder(script, folder):
    """A child process that takes a lock of `folder` with `script` and sleeps."""
    code = f"import time, sys\nfrom hallubench.harness import folder_lock\n{script}\nprint('held', flush=True)\ntime.sleep(300)"
    child = subprocess.Popen([sys.executable, "-c", code, str(folder)], env=env(), cwd=ROOT, stdout=subprocess.PIPE,
                             text=True, start_new_session=True)
    assert child.stdout.readline().strip() == "held"
    return child


def test_second_run_on_the_same_folder_stops_at_once_and_the_first_finishes(server, data_dir, tmp_path):
    server.delay = 20.0
    out = tmp_path / "run"
    first = hallubench(*openai_run_argv(server, data_dir, out))
    wait_for_holder(out, first.pid)
    t0 = time.monotonic()
    second = hallubench(*openai_run_argv(server, data_dir, out, "--limit", "1"))
    _, err = second.communicate(timeout=120)
    assert second.returncode == 2
    assert f"pid {first.pid} on host {socket.gethostname()}" in err and "started 20" in err
    assert "choose another folder" in err and "kill" in err
    assert first.poll() is None, "the refused run must not disturb the holder"
    assert time.monotonic() - t0 < 60
    server.release.set()  # the holder's held answers come at once now: no need to wait out the delay
    stdout, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    records, torn = store.read_jsonl(out / store.MERGED)
    assert not torn and len(records) == 2 and all(r["error"] is None for r in records)
    assert (out / folder_lock.LOCK_NAME).read_text() == "", "a clean finish empties the lock record"


def test_lock_of_a_killed_run_is_taken_over_and_nothing_is_lost(server, data_dir, tmp_path):
    server.delay = 30.0
    out = tmp_path / "run"
    killed = hallubench(*openai_run_argv(server, data_dir, out), start_new_session=True)
    wait_for_holder(out, killed.pid)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    server.release.set()
    publish = hallubench("publish", out, "--repo", "me/x")
    _, err = publish.communicate(timeout=120)
    assert publish.returncode == 2
    assert f"{out} is half-written: its last writer (hallubench run pid {killed.pid}" in err and "nothing was uploaded" in err
    rerun = hallubench(*openai_run_argv(server, data_dir, out))
    _, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err
    assert "taking over the lock of a writer that died" in err and f"pid {killed.pid}" in err  # the refused publish kept it
    records, _ = store.read_jsonl(out / store.MERGED)
    assert len(records) == 2 and all(r["error"] is None for r in records)
    publish_gets_past_the_lock(out)


def test_publish_is_refused_while_a_run_writes_the_folder_or_the_samples_it_reads(server, data_dir, tmp_path):
    server.delay = 20.0
    out = tmp_path / "run"
    run = hallubench(*openai_run_argv(server, data_dir, out))
    wait_for_holder(out, run.pid)
    publish = hallubench("publish", out, "--repo", "me/x")
    _, err = publish.communicate(timeout=120)
    assert publish.returncode == 2
    assert f"{out} is being written by hallubench run pid {run.pid} on host {socket.gethostname()}" in err
    assert "nothing was uploaded and the folder was not touched" in err
    assert run.poll() is None, "the refused publish must not disturb the run"
    server.release.set()
    _, err = run.communicate(timeout=300)
    assert run.returncode == 0, err
    publish_gets_past_the_lock(out)
    # A re-scored copy holds only results.json; its push reads the samples from the run folder (the folder the user
    # named with --from-outputs), so holds that too.
    rescored = tmp_path / "rescored"
    assert hallubench("run", "--from-outputs", out, "--output-dir", rescored).wait(timeout=120) == 0
    holder = _holder("lock = folder_lock.FolderLock(sys.argv[1], 'run')", out)
    try:
        publish = hallubench("run", "--from-outputs", out, "--output-dir", rescored, "--push-to-hub", "me/x",
                             "--allow-mini-data")
        _, err = publish.communicate(timeout=120)
        assert publish.returncode == 2 and f"{out} is being written by hallubench run pid {holder.pid}" in err
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()


def test_survivors_of_a_killed_launch_block_a_new_run_until_they_stop(server, data_dir, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    # The launch's main process died (its record stays in the lock file) while a worker lives on.
    (out / folder_lock.LOCK_NAME).write_text(json.dumps({"purpose": "run", "pid": 4242, "host": "node7",
                                                         "started": "2026-01-01T00:00:00+00:00",
                                                         "rank_pids": [4242, 4243]}))
    worker = _holder("lock = folder_lock.RankLock(sys.argv[1])", out)
    try:
        blocked = hallubench(*openai_run_argv(server, data_dir, out))
        _, err = blocked.communicate(timeout=120)
        assert blocked.returncode == 2
        assert "processes of an earlier launch still write" in err and "4243" in err
        assert not server.requests, "nothing may be generated while the survivor writes"
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
    rerun = hallubench(*openai_run_argv(server, data_dir, out))
    _, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err
    assert "pid 4242 on host node7" in err


def test_ranking_folder_has_one_writer(tmp_path):
    folder = tmp_path / "ranking"
    holder = _holder("lock = folder_lock.FolderLock(sys.argv[1], 'rank')", folder)
    try:
        # run folders rank takes (it checks them before it takes the ranking folder's lock)
        runs = [answers_run_folder(tmp_path / name, "A red square.", ["A red square.", "A blue circle."])
                for name in ("a", "b")]
        second = hallubench("rank", *runs, "--output-dir", folder)
        _, err = second.communicate(timeout=120)
        assert second.returncode == 2
        assert f"hallubench rank pid {holder.pid}" in err and "choose another folder" in err
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()
    # The holder is gone: the same command now takes the lock over and ranks.
    third = hallubench("rank", *runs, "--output-dir", folder)
    _, err = third.communicate(timeout=300)
    assert "being written by" not in err and "taking over the lock" in err and third.returncode == 0, err[-2000:]


def test_a_ranking_is_not_pushed_while_a_rank_writes_it(tmp_path):
    from hallubench.cli.rank import push
    from hallubench.errors import HallubenchError

    folder = tmp_path / "ranking"
    holder = _holder("lock = folder_lock.FolderLock(sys.argv[1], 'rank')", folder)
    try:
        with pytest.raises(HallubenchError) as busy:  # cli/main.py's one catch prints it and exits with its code
            push(folder, "me/ranking", "rank")
        assert busy.value.exit_code == 2
        assert f"{folder} is being written by hallubench rank pid {holder.pid}" in str(busy.value)
        assert "nothing was uploaded" in str(busy.value)
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()
    with pytest.raises(HallubenchError) as half:  # the killed rank left its ranking half-written
        push(folder, "me/ranking", "rank")
    assert half.value.exit_code == 2
    assert f"{folder} is half-written: its last writer (hallubench rank pid {holder.pid}" in str(half.value)


def test_all_processes_of_one_launch_share_the_folder_and_a_second_run_is_refused(server, data_dir, tmp_path):
    server.delay = 15.0
    out = tmp_path / "run"
    launch_env = {**env(), "OMP_NUM_THREADS": "1", "ACCELERATE_USE_CPU": "true"}
    launch = subprocess.Popen([sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes",
                               "2", "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
                               "-m", "hallubench", *openai_run_argv(server, data_dir, out, "--limit", "4")],
                              env=launch_env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        path = out / folder_lock.LOCK_NAME
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and len(_record(path).get("rank_pids", [])) < 2:
            time.sleep(0.5)
        holder = _record(path)
        assert len(holder.get("rank_pids", [])) == 2, "the main process records both ranks"
        second = hallubench(*openai_run_argv(server, data_dir, out))
        _, err = second.communicate(timeout=120)
        assert second.returncode == 2 and f"pid {holder['pid']}" in err
        assert f"launch ranks' pids {holder['rank_pids'][0]}, {holder['rank_pids'][1]}" in err
        server.release.set()
        _, err = launch.communicate(timeout=300)
        assert launch.returncode == 0, err[-3000:]
    finally:
        if launch.poll() is None:
            os.killpg(launch.pid, signal.SIGKILL)
    records, _ = store.read_jsonl(out / store.MERGED)
    assert len(records) == 4 and all(r["error"] is None for r in records)


def _record(path):
    try:
        return json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}


def test_an_unwritable_output_folder_is_a_named_error(tmp_path):
    from hallubench.harness.folder_lock import FolderLock
    from hallubench.errors import ConfigError

    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError, match="cannot create or lock .*choose a writable local folder"):
        FolderLock(tmp_path / "file" / "run", "run")
    (tmp_path / "run" / folder_lock.LOCK_NAME).mkdir(parents=True)  # a lock file that cannot be opened for writing
    (tmp_path / "run" / "results.json").write_text("{}")
    with pytest.raises(ConfigError, match="cannot create or lock .*copy the folder to a writable local one and upload"):
        with folder_lock.reading(tmp_path / "run", "publish", "results.json"):
            pass


def test_a_full_disk_while_appending_is_a_named_error_and_keeps_what_was_written(tmp_path):
    import resource

    from hallubench.errors import ConfigError

    writer = store.SampleWriter(store.rank_file(tmp_path, 0))
    writer.append({"key": "k0", "task": "t", "id": "0", "error": None})
    size = (tmp_path / "samples_rank0.jsonl").stat().st_size
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 10, hard))  # room for a few bytes, as on a full disk
    try:
        with pytest.raises(ConfigError, match="cannot write .*samples_rank0.jsonl.*finished samples are kept"):
            writer.append({"key": "k1", "task": "t", "id": "1", "error": None, "outputs": ["x" * 100]})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    contents = store.read_store(tmp_path)
    assert list(contents.records) == ["k0"] and contents.torn  # the cut record is torn, the first one kept
