"""Decoder calls run inside the guard's helper process (see guard.py): video frames with decord,
audio tracks with PyAV (FFmpeg's libraries in this process, which also read the track's rate and
declared duration: no ffprobe start per file). They report progress as they decode; call them
through `run_guarded`, not directly."""
from __future__ import annotations

import re
from bisect import bisect_right
from contextlib import contextmanager

import av
import decord
import numpy as np

from .errors import CorruptMediaError, EmptyMediaError, NoAudioTrackError
from .helper import output_array, report_progress
from .sampling import sample_indices

STEP = 8  # frames decoded between two progress reports
PACKET_STEP = 256  # audio frames decoded between two progress reports (~6 s of AAC at 44.1 kHz)

decord.logging.set_level(decord.logging.QUIET)


@contextmanager
def _decord_errors(path: str, what: str):
    """Turn decord's exceptions into MediaErrors naming the file."""
    try:
        yield
    except (decord.DECORDError, RuntimeError) as error:  # RuntimeError: decord could not open the container
        lines = [line for line in str(error).strip().splitlines() if line.strip()]
        reason = re.sub(r"^(\[[\d:]+\] \S+: )+", "", lines[-1])[:300] if lines else type(error).__name__
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


@contextmanager
def _av_errors(path: str, what: str):
    """Turn PyAV's exceptions into MediaErrors naming the file."""
    try:
        yield
    except (av.error.FFmpegError, ValueError) as error:  # ValueError: PyAV met a frame it cannot convert
        reason = getattr(error, "strerror", None) or str(error)
        raise CorruptMediaError(path, f"cannot decode the {what} ({reason[:300]}); re-download or re-encode it "
                                      "with ffmpeg") from None


def _seconds(value, time_base) -> float | None:
    return float(value * time_base) if value is not None and time_base is not None else None


class _Track:
    """Decoded chunks appended into one (channels, N) output array (shared memory in the helper),
    sized from the declared duration and grown if the track runs longer."""

    def __init__(self, channels: int, capacity: int) -> None:
        self.samples, self.count = output_array((channels, max(capacity, 1)), np.float32), 0

    def add(self, chunk: np.ndarray) -> None:  # (channels, n)
        end = self.count + chunk.shape[1]
        if end > self.samples.shape[1]:
            grown = output_array((self.samples.shape[0], 2 * end), np.float32)
            grown[:, :self.count] = self.samples[:, :self.count]
            self.samples = grown
        self.samples[:, self.count:end] = chunk
        self.count = end


def audio_track(path: str) -> dict:
    """The first audio stream at its own rate, decoded straight into the output: {"samples":
    (channels, capacity) float32 whose first "count" columns are the track, "count", "rate",
    "declared": the stream's declared duration in seconds, else the container's, else None}."""
    with _av_errors(path, "audio track"), av.open(path) as container:
        if not container.streams:  # empty or damaged: the caller asks ffprobe which
            raise CorruptMediaError(path, "no audio or video stream could be parsed; re-download or re-encode it")
        if not container.streams.audio:
            raise NoAudioTrackError(path, "has no audio track")
        stream = container.streams.audio[0]
        declared = _seconds(stream.duration, stream.time_base)
        if declared is None and container.duration is not None:
            declared = container.duration / av.time_base
        track = _Track(stream.channels, round((declared or 10.0) * stream.rate) + 4096)  # + AAC padding
        to_float = av.AudioResampler(format="fltp", layout=stream.layout, rate=stream.rate)  # a no-op for AAC
        for count, frame in enumerate(container.decode(stream)):
            for converted in to_float.resample(frame):
                track.add(converted.to_ndarray())
            if count % PACKET_STEP == 0:
                report_progress(count)
        for converted in to_float.resample(None):
            track.add(converted.to_ndarray())
    return {"samples": track.samples, "count": track.count, "rate": stream.rate, "declared": declared}
