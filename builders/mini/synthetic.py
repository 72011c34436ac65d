"""Make small, real media files from code: frames with shapes, tones, mp4 with or without audio.

Used by the embedded mini benchmarks and by tests. Output is deterministic for the same
inputs (single-threaded, bit-exact encoding), so generated releases hash the same every run.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

COLORS = {
    "red": (220, 20, 20),
    "green": (20, 180, 40),
    "blue": (30, 60, 220),
    "yellow": (240, 220, 30),
    "white": (255, 255, 255),
    "black": (0, 0, 0),
}


def shape_frames(
    num_frames: int,
    shape: str = "circle",
    color: str = "red",
    background: str = "white",
    size: tuple[int, int] = (96, 128),
    moving: bool = True,
) -> np.ndarray:
    """Frames (T, H, W, 3) uint8 of one coloured `shape` ("circle" or "square"), drifting left to right."""
    height, width = size
    ys, xs = np.mgrid[0:height, 0:width]
    radius = min(height, width) // 5
    frames = np.empty((num_frames, height, width, 3), dtype=np.uint8)
    frames[:] = COLORS[background]
    for t in range(num_frames):
        cx = radius + (width - 2 * radius) * t / max(num_frames - 1, 1) if moving else width / 2
        cy = height / 2
        if shape == "circle":
            mask = (xs - cx) ** 2 + (ys - cy) ** 2 <= radius**2
        elif shape == "square":
            mask = (abs(xs - cx) <= radius) & (abs(ys - cy) <= radius)
        else:
            raise ValueError(f"shape must be 'circle' or 'square', got {shape!r}")
        frames[t][mask] = COLORS[color]
    return frames


def tone(freq: float, seconds: float, sr: int = 16000, amplitude: float = 0.3) -> np.ndarray:
    """A mono sine tone, float32."""
    t = np.arange(int(round(seconds * sr)), dtype=np.float64) / sr
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def write_wav(path: str | Path, samples: np.ndarray, sr: int = 16000) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, samples, sr, subtype="PCM_16")
    return path


def ffmpeg_binary() -> str:
    binary = shutil.which("ffmpeg")
    if binary is None:
        raise RuntimeError("FFmpeg is required to write video: install it with `apt-get install ffmpeg`.")
    return binary


def write_mp4(
    path: str | Path,
    frames: np.ndarray,
    fps: float = 8.0,
    audio: np.ndarray | None = None,
    sr: int = 16000,
    keyint: int | None = None,
) -> Path:
    """Encode frames (T, H, W, 3 uint8; H and W even) as H.264 mp4, with an AAC track when `audio` is given.
    `keyint` sets the maximum keyframe interval in frames (x264's default, 250, when None)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    num_frames, height, width, _ = frames.shape
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [ffmpeg_binary(), "-y", "-loglevel", "error", "-threads", "1",
               "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{width}x{height}", "-r", str(fps), "-i", "pipe:0"]
        if audio is not None:
            wav = write_wav(Path(tmp) / "audio.wav", audio, sr)
            cmd += ["-i", str(wav), "-c:a", "aac", "-b:a", "64k", "-shortest"]
        x264_params = "threads=1" if keyint is None else f"threads=1:keyint={keyint}"
        cmd += ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-preset", "veryfast", "-x264-params", x264_params,
                "-fflags", "+bitexact", "-flags:v", "+bitexact", "-flags:a", "+bitexact",
                "-map_metadata", "-1", "-movflags", "+faststart", str(path)]
        done = subprocess.run(cmd, input=np.ascontiguousarray(frames).tobytes(), capture_output=True)
        if done.returncode != 0:
            raise RuntimeError(f"ffmpeg could not write {path}: {done.stderr.decode(errors='replace').strip()}")
    return path
