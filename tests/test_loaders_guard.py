"""The decoding helper process: a hang is cut off, a crash is reported, and the next call still works."""
import multiprocessing
import os
import time

import pytest

from hallubench.loaders import CorruptMediaError, MediaTimeoutError, load_video
from hallubench.loaders.guard import run_guarded
from hallubench.loaders.synthetic import shape_frames, write_mp4


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    return write_mp4(tmp_path_factory.mktemp("guard") / "v.mp4", shape_frames(16), fps=8)


def test_hung_decoder_is_killed_and_replaced(video):
    # Test double for a hanging decoder: the helper runs time.sleep instead of decord.
    started = time.monotonic()
    with pytest.raises(MediaTimeoutError, match="hang.mp4"):
        run_guarded("time:sleep", 60, path="hang.mp4", timeout=1.0)
    assert time.monotonic() - started < 10
    assert len(load_video(video).indices) == 8  # a fresh helper serves the next call


def test_crashed_decoder_is_reported_and_replaced(video):
    # Test double for a decoder that aborts its process, as decord can on malformed input.
    with pytest.raises(CorruptMediaError, match="crash.mp4"):
        run_guarded("os:abort", path="crash.mp4", timeout=10.0)
    assert len(load_video(video).indices) == 8


def test_helper_is_reused_between_calls():
    first = run_guarded("os:getpid", path="-", timeout=30.0)
    assert run_guarded("os:getpid", path="-", timeout=30.0) == first != os.getpid()


def indices_in_child(path):
    return load_video(path).indices, run_guarded("os:getpid", path="-", timeout=30.0)


def test_forked_child_starts_its_own_helper(video):
    parent_helper = run_guarded("os:getpid", path="-", timeout=30.0)
    with multiprocessing.get_context("fork").Pool(1) as pool:  # like a DataLoader worker
        indices, child_helper = pool.apply(indices_in_child, (str(video),))
    assert indices == load_video(video).indices
    assert child_helper != parent_helper
    assert run_guarded("os:getpid", path="-", timeout=30.0) == parent_helper  # the parent's is untouched
