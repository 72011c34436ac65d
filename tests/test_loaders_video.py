"""load_video: which frames are read (indices, timestamps, content), sampling modes, blank ablation."""
import warnings
from pathlib import Path

import numpy as np
import pytest

from hallubench.loaders import VideoClip, load_video
from hallubench.loaders.sampling import sample_indices
from hallubench.builders.mini.synthetic import write_mp4
from hallubench.loaders.video import warn_if_truncated

FPS = 8.0


def ramp_video(path, num_frames):
    """A video whose frame t is flat grey at level 10 + 6t, so the content tells which frame was read.
    (64 px wide: decord 0.6 fails to copy frames narrower than 64 px.)"""
    levels = 10 + 6 * np.arange(num_frames)
    frames = np.broadcast_to(levels[:, None, None, None], (num_frames, 32, 64, 3)).astype(np.uint8)
    return write_mp4(path, frames, fps=FPS)


@pytest.fixture(scope="module")
def ramp40(tmp_path_factory):
    return ramp_video(tmp_path_factory.mktemp("video") / "ramp40.mp4", 40)


def assert_frames_match_indices(clip: VideoClip):
    levels = clip.frames.reshape(len(clip.indices), -1).mean(axis=1)
    np.testing.assert_allclose(levels, 10 + 6 * np.array(clip.indices), atol=2.0)
    np.testing.assert_allclose(clip.timestamps, np.array(clip.indices) / FPS, atol=1e-3)


def test_count_mode_takes_segment_centres(ramp40):
    clip = load_video(ramp40, num_frames=8)
    assert clip.frames.shape == (8, 32, 64, 3) and clip.frames.dtype == np.uint8
    assert clip.indices == [int((i + 0.5) * 40 / 8) for i in range(8)]
    assert np.all(np.diff(clip.indices) == 5)
    assert clip.indices[0] + clip.indices[-1] in (39, 40)  # symmetric about the middle
    assert clip.native_fps == pytest.approx(FPS)
    assert clip.duration == pytest.approx(5.0)
    assert clip.path == str(ramp40)
    assert_frames_match_indices(clip)


def test_fps_mode_samples_at_that_rate(ramp40):
    clip = load_video(ramp40, fps=2.0)
    assert len(clip.indices) == 10  # 5 s at 2 frames/s
    assert np.allclose(np.diff(clip.timestamps), 0.5, atol=1 / FPS)
    assert_frames_match_indices(clip)


def test_fps_mode_cap_spreads_over_whole_video(ramp40):
    clip = load_video(ramp40, fps=FPS, max_frames=16)
    assert len(clip.indices) == 16
    assert clip.timestamps[0] < 0.5 and clip.timestamps[-1] > 4.5
    assert len(set(clip.indices)) == 16
    assert_frames_match_indices(clip)


def test_fps_above_native_rate_reads_each_frame_once(ramp40):
    assert load_video(ramp40, fps=30.0, max_frames=64).indices == list(range(40))
    assert len(load_video(ramp40, fps=30.0).indices) == 32  # default cap


def test_short_video_yields_all_its_frames_once(tmp_path):
    clip = load_video(ramp_video(tmp_path / "short.mp4", 5), num_frames=8)
    assert clip.indices == [0, 1, 2, 3, 4]
    assert clip.frames.shape[0] == 5
    assert_frames_match_indices(clip)


def test_blank_has_same_shape_and_indices_but_black(ramp40):
    real = load_video(ramp40, num_frames=4)
    blank = load_video(ramp40, num_frames=4, blank=True)
    assert blank.frames.shape == real.frames.shape and blank.frames.dtype == np.uint8
    assert blank.indices == real.indices and blank.timestamps == real.timestamps
    assert not blank.frames.any() and real.frames.any()


@pytest.mark.parametrize("total,kwargs,expected_len", [
    (100, {"num_frames": 1}, 1),
    (100, {"num_frames": 100}, 100),
    (3, {"fps": 0.01}, 1),  # at least one frame
    (300, {"fps": 1.0, "max_frames": 4}, 4),
])
def test_sample_indices_are_in_range_sorted_and_unique(total, kwargs, expected_len):
    indices = sample_indices(total, 30.0, **kwargs)
    assert len(indices) == expected_len
    assert indices == sorted(set(indices)) and 0 <= indices[0] and indices[-1] < total


@pytest.mark.parametrize("kwargs,name", [
    ({"num_frames": 0}, "num_frames"), ({"fps": 0.0}, "fps"), ({"max_frames": 0}, "max_frames"),
    ({"timeout": 0}, "timeout"),
])
def test_bad_arguments_name_the_argument(ramp40, kwargs, name):
    with pytest.raises(ValueError, match=name):
        load_video(ramp40, **kwargs)


def test_header_claiming_missing_frames_warns():
    # Header says 300 frames but only 200 packets exist (a truncated file, or decord's spinning case).
    with pytest.warns(UserWarning, match="claims.mp4.*300 frames.*only 200"):
        warn_if_truncated(Path("claims.mp4"), 300, 200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_truncated(Path("ok.mp4"), 300, 300)
