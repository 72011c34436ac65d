"""Every way a media file can be bad raises its own MediaError subclass naming the file, quickly."""
import pickle
import subprocess
import time

import numpy as np
import pytest

from hallubench.errors import ShortMediaError
from hallubench.loaders import (CorruptMediaError, EmptyMediaError, MediaError, MediaNotFoundError,
                                MediaTimeoutError, NoAudioTrackError, load_audio, load_video)
from hallubench.builders.mini.synthetic import ffmpeg_binary, shape_frames, tone, write_mp4, write_wav

NO_HANG_BOUND = 20.0  # seconds; generous on a loaded 2-core machine, a hang would be unbounded


@pytest.fixture(scope="module")
def media(tmp_path_factory):
    """Good files and bad variants of them, keyed by name."""
    root = tmp_path_factory.mktemp("media")
    good = write_mp4(root / "good.mp4", shape_frames(24), fps=8, audio=tone(440, 3.0))
    data = good.read_bytes()
    mdat = data.find(b"mdat")
    rng = np.random.default_rng(0)
    files = {"good": good, "silent": write_mp4(root / "silent.mp4", shape_frames(24), fps=8)}

    def put(name, payload):
        files[name] = root / f"{name}.mp4"
        files[name].write_bytes(payload)

    put("empty", b"")
    put("random", rng.integers(0, 256, 6000, dtype=np.uint8).tobytes())
    put("truncated", data[: len(data) // 3])
    put("header_then_garbage", data[:64] + rng.integers(0, 256, 20000, dtype=np.uint8).tobytes())
    put("garbage_frames", data[: mdat + 8] + rng.integers(0, 256, len(data) - mdat - 8, dtype=np.uint8).tobytes())
    ffmpeg = ffmpeg_binary()
    files["no_streams"] = root / "no_streams.mp4"
    subprocess.run([ffmpeg, "-v", "error", "-f", "lavfi", "-i", "color=s=64x48:r=8", "-frames:v", "0",
                    "-c:v", "libx264", str(files["no_streams"])], check=True)
    files["audio_only"] = root / "audio_only.mp4"
    subprocess.run([ffmpeg, "-v", "error", "-f", "lavfi", "-i", "sine=d=1", "-c:a", "aac",
                    str(files["audio_only"])], check=True)
    files["empty_wav"] = write_wav(root / "empty.wav", np.zeros(0, dtype=np.float32))
    files["garbage_wav"] = root / "garbage.wav"
    files["garbage_wav"].write_bytes(b"RIFF" + rng.integers(0, 256, 3000, dtype=np.uint8).tobytes())
    return files


def assert_raises_naming(error_type, load, path):
    started = time.monotonic()
    with pytest.raises(error_type) as caught:
        load(path)
    assert time.monotonic() - started < NO_HANG_BOUND
    assert caught.value.path == str(path) and str(path) in str(caught.value)
    assert isinstance(caught.value, MediaError)
    return caught.value


@pytest.mark.parametrize("load", [load_video, load_audio])
def test_missing_file(tmp_path, load):
    error = assert_raises_naming(MediaNotFoundError, load, tmp_path / "absent.mp4")
    assert isinstance(error, FileNotFoundError)


@pytest.mark.parametrize("name,load", [
    ("empty", load_video), ("empty", load_audio), ("empty_wav", load_audio),
    ("no_streams", load_video), ("no_streams", load_audio), ("audio_only", load_video),
])
def test_zero_length_media(media, name, load):
    assert_raises_naming(EmptyMediaError, load, media[name])


@pytest.mark.parametrize("name,load", [
    *[(name, load) for name in ("random", "header_then_garbage", "garbage_frames") for load in (load_video, load_audio)],
    ("truncated", load_audio),
])
def test_corrupt_mp4_fails_fast(media, name, load):
    assert_raises_naming(CorruptMediaError, load, media[name])


def test_a_truncated_video_is_a_short_media_error_naming_what_decoded(media, recwarn):
    # The first third of good.mp4: its index claims 24 frames, the data holds 7 of them.
    with pytest.raises(ShortMediaError, match=r"truncated\.mp4: truncated: 7 frames decode of the 24 frames its "
                                              r"header declares \(asked: 8 frames\)"):
        load_video(media["truncated"])
    assert not recwarn.list


def test_corrupt_wav(media):
    assert_raises_naming(CorruptMediaError, load_audio, media["garbage_wav"])


def test_video_without_audio_track(media):
    error = assert_raises_naming(NoAudioTrackError, load_audio, media["silent"])
    assert "no audio track" in str(error)
    with pytest.raises(NoAudioTrackError):
        load_audio(media["silent"], muted=True)  # nothing to measure the silence against
    assert load_video(media["silent"]).frames.shape[0] == 8  # the video itself is fine


def test_timeout_stops_real_decoding(media):
    # Far below what decoding can take: the load must be stopped, not finish late.
    with pytest.raises(MediaTimeoutError, match="good.mp4"):
        load_video(media["good"], timeout=1e-4)


def test_errors_survive_pickling():  # e.g. raised inside a DataLoader worker
    for error_type in (MediaNotFoundError, CorruptMediaError, NoAudioTrackError, EmptyMediaError, MediaTimeoutError):
        copy = pickle.loads(pickle.dumps(error_type("x.mp4", "why")))
        assert type(copy) is error_type and copy.path == "x.mp4" and str(copy) == "x.mp4: why"


def test_message_only_form_for_errors_about_no_single_file():
    error = pickle.loads(pickle.dumps(MediaError("row 'r1' has no video file")))
    assert error.path is None and str(error) == "row 'r1' has no video file"
