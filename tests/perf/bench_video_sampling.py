"""Speed of uniform frame sampling against the fastest ways to decode every frame, and the cost of
the guard around it, on the same files in the same run.

Run: python tests/perf/bench_video_sampling.py [--long] [--repeats N]   (not collected by pytest)
Default (~2 min on a busy 2-core machine): 10 s 360p and 15 s 720p clips, keyframes every 30 and
every 250 frames. --long adds 3-minute 720p clips (several minutes more).

Per clip, timed in interleaved rounds (median of --repeats), every method giving RGB uint8 arrays:
  decode-all baselines: decord reading frame after frame (`next`), PyAV decoding every frame with
      FFmpeg's threading, and the ffmpeg command line writing raw RGB to a pipe; the fastest is "best";
  sampled, k = 8 and 32: the helper's own function (decode.video_frames) called in this process
      ("in-process") and `load_video` (the same call in the guarded helper, frames back through
      shared memory);
and ratios: load_video speed-up over the best decode-all, and the guard's cost (median over rounds
of load_video time over in-process time in the same round; the sampled pair runs 3x --repeats
rounds). Then the cost of one ffprobe run, cold (first look at the file: a process start and a
demux) and warm (the cached answer); load_video spends it only to explain a failure.
"""
from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import av
import decord
import numpy as np
from media_clips import interleaved, make_clip, median

from hallubench.loaders import load_video
from hallubench.loaders.decode import video_frames
from hallubench.loaders.probe import _probe, probe
from hallubench.builders.mini.synthetic import ffmpeg_binary

SPECS = [(10, 360, 30), (10, 360, 250), (15, 720, 30), (15, 720, 250)]  # seconds, height, keyframe interval
LONG_SPECS = [(180, 720, 30), (180, 720, 250)]


def decord_sequential(path: Path) -> None:
    reader = decord.VideoReader(str(path), ctx=decord.cpu(0))
    for _ in range(len(reader)):
        reader.next().asnumpy()


def pyav_all(path: Path) -> None:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for frame in container.decode(stream):
            frame.to_ndarray(format="rgb24")


def ffmpeg_all(path: Path) -> None:
    subprocess.run([ffmpeg_binary(), "-v", "error", "-i", str(path), "-an", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                   stdout=subprocess.DEVNULL, check=True)


def probe_costs(path: Path, repeats: int) -> tuple[float, float]:
    cold, warm = [], []
    for _ in range(repeats):
        _probe.cache_clear()
        started = time.perf_counter()
        probe(path)
        cold.append(time.perf_counter() - started)
        started = time.perf_counter()
        probe(path)
        warm.append(time.perf_counter() - started)
    return float(np.median(cold)), float(np.median(warm))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--long", action="store_true", help="add 3-minute 720p clips")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds per clip (median reported)")
    args = parser.parse_args()
    decord.logging.set_level(decord.logging.QUIET)
    with tempfile.TemporaryDirectory() as tmp:
        load_video(make_clip(Path(tmp), 1, 64, 30, audio=False))  # start the helper outside the timings
        print(f"{'clip':18s} {'frames':>6s} | {'decord seq':>10s} {'PyAV all':>8s} {'ffmpeg all':>10s} | {'k':>2s} "
              f"{'in-process':>10s} {'load_video':>10s} | {'vs best all':>11s} {'guard cost':>10s}")
        for seconds, height, keyint in SPECS + (LONG_SPECS if args.long else []):
            path = make_clip(Path(tmp), seconds, height, keyint)
            frames = len(decord.VideoReader(str(path)))
            all_times = interleaved({"decord": lambda: decord_sequential(path), "pyav": lambda: pyav_all(path),
                                     "ffmpeg": lambda: ffmpeg_all(path)}, args.repeats)
            t = {name: median(values) for name, values in all_times.items()}
            best = min(t.values())
            for k in (8, 32):
                sampled = interleaved({
                    "in": lambda k=k: video_frames(str(path), {"num_frames": k, "fps": None, "max_frames": k}),
                    "load": lambda k=k: load_video(path, num_frames=k)}, 3 * args.repeats)
                inside, load = median(sampled["in"]), median(sampled["load"])
                guard = median([b / a for a, b in zip(sampled["in"], sampled["load"])])  # paired: same round
                print(f"{path.stem:18s} {frames:6d} | {t['decord']:9.2f}s {t['pyav']:7.2f}s {t['ffmpeg']:9.2f}s | "
                      f"{k:2d} {inside:9.3f}s {load:9.3f}s | {best / load:10.1f}x {guard:9.2f}x")
            cold, warm = probe_costs(path, args.repeats)
            print(f"{'':18s} ffprobe: cold {cold * 1000:.0f} ms, warm (cached) {warm * 1e6:.0f} us")


if __name__ == "__main__":
    main()
