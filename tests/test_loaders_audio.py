"""load_audio: mono float32 at the target rate from wav/flac/mp4, and the muted ablation."""
import subprocess

import librosa
import numpy as np
import pytest
import soundfile as sf

from hallubench.loaders import load_audio
from hallubench.builders.mini.synthetic import ffmpeg_binary, shape_frames, tone, write_mp4, write_wav


def peak_hz(samples, sr):
    spectrum = np.abs(np.fft.rfft(samples))
    return np.fft.rfftfreq(len(samples), 1 / sr)[np.argmax(spectrum)]


def test_wav_is_resampled_to_16k_keeping_length_and_pitch(tmp_path):
    path = write_wav(tmp_path / "a.wav", tone(440, 1.5, sr=44100), sr=44100)
    clip = load_audio(path)
    assert clip.sr == 16000 and clip.samples.dtype == np.float32 and clip.samples.ndim == 1
    assert len(clip.samples) == 24000 and clip.duration == pytest.approx(1.5)
    assert peak_hz(clip.samples, 16000) == pytest.approx(440, abs=2)
    assert clip.path == str(path)


def test_other_target_rate(tmp_path):
    clip = load_audio(write_wav(tmp_path / "a.wav", tone(300, 1.0)), sr=8000)
    assert clip.sr == 8000 and len(clip.samples) == 8000
    assert peak_hz(clip.samples, 8000) == pytest.approx(300, abs=2)


@pytest.mark.parametrize("suffix", [".wav", ".flac"])
def test_stereo_is_averaged_to_mono(tmp_path, suffix):
    left = tone(440, 1.0)
    path = tmp_path / f"stereo{suffix}"
    sf.write(path, np.stack([left, -0.5 * left], axis=1), 16000)
    clip = load_audio(path)
    assert clip.samples.shape == (16000,)
    np.testing.assert_allclose(clip.samples, 0.25 * left, atol=2e-4)  # (1 - 0.5) / 2, up to 16-bit rounding


@pytest.mark.parametrize("sr", [16000, 44100])
def test_mp4_audio_track_is_extracted(tmp_path, sr):
    path = write_mp4(tmp_path / "av.mp4", shape_frames(16), fps=8, audio=tone(660, 2.0, sr=sr), sr=sr)
    clip = load_audio(path)
    assert clip.sr == 16000 and clip.samples.dtype == np.float32
    assert clip.duration == pytest.approx(2.0, abs=1e-3)  # the track's declared length, AAC padding trimmed
    assert peak_hz(clip.samples, 16000) == pytest.approx(660, abs=2)
    rms = np.sqrt(np.mean(clip.samples[4000:-4000] ** 2))  # away from the codec's onset transient
    assert rms == pytest.approx(0.3 / np.sqrt(2), rel=0.05)


def test_mp4_track_matches_ffmpeg_decoding(tmp_path):
    path = write_mp4(tmp_path / "av.mp4", shape_frames(16), fps=8, audio=tone(500, 2.0), sr=16000)
    decoded = subprocess.run([ffmpeg_binary(), "-v", "error", "-i", str(path), "-vn", "-f", "f32le", "-"],
                             capture_output=True, check=True).stdout
    reference = np.frombuffer(decoded, dtype=np.float32)
    clip = load_audio(path)
    assert len(reference) >= len(clip.samples) == 32000
    np.testing.assert_allclose(clip.samples, reference[:32000], atol=1e-5)


@pytest.mark.parametrize("kind", ["wav", "mp4"])
def test_muted_is_silence_of_the_same_length(tmp_path, kind):
    audio = tone(440, 1.25, sr=22050)
    path = (write_wav(tmp_path / "a.wav", audio, sr=22050) if kind == "wav"
            else write_mp4(tmp_path / "a.mp4", shape_frames(10), fps=8, audio=audio, sr=22050))
    real, muted = load_audio(path), load_audio(path, muted=True)
    assert muted.samples.shape == real.samples.shape and muted.samples.dtype == np.float32
    assert muted.duration == real.duration == pytest.approx(1.25, abs=1e-3)
    assert not muted.samples.any() and real.samples.any()


def test_bad_rate_names_the_argument(tmp_path):
    with pytest.raises(ValueError, match="sr"):
        load_audio(write_wav(tmp_path / "a.wav", tone(440, 0.1)), sr=0)


def test_probe_runs_once_per_unchanged_file_and_again_after_a_change(tmp_path, monkeypatch):
    from hallubench.loaders import probe as probe_module

    path = write_mp4(tmp_path / "a.mp4", shape_frames(8, size=(64, 64)), 8, tone(440, 1.0))
    calls = []
    real_run = subprocess.run
    def counting_run(cmd, *args, **kwargs):
        calls.extend(cmd[:1] if cmd[0].endswith("ffprobe") else [])
        return real_run(cmd, *args, **kwargs)

    monkeypatch.setattr(probe_module.subprocess, "run", counting_run)
    first = probe_module.probe(path)
    assert probe_module.probe(path) == first and len(calls) == 1
    write_mp4(path, shape_frames(16, size=(64, 64)), 8, tone(440, 2.0))
    assert probe_module.probe(path).duration > first.duration and len(calls) == 2


def test_stereo_mp4_matches_ffmpeg_decoding_averaged_and_resampled(tmp_path):
    # 440 Hz left, 1000 Hz right at 44.1 kHz: exact length at 16 kHz, both tones in the mono mix.
    path = tmp_path / "stereo.mp4"
    subprocess.run([ffmpeg_binary(), "-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=3:sample_rate=44100",
                    "-f", "lavfi", "-i", "sine=f=1000:d=3:sample_rate=44100", "-filter_complex", "amerge=inputs=2",
                    "-c:a", "aac", str(path)], check=True)
    decoded = subprocess.run([ffmpeg_binary(), "-v", "error", "-i", str(path), "-f", "f32le", "-"],
                             capture_output=True, check=True).stdout
    native = np.frombuffer(decoded, dtype=np.float32).reshape(-1, 2)[:3 * 44100]
    reference = librosa.resample(native.mean(axis=1), orig_sr=44100, target_sr=16000)
    clip = load_audio(path)
    assert clip.samples.shape == (48000,) == reference.shape and clip.duration == 3.0
    np.testing.assert_allclose(clip.samples, reference, atol=1e-5)
    spectrum = np.abs(np.fft.rfft(clip.samples))
    loudest = np.fft.rfftfreq(48000, 1 / 16000)[np.argsort(spectrum)[-2:]]
    assert sorted(np.round(loudest)) == [440, 1000]


def test_mp4_audio_starts_no_ffprobe_process(tmp_path, monkeypatch):
    from hallubench.loaders import probe as probe_module

    path = write_mp4(tmp_path / "a.mp4", shape_frames(8, size=(64, 64)), 8, tone(440, 1.0))
    started = []
    monkeypatch.setattr(probe_module.subprocess, "run", lambda cmd, *a, **k: started.append(cmd))
    assert len(load_audio(path).samples) == 16000 and started == []


def test_track_buffer_keeps_every_chunk_and_grows_past_the_declared_length():
    from hallubench.loaders.decode import _Track

    track = _Track(channels=2, capacity=4)  # the track runs longer than declared
    chunks = [np.arange(6, dtype=np.float32).reshape(2, 3) + 10 * i for i in range(4)]
    for chunk in chunks:
        track.add(chunk)
    assert track.count == 12
    np.testing.assert_array_equal(track.samples[:, :12], np.concatenate(chunks, axis=1))


@pytest.mark.parametrize("name,subtype", [("pcm.wav", "PCM_16"), ("float.wav", "FLOAT"), ("pcm.aiff", "PCM_16")])
def test_a_truncated_wav_or_aiff_is_short_not_read_as_far_as_it_goes(tmp_path, name, subtype):
    """libsndfile reads a cut WAV or AIFF to where its bytes end, silently: the header's declared length decides."""
    from hallubench.errors import ShortMediaError

    whole = tmp_path / name
    sf.write(whole, tone(440, 2.0), 16000, subtype=subtype)
    assert load_audio(whole).duration == pytest.approx(2.0)
    cut = tmp_path / f"cut-{name}"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 4])
    with pytest.raises(ShortMediaError, match=rf"cut-{name}: truncated: 0\.\d+ s decode of the 2 s its header "
                                              r"declares \(asked: the whole track\)"):
        load_audio(cut)


def test_a_wav_written_as_a_stream_of_unknown_length_still_loads(tmp_path):
    path = tmp_path / "stream.wav"
    sf.write(path, tone(440, 1.0), 16000, subtype="PCM_16")
    data = bytearray(path.read_bytes())
    at = data.find(b"data")
    data[at + 4:at + 8] = b"\xff\xff\xff\xff"  # what a writer that cannot seek back leaves
    path.write_bytes(bytes(data))
    assert load_audio(path).duration == pytest.approx(1.0)
