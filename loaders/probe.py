"""Inspect a media file with ffprobe in a subprocess bounded in time: streams and packets, no decoding."""
from __future__ import annotations

import functools
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .errors import CorruptMediaError, EmptyMediaError, MediaNotFoundError, MediaTimeoutError

PROBE_TIMEOUT = 10.0  # seconds; ffprobe only demuxes, so a normal file takes well under one


@dataclass(frozen=True)
class StreamInfo:
    duration: float | None  # seconds, as the container declares it
    packets: int  # packets actually present (counted by demuxing, not the header's claim)
    sample_rate: int | None = None  # audio only


@dataclass(frozen=True)
class MediaInfo:
    path: Path
    duration: float | None
    video: StreamInfo | None
    audio: StreamInfo | None


def existing_file(path: str | Path) -> Path:
    """`path` as a Path, or MediaNotFoundError / EmptyMediaError (0 bytes)."""
    path = Path(path)
    if not path.is_file():
        raise MediaNotFoundError(path, "no such file; check the path (relative paths resolve against the current "
                                       "directory or the dataset folder)")
    if path.stat().st_size == 0:
        raise EmptyMediaError(path, "file is empty (0 bytes); re-download or re-extract it")
    return path


def _float(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _stream(raw: dict) -> StreamInfo:
    return StreamInfo(
        duration=_float(raw.get("duration")),
        packets=int(raw.get("nb_read_packets", 0)),
        sample_rate=int(raw["sample_rate"]) if raw.get("sample_rate") else None,
    )


def probe(path: str | Path, timeout: float = PROBE_TIMEOUT) -> MediaInfo:
    """Streams, durations and packet counts of `path` (counting demuxes the file; nothing is decoded).
    Costs one ffprobe start (~0.1 s), so loaders use it only to explain a failed decode (an empty
    container or a damaged one); the answer is remembered while the file's size and modification
    time stay the same."""
    path = existing_file(path)
    stat = path.stat()
    return _probe(path.resolve(), stat.st_size, stat.st_mtime_ns, timeout)


@functools.lru_cache(maxsize=4096)
def _probe(path: Path, size: int, mtime_ns: int, timeout: float) -> MediaInfo:
    binary = shutil.which("ffprobe")
    if binary is None:
        raise RuntimeError("ffprobe is required to read audio/video: install FFmpeg (`apt-get install ffmpeg`).")
    cmd = [binary, "-v", "error", "-count_packets", "-of", "json", "-show_entries",
           "format=duration:stream=codec_type,duration,nb_read_packets,sample_rate", str(path)]
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=timeout, text=True)
    except subprocess.TimeoutExpired:
        raise MediaTimeoutError(path, f"ffprobe did not finish within {timeout:g} s; the file is probably "
                                      "damaged, re-encode it with ffmpeg or skip it") from None
    if done.returncode != 0:
        reason = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit code {done.returncode}"
        raise CorruptMediaError(path, f"not a readable media file ({reason}); re-download or re-encode it")
    raw = json.loads(done.stdout)
    streams = raw.get("streams", [])
    video = next((s for s in streams if s.get("codec_type") == "video"), None)
    audio = next((s for s in streams if s.get("codec_type") == "audio"), None)
    duration = _float(raw.get("format", {}).get("duration"))
    if video is None and audio is None:
        if duration == 0:  # a well-formed container holding nothing
            raise EmptyMediaError(path, "contains no audio or video stream (0 s long)")
        raise CorruptMediaError(path, "no audio or video stream could be parsed; re-download or re-encode it")
    return MediaInfo(
        path=path,
        duration=duration,
        video=_stream(video) if video else None,
        audio=_stream(audio) if audio else None,
    )
