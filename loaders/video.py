"""Load uniformly sampled video frames with decord, recording exactly which frames were used."""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import EmptyMediaError
from .guard import run_guarded
from .probe import PROBE_TIMEOUT, MediaInfo, probe
from .sampling import check_sampling_args


@dataclass
class VideoClip:
    """Sampled frames plus what they are: `frames[i]` is frame `indices[i]`, shown at `timestamps[i]` seconds."""

    frames: np.ndarray  # (T, H, W, 3) uint8
    indices: list[int]
    timestamps: list[float]
    native_fps: float
    duration: float  # seconds of video in the file
    path: str


def load_video(path: str | Path, num_frames: int = 8, fps: float | None = None, max_frames: int = 32,
               blank: bool = False, timeout: float = 30.0) -> VideoClip:
    """Read frames sampled uniformly over the whole video (see `sampling.sample_indices`).

    Either `num_frames` frames, or (when `fps` is given) `fps` frames per second of video capped at
    `max_frames`; a video with fewer frames than that yields all its frames. `blank=True` returns
    black frames of exactly the shape (and indices/timestamps) the real ones would have, for
    modality-ablation probes. Probing and decoding together take at most `timeout` seconds, else
    MediaTimeoutError (decoding runs in a helper process that is then killed); other failures raise
    the MediaError subclasses in `errors`.
    """
    check_sampling_args(num_frames, fps, max_frames, timeout)
    started = time.monotonic()
    info = probe(path, timeout=min(timeout, PROBE_TIMEOUT))
    if info.video is None or info.video.packets == 0:
        raise EmptyMediaError(info.path, "contains no video frames")
    sampling = {"num_frames": num_frames, "fps": fps, "max_frames": max_frames}
    frames, indices, timestamps, native_fps = run_guarded(
        "hallubench.loaders.decode:video_frames", str(info.path), sampling, info.video.packets,
        path=info.path, timeout=timeout - (time.monotonic() - started))
    if blank:
        frames = np.zeros_like(frames)
    return VideoClip(frames=frames, indices=indices, timestamps=timestamps, native_fps=native_fps,
                     duration=covered_duration(info, native_fps), path=str(info.path))


def covered_duration(info: MediaInfo, native_fps: float) -> float:
    """Seconds of video actually present. Warns when the header claims much more than the frames
    present (a truncated file, or the frame-count mismatch that makes decord spin): sampling then
    covered only the frames present."""
    claimed = info.video.duration or info.duration
    present = info.video.packets / native_fps if native_fps > 0 else None
    if not (claimed and present):
        return claimed or present or 0.0
    if present < 0.9 * claimed:
        warnings.warn(f"{info.path}: the header claims {claimed:.2f} s of video but only {present:.2f} s of frames "
                      "are present (truncated?); frames were sampled over what is present", stacklevel=3)
    return min(claimed, present)
