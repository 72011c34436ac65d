"""Speed of `load_audio` on an mp4's soundtrack against every decoder in our dependencies, on the
same file in the same run.

Run: python tests/perf/bench_audio.py [--seconds 60] [--repeats 5]   (~1 min; not collected by pytest)

The clip: 360p testsrc2 video with a stereo 44.1 kHz AAC track. Every method below returns what
`load_audio` does, mono float32 at 16 kHz, unless marked "native" (decoding alone, no mix or resample):
  load_audio:       PyAV in the guarded helper, samples back through shared memory, librosa/soxr resample;
  PyAV native:      PyAV decoding the track in this process (the fastest decoder: the bar to meet);
  PyAV + resample:  the same, then channel mean and librosa.resample, in this process;
  decord + resample: decord's AudioReader (what load_audio used before), then the same resample;
  librosa.load:     librosa's own loader (audioread/FFmpeg for mp4);
  ffmpeg CLI:       the ffmpeg command decoding, mixing and resampling to a pipe.
It prints medians of interleaved rounds, each method's time over load_audio's, and load_audio's over
the fastest decoder. libsndfile (soundfile) cannot read AAC in mp4, so it is not a candidate.
"""
from __future__ import annotations

import argparse
import subprocess
import tempfile
import warnings
from pathlib import Path

import av
import decord
import librosa
import numpy as np
from media_clips import interleaved, make_clip, median

from hallubench.loaders import load_audio
from hallubench.builders.mini.synthetic import ffmpeg_binary


def pyav_native(path: Path) -> np.ndarray:
    with av.open(str(path)) as container:
        return np.concatenate([frame.to_ndarray() for frame in container.decode(audio=0)], axis=1)


def to_16k_mono(channels: np.ndarray, rate: int) -> np.ndarray:
    return librosa.resample(channels.mean(axis=0), orig_sr=rate, target_sr=16000)


def decord_native(path: Path) -> np.ndarray:
    return decord.AudioReader(str(path), ctx=decord.cpu(0), sample_rate=44100, mono=False)[:].asnumpy()


def ffmpeg_cli(path: Path) -> np.ndarray:
    out = subprocess.run([ffmpeg_binary(), "-v", "error", "-i", str(path), "-vn", "-ac", "1", "-ar", "16000",
                          "-f", "f32le", "-"], capture_output=True, check=True).stdout
    return np.frombuffer(out, dtype=np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=60, help="length of the clip")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds (median reported)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", module="librosa")  # audioread fallback notice
    decord.logging.set_level(decord.logging.QUIET)
    with tempfile.TemporaryDirectory() as tmp:
        path = make_clip(Path(tmp), args.seconds, 360, 250)
        expected = len(load_audio(path).samples)  # also starts the helper outside the timings
        assert expected == args.seconds * 16000, expected
        candidates = {
            "load_audio": lambda: load_audio(path),
            "PyAV native": lambda: pyav_native(path),
            "PyAV + resample": lambda: to_16k_mono(pyav_native(path), 44100),
            "decord + resample": lambda: to_16k_mono(decord_native(path), 44100),
            "librosa.load": lambda: librosa.load(path, sr=16000),
            "ffmpeg CLI": lambda: ffmpeg_cli(path),
        }
        times = {name: median(values) for name, values in interleaved(candidates, args.repeats).items()}
    print(f"{args.seconds} s mp4, stereo 44.1 kHz AAC -> mono 16 kHz ({expected} samples), median of {args.repeats}")
    print(f"{'method':18s} {'seconds':>8s} {'vs load_audio':>13s}")
    for name, seconds in times.items():
        print(f"{name:18s} {seconds:8.3f} {seconds / times['load_audio']:12.2f}x")
    fastest = min((seconds, name) for name, seconds in times.items() if name != "load_audio")
    print(f"load_audio / fastest decoder ({fastest[1]}): {times['load_audio'] / fastest[0]:.2f}x")


if __name__ == "__main__":
    main()
