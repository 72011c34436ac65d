"""Load uniformly sampled video frames with PyAV, recording exactly which frames were used."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import CorruptMediaError, EmptyMediaError
from .guard import bounds, run_guarded
from .probe import existing_file, probe
from .sampling import check_sampling_args


@dataclass
class VideoClip:
    """Sampled frames plus what they are: `frames[i]` is frame `indices[i]`, shown at `timestamps[i]` seconds."""

    frames: np.ndarray  # (T, H, W, 3) uint8
    indices: list[int]
    timestamps: list[float]
    native_fps: float
    duration: float  # seconds: end time of the last frame present
    path: str


def load_video(path: str | Path, num_frames: int = 8, fps: float | None = None, max_frames: int = 32,
               blank: bool = False, timeout: float = 10.0, threads: int | None = None) -> VideoClip:
    """Read frames sampled uniformly over the whole video (see `sampling.sample_indices`).

    Either `num_frames` frames, or (when `fps` is given) `fps` frames per second of video capped at
    `max_frames`; a video with fewer frames than that yields all its frames. `blank=True` returns
    black frames of exactly the shape (and indices/timestamps) the real ones would have, for
    modality-ablation probes. `threads` caps FFmpeg's decoding threads (None: its own choice, about
    one per core; the frames are the same either way). Decoding runs in a helper process that
    reports every few frames decoded; it is killed when `timeout` seconds pass without progress, or
    past a generous bound scaled to the file's size and the frames asked (MediaTimeoutError, see
    guard.py). Other failures raise the MediaError subclasses in `errors` (a failed decode is
    classified with ffprobe, itself bounded by `probe.PROBE_TIMEOUT`).
    """
    check_sampling_args(num_frames, fps, max_frames, timeout)
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive int (or None for FFmpeg's choice), got {threads!r}")
    path = existing_file(path)
    sampling = {"num_frames": num_frames, "fps": fps, "max_frames": max_frames}
    try:
        read = run_guarded("hallubench.loaders.decode:video_frames", str(path), sampling, threads, path=path,
                           timeout=timeout, **bounds(path, timeout, steps=num_frames if fps is None else max_frames))
    except CorruptMediaError:
        _raise_precise_error(path)
        raise
    frames = np.zeros_like(read["frames"]) if blank else read["frames"]
    return VideoClip(frames=frames, indices=read["indices"], timestamps=read["timestamps"],
                     native_fps=read["native_fps"], duration=read["end"], path=str(path))


def _raise_precise_error(path: Path) -> None:
    """After decoding failed: ffprobe tells an empty or video-less file from a corrupt one (and raises
    with its own reason when it cannot parse the file either). Returns if it finds nothing wrong."""
    info = probe(path)
    if info.video is None or info.video.packets == 0:
        raise EmptyMediaError(path, "contains no video frames")

