"""Clips for the media benches, made with FFmpeg's test sources (moving, textured: they cost the
decoder about what real footage does), and interleaved timing. Not a test module."""
from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path

from hallubench.builders.mini.synthetic import ffmpeg_binary


def make_clip(folder: Path, seconds: int, height: int, keyint: int, fps: int = 30, audio: bool = True) -> Path:
    """An H.264 mp4 (testsrc2 video, `keyint` frames between keyframes) with a stereo 44.1 kHz AAC track."""
    path = folder / f"{height}p_{seconds}s_gop{keyint}.mp4"
    width = height * 16 // 9 // 2 * 2
    video = f"testsrc2=s={width}x{height}:r={fps}:d={seconds}"
    cmd = [ffmpeg_binary(), "-v", "error", "-y", "-f", "lavfi", "-i", video]
    if audio:
        cmd += ["-f", "lavfi", "-i", f"sine=f=440:d={seconds}:sample_rate=44100", "-ac", "2", "-c:a", "aac"]
    cmd += ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-x264-params", f"keyint={keyint}",
            str(path)]
    subprocess.run(cmd, check=True)
    return path


def interleaved(candidates: dict, repeats: int) -> dict[str, list[float]]:
    """Seconds of each candidate `name -> function()` per round, running them in turn `repeats`
    times (in reverse order every other round), so a change in the machine's load hits all alike."""
    times = {name: [] for name in candidates}
    for round_ in range(repeats):
        for name in list(candidates)[::-1 if round_ % 2 else 1]:
            started = time.perf_counter()
            candidates[name]()
            times[name].append(time.perf_counter() - started)
    return times


def median(values: list[float]) -> float:
    return statistics.median(values)
