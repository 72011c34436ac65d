"""Which frames to read: uniform over the whole video, by count or by rate."""
from __future__ import annotations


def sample_indices(total: int, native_fps: float, num_frames: int = 8, fps: float | None = None,
                   max_frames: int = 32) -> list[int]:
    """Indices of the frames to read from a video of `total` frames at `native_fps`.

    The video is cut into k equal segments and the frame at the middle of each is taken, so the
    samples are evenly spaced and symmetric about the middle of the video.
    - count mode (fps is None): k = num_frames.
    - rate mode: k = round(duration * fps), at least 1, at most max_frames; when capped, the frames
      still span the whole video (at a lower effective rate), not just its start.
    Either way k never exceeds `total`: a video shorter than requested yields every frame once
    (fewer frames than asked, never duplicates, so indices and timestamps stay honest).
    """
    if total <= 0:
        raise ValueError(f"total must be positive, got {total}")
    if fps is None:
        wanted = num_frames
    else:
        duration = total / native_fps if native_fps > 0 else float(total)
        wanted = min(max(1, round(duration * fps)), max_frames)
    count = min(wanted, total)
    return [int((i + 0.5) * total / count) for i in range(count)]


def check_sampling_args(num_frames: int, fps: float | None, max_frames: int, timeout: float) -> None:
    """ValueError naming the argument when one is out of range."""
    if fps is None and (not isinstance(num_frames, int) or num_frames < 1):
        raise ValueError(f"num_frames must be a positive int, got {num_frames!r}")
    if fps is not None and not fps > 0:
        raise ValueError(f"fps must be > 0 (or None to sample by count), got {fps!r}")
    if not isinstance(max_frames, int) or max_frames < 1:
        raise ValueError(f"max_frames must be a positive int, got {max_frames!r}")
    if not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
