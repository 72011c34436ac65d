"""Speed of uniform frame sampling vs decoding every frame, on the same files in the same run.

Run: python tests/perf/bench_video_sampling.py   (not collected by pytest: the name is not test_*)

For each video it prints frames delivered per second for
  - all:      every frame decoded (decord, in this process), the baseline;
  - uniform-k: k uniformly sampled frames (decord get_batch in this process, as the helper does);
  - load-k:    the full `load_video` path: the same decoding in the guarded helper process, plus
               the transfer of the frames back;
and ratios: wall-time speed-up of sampling over decoding everything, frames/s of sampling over
decoding everything, and the guard's cost (load-k time over uniform-k time). It also times one
ffprobe run, which load_video spends only to explain a failure (load_audio spends it on mp4 tracks).
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import decord
import numpy as np

from hallubench.loaders import load_video
from hallubench.loaders.probe import probe
from hallubench.loaders.sampling import sample_indices
from hallubench.loaders.synthetic import shape_frames, write_mp4

REPEATS = 5
CHUNK = 64  # frames per get_batch when decoding everything, to bound memory


def textured_video(path: Path, seconds: float, fps: float, size: tuple[int, int], keyint: int | None) -> Path:
    """A moving shape over a drifting noise texture: costs the decoder about what real footage does."""
    count = int(seconds * fps)
    height, width = size
    texture = np.random.default_rng(0).integers(0, 60, (height, width + count), dtype=np.uint8)
    frames = shape_frames(count, size=size)
    for t in range(count):
        frames[t] = np.clip(frames[t].astype(np.int16) - texture[:, t:t + width, None], 0, 255)
    return write_mp4(path, frames, fps=fps, keyint=keyint)


def median_time(function) -> float:
    """Median wall time of `function()` over REPEATS runs."""
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def decode_all(path: Path) -> None:
    reader = decord.VideoReader(str(path), ctx=decord.cpu(0))
    for start in range(0, len(reader), CHUNK):
        reader.get_batch(list(range(start, min(start + CHUNK, len(reader))))).asnumpy()


def decode_uniform(path: Path, k: int) -> None:
    reader = decord.VideoReader(str(path), ctx=decord.cpu(0))
    reader.get_batch(sample_indices(len(reader), reader.get_avg_fps(), num_frames=k)).asnumpy()


def main() -> None:
    decord.logging.set_level(decord.logging.QUIET)
    specs = [  # name, seconds, fps, (height, width), keyframe interval
        ("360p 10s 30fps gop=30", 10, 30, (360, 640), 30),
        ("360p 10s 30fps gop=250", 10, 30, (360, 640), None),
        ("240p 30s 25fps gop=50", 30, 25, (240, 320), 50),
    ]
    load_video(textured_video(Path(tempfile.mkdtemp()) / "warm.mp4", 1, 8, (64, 64), None))  # start the helper
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'video':24s} {'frames':>6s} {'all f/s':>8s} | {'k':>2s} {'uniform f/s':>11s} {'load f/s':>9s} | "
              f"{'speed-up':>8s} {'f/s ratio':>9s} {'guard cost':>10s}")
        for name, seconds, fps, size, keyint in specs:
            path = textured_video(Path(tmp) / f"{name.replace(' ', '_')}.mp4", seconds, fps, size, keyint)
            total = len(decord.VideoReader(str(path)))
            t_all = median_time(lambda: decode_all(path))
            for k in (8, 32):
                t_uniform = median_time(lambda: decode_uniform(path, k))
                t_load = median_time(lambda: load_video(path, num_frames=k))
                print(f"{name:24s} {total:6d} {total / t_all:8.0f} | {k:2d} {k / t_uniform:11.0f} {k / t_load:9.0f} | "
                      f"{t_all / t_uniform:7.1f}x {(k / t_uniform) / (total / t_all):8.2f}x {t_load / t_uniform:9.2f}x")
            t_probe = median_time(lambda: probe(path))
            print(f"{'':24s} one ffprobe run: {t_probe * 1000:.0f} ms")


if __name__ == "__main__":
    main()
