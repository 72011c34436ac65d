"""Decoder calls run inside the guard's helper process (see guard.py), both with PyAV (FFmpeg's libraries in this
process: no ffprobe start per file, and wheels for every platform): sampled video frames, and whole audio tracks
(with the track's rate and declared duration). They report progress as they decode; call them through
`run_guarded`, not directly.

Video frames are numbered as decord 0.6 (hallubench's reader before) numbered them, so indices and timestamps
stay comparable across releases (tests/test_loaders_video.py checks frame for frame against decord): frame i is
the packet with the i-th smallest pts, starting at pts * time_base seconds, ending at (pts + duration) *
time_base; the header's frame count is the stream's nb_frames; the fps its average rate.
"""
from __future__ import annotations

from bisect import bisect_right
from contextlib import contextmanager
from dataclasses import dataclass

import av
import numpy as np

from .complete import WHOLE, asked_frames, check_video_length
from .errors import CorruptMediaError, EmptyMediaError, NoAudioTrackError
from .helper import output_array, report_progress
from .sampling import sample_indices

STEP = 8  # frames decoded between two progress reports
PACKET_STEP = 256  # audio frames (or video packets demuxed) between two progress reports


@dataclass
class _Index:
    """Every frame present, in presentation order: its pts, start and end in seconds; which are keyframes."""

    pts: list[int]
    times: np.ndarray  # (frames, 2) float: start, end
    keys: list[int]  # frame numbers of the keyframes, ascending


def _index(stream, path: str) -> _Index:
    """Demux every packet of `stream` (no decoding), as decord does on opening a file."""
    packets = []
    for count, packet in enumerate(stream.container.demux(stream)):
        pts = packet.pts if packet.pts is not None else packet.dts
        if pts is not None and packet.size:  # the empty packet that ends the stream has neither
            packets.append((pts, packet.duration or 0, packet.is_keyframe))
        if count % PACKET_STEP == 0:
            report_progress(0)
    if not packets:
        raise EmptyMediaError(path, "video has no frames")
    packets.sort(key=lambda packet: packet[0])
    base = float(stream.time_base)
    times = np.array([(pts * base, (pts + duration) * base) for pts, duration, _ in packets], dtype=np.float64)
    return _Index([pts for pts, *_ in packets], times, [i for i, (*_, key) in enumerate(packets) if key])


def _header_frames(stream, fps: float, present: int) -> int:
    """The frame count the header claims: nb_frames, else estimated from the declared duration."""
    if stream.frames:
        return stream.frames
    if stream.duration is not None and stream.time_base is not None and fps > 0:
        return round(float(stream.duration * stream.time_base) * fps)
    return present


def video_frames(path: str, sampling: dict, threads: int | None = None) -> dict:
    """The frames `sample_indices(**sampling)` picks, with their indices and start times, the
    average fps and where the last one ends, decoded on `threads` FFmpeg threads (None: FFmpeg's
    choice, about one per core);
    ShortMediaError, before any decoding, for a truncated file."""
    with _av_errors(path, "video"), av.open(path) as container:
        if not container.streams.video:  # none, or a damaged file: load_video asks ffprobe which
            raise CorruptMediaError(path, "no video stream could be parsed; re-download or re-encode it")
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        if threads is not None:
            stream.thread_count = threads
        index = _index(stream, path)
        present = len(index.pts)
        rate = stream.average_rate or stream.guessed_rate
        native_fps = float(rate) if rate else present / max(float(index.times[-1, 1] - index.times[0, 0]), 1e-9)
        header = _header_frames(stream, native_fps, present)
        check_video_length(path, present, header, float(index.times[-1, 1]), _declared_seconds(stream),
                           asked_frames(sampling))
        total = min(header, present)
        indices = sample_indices(total, native_fps, **sampling)
        frames = read_frames(container, stream, index, indices, path)
    return {"frames": frames, "indices": indices, "timestamps": index.times[indices, 0].tolist(),
            "native_fps": native_fps, "end": float(index.times[total - 1, 1])}


def video_length(path: str) -> None:
    """ShortMediaError for a truncated video (see video_frames), found by demuxing its packets, decoding none."""
    with _av_errors(path, "video"), av.open(path) as container:
        if not container.streams.video:
            raise CorruptMediaError(path, "no video stream could be parsed; re-download or re-encode it")
        stream = container.streams.video[0]
        index = _index(stream, path)
        rate = stream.average_rate or stream.guessed_rate
        header = _header_frames(stream, float(rate) if rate else 0.0, len(index.pts))
        check_video_length(path, len(index.pts), header, float(index.times[-1, 1]), _declared_seconds(stream),
                           WHOLE.replace("track", "video"))


def _declared_seconds(stream) -> float | None:
    """The video's length its header declares: the stream's duration, else the container's."""
    declared = _seconds(stream.duration, stream.time_base)
    if declared is None and stream.container.duration is not None:
        declared = stream.container.duration / av.time_base
    return declared


def read_frames(container, stream, index: _Index, indices: list[int], path: str) -> np.ndarray:
    """Frames `indices` (ascending) as RGB: for each, seek to the keyframe at or before it unless the decoder
    is already in that group of pictures, then decode forward, telling frames apart by their pts. (Should a
    seek land past the frame, as seeking by dts can, decoding starts over from the first keyframe.)"""
    number = {pts: i for i, pts in enumerate(index.pts)}
    frames, position, decoded, decoding = None, None, 0, iter(())  # position: the last frame decoded, if known

    def seek(key: int):
        nonlocal position
        container.seek(index.pts[key], stream=stream, backward=True, any_frame=False)
        position = None
        return container.decode(stream)

    for slot, wanted in enumerate(indices):
        key = index.keys[bisect_right(index.keys, wanted) - 1] if index.keys and index.keys[0] <= wanted else 0
        if position is None or not key <= position + 1 <= wanted:
            decoding = seek(key)
        image = None
        while (frame := next(decoding, None)) is not None:
            decoded += 1
            if decoded % STEP == 0:
                report_progress(decoded)
            at = number.get(frame.pts)
            if at is not None and at > wanted and position is None and key > 0:
                decoding, key = seek(0), 0
                continue
            if at is not None:
                position = at
            if at == wanted:
                image = frame.to_ndarray(format="rgb24", interpolation="BICUBIC")
                break
            if at is not None and at > wanted:
                break
        if image is None:
            raise CorruptMediaError(path, f"frame {wanted} of {len(index.pts)} could not be decoded; re-download "
                                          "or re-encode the file with ffmpeg")
        if frames is None:
            frames = output_array((len(indices), *image.shape), image.dtype)
        frames[slot] = image
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
        declared = _declared_seconds(stream)
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
