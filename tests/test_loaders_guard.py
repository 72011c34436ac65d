"""The decoding helper process: a hang is cut off soon after the last progress while a slow decode
that keeps progressing finishes, a crash is reported, the next call still works, and frames come
back through shared memory that is never left behind."""
import glob
import mmap
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import av
import numpy as np
import pytest

from hallubench.loaders import CorruptMediaError, MediaTimeoutError, load_video
from hallubench.loaders import shared
from hallubench.loaders.decode import _index, read_frames
from hallubench.loaders.guard import _discard_helper, bounds, run_guarded
from hallubench.loaders.sampling import sample_indices
from hallubench.builders.mini.synthetic import shape_frames, write_mp4

STAND_IN = "loaders_stand_ins:"  # tests/loaders_stand_ins.py, imported by name in the helper


def memory_of(array):
    while isinstance(array, np.ndarray):
        array = array.base
    return array.obj if isinstance(array, memoryview) else array


def shared_files(pid=None):
    return glob.glob(str(shared.ROOT / f"{shared.PREFIX}-{pid or os.getpid()}-*"))


def request_files():
    """Per-request files of this process (the helper's arena outlives requests by design)."""
    return [path for path in shared_files() if "-arena-" not in path]


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    return write_mp4(tmp_path_factory.mktemp("guard") / "v.mp4", shape_frames(16), fps=8)


def test_hung_decoder_is_killed_and_replaced(video):
    started = time.monotonic()
    with pytest.raises(MediaTimeoutError, match="hang.mp4.*no progress for 1 s"):
        run_guarded("time:sleep", 60, path="hang.mp4", timeout=1.0)
    assert time.monotonic() - started < 10
    assert len(load_video(video).indices) == 8  # a fresh helper serves the next call


def test_slow_decoder_that_keeps_progressing_finishes():
    # 12 steps of 0.3 s: 3.6 s in all, over three times the 1 s allowed without progress.
    started = time.monotonic()
    assert run_guarded(STAND_IN + "progressing", 12, 0.3, path="slow.mp4", timeout=1.0) == 12
    assert time.monotonic() - started > 3.0


def test_decoder_that_stops_progressing_is_killed_soon_after():
    started = time.monotonic()
    with pytest.raises(MediaTimeoutError, match=r"stalled.mp4.*no progress for 1 s \(after 5 steps\)"):
        run_guarded(STAND_IN + "progress_then_hang", 5, 0.3, path="stalled.mp4", timeout=1.0)
    elapsed = time.monotonic() - started
    assert 2.5 < elapsed < 8  # 1.5 s of progress, then about 1 s more, not the 600 s sleep


def test_first_report_may_take_longer_than_later_ones():
    # Opening a big file reads it whole before the first report: `first` covers that, `timeout` the rest.
    assert run_guarded(STAND_IN + "progressing", 1, 1.5, path="open.mp4", timeout=0.5, first=5.0) == 1
    with pytest.raises(MediaTimeoutError, match="no progress for 0.5 s"):
        run_guarded(STAND_IN + "progressing", 1, 1.5, path="open.mp4", timeout=0.5)


def test_total_bound_stops_a_decoder_that_progresses_forever():
    started = time.monotonic()
    with pytest.raises(MediaTimeoutError, match=r"loop.mp4.*still progressing.*within 2 s"):
        run_guarded(STAND_IN + "progressing", 10_000, 0.05, path="loop.mp4", timeout=1.0, total=2.0)
    assert time.monotonic() - started < 6


def test_bounds_grow_with_file_size_and_work(tmp_path):
    small, big = tmp_path / "small.mp4", tmp_path / "big.mp4"
    small.write_bytes(b"x" * 1000)
    big.write_bytes(b"x" * 50_000_000)
    assert bounds(small, 10.0, 8)["first"] == pytest.approx(10.0, abs=0.01)
    assert bounds(big, 10.0, 8)["first"] == pytest.approx(20.0)  # 50 MB at 5 MB/s on top
    assert bounds(big, 10.0, 32)["total"] > bounds(big, 10.0, 8)["total"] > bounds(small, 10.0, 8)["total"] >= 60
    assert bounds(small, 20.0, 8)["total"] == 2 * bounds(small, 10.0, 8)["total"]  # raising timeout raises it


def test_crashed_decoder_is_reported_and_replaced(video):
    # Test double for a decoder that aborts its process, as a native decoder can on malformed input.
    with pytest.raises(CorruptMediaError, match="crash.mp4"):
        run_guarded("os:abort", path="crash.mp4", timeout=10.0)
    assert len(load_video(video).indices) == 8


def test_helper_is_reused_between_calls():
    first = run_guarded("os:getpid", path="-", timeout=30.0)
    assert run_guarded("os:getpid", path="-", timeout=30.0) == first != os.getpid()


def every_frame(path) -> np.ndarray:
    """Reference: every frame decoded in order, no seeking, converted as the loader converts."""
    with av.open(str(path)) as container:
        frames = sorted(container.decode(video=0), key=lambda frame: frame.pts)
        return np.stack([frame.to_ndarray(format="rgb24", interpolation="BICUBIC") for frame in frames])


def test_stepwise_reading_returns_exactly_the_frames_asked_for(tmp_path):
    # Keyframes every 5 frames; sorted indices that stay in a group, cross groups, and land on keyframes.
    frames = shape_frames(60, size=(48, 64))
    frames += np.random.default_rng(0).integers(0, 30, frames.shape, dtype=np.uint8)  # each frame differs
    path = write_mp4(tmp_path / "gop5.mp4", frames, fps=10, keyint=5)
    reference = every_frame(path)
    for indices in ([0], [4, 5, 6], [3, 4, 17, 18, 19, 40, 59], sample_indices(len(reference), 10, num_frames=8),
                    list(range(len(reference)))):
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            index = _index(stream, str(path))
            np.testing.assert_array_equal(read_frames(container, stream, index, indices, str(path)), reference[indices])


def test_large_arrays_come_back_through_shared_memory_small_ones_through_the_pipe():
    run_guarded("os:getpid", path="-", timeout=30.0)
    _discard_helper()  # a fresh helper has no arena yet
    first = run_guarded(STAND_IN + "double", 5, path="-", timeout=30.0)
    assert isinstance(memory_of(first["big"]), mmap.mmap)  # a per-request file, mapped as the array
    assert request_files() == []  # its name removed as soon as mapped
    second = run_guarded(STAND_IN + "double", 6, path="-", timeout=30.0)  # now from the arena, copied out
    third = run_guarded(STAND_IN + "double", 7, path="-", timeout=30.0)  # the arena reused
    assert (first["big"] == 5).all() and (second["big"] == 6).all() and (third["big"] == 7).all()
    assert second["big"].shape == (2 << 20,) and second["big"].flags.owndata and second["big"].flags.writeable
    assert (first["tiny"] == 5).all() and not isinstance(memory_of(first["tiny"]), mmap.mmap)
    assert request_files() == [] and len(shared_files()) == 1  # one arena, no per-request files


def test_frames_from_load_video_are_the_decoded_ones_and_leave_no_file(video):
    for _ in range(3):  # per-request file, then the arena
        clip = load_video(video, num_frames=16)
        np.testing.assert_array_equal(clip.frames, every_frame(video)[clip.indices])
        assert request_files() == []


@pytest.mark.parametrize("action,error,helper_survives", [
    ("hang", MediaTimeoutError, False), ("raise", CorruptMediaError, True), ("abort", CorruptMediaError, False),
])
@pytest.mark.parametrize("arena", [False, True], ids=["request-file", "arena"])
def test_shared_memory_is_removed_when_the_helper_fails(action, error, helper_survives, arena):
    _discard_helper()
    for _ in range(2 if arena else 0):  # the second call makes a helper's arena
        run_guarded(STAND_IN + "fill_shared_then", "return", path="fill.mp4", timeout=30.0)
    with pytest.raises(error, match="fill.mp4"):
        run_guarded(STAND_IN + "fill_shared_then", action, path="fill.mp4", timeout=1.0)
    assert request_files() == []
    assert (shared_files() != []) == (helper_survives and arena)  # a killed helper's arena goes with it
    assert (run_guarded(STAND_IN + "fill_shared_then", "return", path="fill.mp4", timeout=30.0)["frames"] == 7).all()
    assert request_files() == []


def test_helper_removes_its_arena_when_its_parent_exits(tmp_path):
    script = ("import os; from hallubench.loaders.guard import run_guarded\n"
              "for value in (1, 2): run_guarded('loaders_stand_ins:double', value, path='-', timeout=60.0)\n"
              "print(os.getpid())")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    child = int(done.stdout.split()[-1])
    deadline = time.monotonic() + 10
    while shared_files(child) and time.monotonic() < deadline:  # the helper sees EOF, removes, exits
        time.sleep(0.1)
    assert shared_files(child) == []


def test_files_of_a_parent_that_died_are_removed_by_the_next_helper():
    dead = multiprocessing.get_context("spawn").Process(target=os.getpid)
    dead.start()
    dead.join()
    orphan = shared.ROOT / f"{shared.PREFIX}-{dead.pid}-0-0"
    mine = shared.ROOT / f"{shared.PREFIX}-{os.getpid()}-999999-0"
    orphan.write_bytes(b"frames")
    mine.write_bytes(b"frames")
    try:
        shared.remove_orphans()
        assert not orphan.exists() and mine.exists()  # a live parent's request is left alone
    finally:
        shared.unlink(str(orphan))
        shared.unlink(str(mine))


def indices_in_child(path):
    return load_video(path).indices, run_guarded("os:getpid", path="-", timeout=30.0)


def test_forked_child_starts_its_own_helper(video):
    parent_helper = run_guarded("os:getpid", path="-", timeout=30.0)
    with multiprocessing.get_context("fork").Pool(1) as pool:  # like a DataLoader worker
        indices, child_helper = pool.apply(indices_in_child, (str(video),))
    assert indices == load_video(video).indices
    assert child_helper != parent_helper
    assert run_guarded("os:getpid", path="-", timeout=30.0) == parent_helper  # the parent's is untouched
