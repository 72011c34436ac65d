"""decord calls, run inside the guard's helper process (see guard.py): never call these directly."""
from __future__ import annotations

import re
from bisect import bisect_right
from contextlib import contextmanager

import decord
import numpy as np

from .errors import CorruptMediaError, EmptyMediaError, NoAudioTrackError
from .helper import output_array, report_progress
from .sampling import sample_indices

STEP = 8  # frames decoded between two progress reports

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
        report_progress(0)  # opened: demuxing the whole file is the longest step without a report
        indices = sample_indices(total, native_fps, **sampling)
        frames = read_frames(reader, indices)
    return {"frames": frames, "indices": indices, "timestamps": times[indices, 0].astype(float).tolist(),
            "native_fps": native_fps, "header_frames": len(reader), "present_frames": len(times),
            "end": float(times[total - 1, 1])}


def read_frames(reader: decord.VideoReader, indices: list[int]) -> np.ndarray:
    """What `reader.get_batch(indices)` returns, decoded in steps the watchdog can see: like decord's
    accurate seek, jump to the keyframe at or before an index unless the reader is already in its
    group of pictures, decode forward STEP frames at a time, then read the frame into the output.
    (`seek`, not `seek_accurate`: after the latter decord 0.6 ignores the next `skip_frames`.)"""
    keys = reader.get_key_indices()
    frames, position, decoded = None, None, 0  # position: the index reader.next() returns
    for slot, index in enumerate(indices):
        key = keys[bisect_right(keys, index) - 1] if keys and keys[0] <= index else 0
        if position is None or not key <= position <= index:
            reader.seek(key)
            position = key
        while position < index:
            step = min(STEP, index - position)
            reader.skip_frames(step)
            position, decoded = position + step, decoded + step
            report_progress(decoded)
        frame = reader.next().asnumpy()
        position, decoded = position + 1, decoded + 1
        if frames is None:
            frames = output_array((len(indices), *frame.shape), frame.dtype)
        frames[slot] = frame
        report_progress(decoded)
    return frames


def audio_track(path: str, sample_rate: int) -> np.ndarray:
    """The first audio stream, kept at its native `sample_rate`: (channels, samples) float32."""
    with _decord_errors(path, "audio track"):
        reader = decord.AudioReader(path, ctx=decord.cpu(0), sample_rate=sample_rate, mono=False)
        samples = reader[:].asnumpy().astype(np.float32, copy=False)
    return samples
