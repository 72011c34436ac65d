"""decord calls, run inside the guard's helper process (see guard.py): never call these directly."""
from __future__ import annotations

import re
from contextlib import contextmanager

import decord
import numpy as np

from .errors import CorruptMediaError, EmptyMediaError, NoAudioTrackError
from .sampling import sample_indices

decord.logging.set_level(decord.logging.QUIET)


@contextmanager
def _decord_errors(path: str, what: str):
    """Turn decord's exceptions into MediaErrors naming the file."""
    try:
        yield
    except (decord.DECORDError, RuntimeError) as error:  # RuntimeError: decord could not open the container
        lines = [line for line in str(error).strip().splitlines() if line.strip()]
        reason = re.sub(r"^(\[[\d:]+\] \S+: )+", "", lines[-1])[:300] if lines else type(error).__name__
        if "find audio stream" in reason:
            raise NoAudioTrackError(path, "has no audio track") from None
        raise CorruptMediaError(path, f"cannot decode the {what} ({reason}); re-download or re-encode it "
                                      "with ffmpeg") from None


def video_frames(path: str, sampling: dict) -> dict:
    """The frames `sample_indices(**sampling)` picks, with their indices and start times, the
    average fps, how many frames the header claims and how many exist, and where the last one ends."""
    with _decord_errors(path, "video"):
        try:
            reader = decord.VideoReader(path, ctx=decord.cpu(0))
        except AssertionError:  # decord asserts a positive frame count
            raise EmptyMediaError(path, "video has no frames") from None
        # Opening demuxes every packet and records one (start, stop) per frame present. len() instead
        # trusts the header, and a frame past the real end can make get_batch spin (decord issue 373).
        reader.get_frame_timestamp(0)
        times = reader._frame_pts  # private, but fixed by the decord==0.6.0 pin
        total = min(len(reader), len(times))
        if total == 0:
            raise EmptyMediaError(path, "video has no frames")
        native_fps = float(reader.get_avg_fps())
        indices = sample_indices(total, native_fps, **sampling)
        frames = reader.get_batch(indices).asnumpy()
    return {"frames": frames, "indices": indices, "timestamps": times[indices, 0].astype(float).tolist(),
            "native_fps": native_fps, "header_frames": len(reader), "present_frames": len(times),
            "end": float(times[total - 1, 1])}


def audio_track(path: str, sample_rate: int) -> np.ndarray:
    """The first audio stream, kept at its native `sample_rate`: (channels, samples) float32."""
    with _decord_errors(path, "audio track"):
        reader = decord.AudioReader(path, ctx=decord.cpu(0), sample_rate=sample_rate, mono=False)
        samples = reader[:].asnumpy().astype(np.float32, copy=False)
    return samples
