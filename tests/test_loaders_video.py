"""load_video: which frames are read (indices, timestamps, content), sampling modes, blank ablation."""
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

from hallubench.loaders import VideoClip, decode, load_video
from hallubench.loaders.sampling import sample_indices
from hallubench.builders.mini.synthetic import ffmpeg_binary, write_mp4
from hallubench.errors import ShortMediaError
from hallubench.loaders.complete import check_video_length

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


@pytest.mark.parametrize("threads", [None, 1, 3])
def test_decoding_threads_are_capped_as_asked_and_the_frames_stay_the_same(ramp40, threads, monkeypatch):
    seen = []
    index = decode._index
    monkeypatch.setattr(decode, "_index", lambda stream, path: seen.append(stream.thread_count) or index(stream, path))
    read = decode.video_frames(str(ramp40), {"num_frames": 6, "fps": None, "max_frames": 32}, threads)
    assert seen == [threads if threads is not None else 0]  # 0: FFmpeg picks
    chosen = load_video(ramp40, num_frames=6)  # FFmpeg's choice of threads
    capped = load_video(ramp40, num_frames=6, threads=threads)
    assert read["indices"] == capped.indices == chosen.indices
    np.testing.assert_array_equal(read["frames"], chosen.frames)
    np.testing.assert_array_equal(capped.frames, chosen.frames)


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
    ({"timeout": 0}, "timeout"), ({"threads": 0}, "threads"), ({"threads": 1.5}, "threads"),
])
def test_bad_arguments_name_the_argument(ramp40, kwargs, name):
    with pytest.raises(ValueError, match=name):
        load_video(ramp40, **kwargs)


@pytest.mark.parametrize("present,end,declared,short", [
    (200, 20.0, 30.0, True),    # header says 300 frames, 200 are there and they end at 20 of 30 s: truncated
    (200, 20.0, None, True),    # no declared length: the frame count alone decides
    (269, 26.9, 30.0, True),    # just below 90 %
    (270, 27.0, 30.0, False),   # 90 %: within what containers' own counts are off by
    (200, 29.9, 30.0, False),   # the frame count is off but the file runs its declared length: not truncated
    (300, 30.0, 30.0, False),
])
def test_a_header_claiming_missing_frames_is_short_only_when_the_file_ends_early(present, end, declared, short):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if short:
            with pytest.raises(ShortMediaError, match=f"claims.mp4: truncated: {present} frames decode of the 300 "
                                                      "frames its header declares \\(asked: 8 frames\\)"):
                check_video_length(Path("claims.mp4"), present, 300, end, declared, "8 frames")
        else:
            check_video_length(Path("claims.mp4"), present, 300, end, declared, "8 frames")


def ffmpeg_clip(path: Path, pts_expression: str) -> Path:
    """An H.264 clip with B-frames and a keyframe every 12 frames, its frame N shown at `pts_expression`
    seconds (FFmpeg's setpts; N the frame number), kept as variable frame rate."""
    subprocess.run([ffmpeg_binary(), "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=96x64:rate=30:duration=3",
                    "-vf", f"setpts=({pts_expression.replace(',', chr(92) + ',')})/TB", "-fps_mode", "vfr", "-c:v", "libx264", "-bf", "3",
                    "-g", "12", "-pix_fmt", "yuv420p", str(path)], check=True)
    return path


@pytest.fixture(scope="module")
def cfr_and_vfr_clips(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ffmpeg-clips")
    return {"cfr": ffmpeg_clip(folder / "cfr.mp4", "N/30"),
            # 30 fps for 40 frames, then 10 fps: sampling by time and by index differ
            "vfr": ffmpeg_clip(folder / "vfr.mp4", "if(lt(N,40),N/30,40/30+(N-40)/10)")}


@pytest.mark.parametrize("clip_name", ["cfr", "vfr"])
@pytest.mark.parametrize("sampling", [{"num_frames": 8}, {"num_frames": 90}, {"fps": 2.0}, {"fps": 12.0, "max_frames": 16}])
def test_frame_for_frame_what_the_decord_reader_returned(cfr_and_vfr_clips, clip_name, sampling):
    """load_video read with decord 0.6 until PyAV replaced it: same frame indices, timestamps, fps, duration
    and pixels, bit for bit (decord converts to RGB with FFmpeg's bicubic scaler, as the PyAV path asks for)."""
    decord = pytest.importorskip("decord", reason="the comparison needs the old reader: pip install hallubench[decord]")
    path = cfr_and_vfr_clips[clip_name]
    reader = decord.VideoReader(str(path), ctx=decord.cpu(0))
    reader.get_frame_timestamp(0)
    times = reader._frame_pts
    total = min(len(reader), len(times))
    indices = sample_indices(total, float(reader.get_avg_fps()), **sampling)
    expected = reader.get_batch(indices).asnumpy()

    clip = load_video(path, **sampling)
    assert clip.indices == indices
    np.testing.assert_allclose(clip.timestamps, times[indices, 0], atol=1e-6)
    assert clip.native_fps == pytest.approx(float(reader.get_avg_fps()))
    assert clip.duration == pytest.approx(float(times[total - 1, 1]), abs=1e-6)
    np.testing.assert_array_equal(clip.frames, expected)
