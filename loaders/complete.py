"""Whether a media file decodes to what its header declares. A truncated download or copy decodes to a part of the
file with no error from the decoders (PyAV and libsndfile clip the length to the bytes present); scoring a sample
on that part would be silent, so the loaders raise ShortMediaError instead (the harness counts it as a media error).
"""
from __future__ import annotations

import struct
from pathlib import Path

from hallubench.errors import ShortMediaError

SHORT = 0.9  # below this share of what its header declares, a file is truncated
UNKNOWN_SIZES = (0, 0xFFFFFFFF)
WHOLE = "the whole track"  # what load_audio asks of a file, and the build's check of a whole video
HEADER_SUFFIXES = {".wav", ".aiff", ".aif"}  # audio whose header declares its length (declared_frames)
VIDEO_SUFFIXES = {".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi"}  # what a WAV written as a stream declares before its length is known


def check_length(path: str | Path, decoded: float, declared: float | None, unit: str, asked: str) -> None:
    """ShortMediaError naming the file, what was `asked`, what decoded and what its header declares, when `decoded`
    is below SHORT of `declared` (in `unit`: "frames", "s")."""
    if declared and decoded < SHORT * declared:
        raise ShortMediaError(path, f"truncated: {decoded:g} {unit} decode of the {declared:g} {unit} its header "
                                    f"declares (asked: {asked}); re-download or re-encode it")


def asked_frames(sampling: dict) -> str:
    """What `sampling` (load_video's num_frames, fps, max_frames) asks, in words."""
    return f"{sampling['num_frames']} frames" if sampling.get("fps") is None else \
        f"{sampling['fps']:g} fps, at most {sampling['max_frames']} frames"


def check_video_length(path: str | Path, present: int, header: int, end: float, declared: float | None,
                       asked: str) -> None:
    """ShortMediaError when the video holds clearly fewer frames than its header claims and ends clearly before the
    length it declares (a truncated file): sampling would cover only the part left. A header whose frame count
    alone is off (the file still runs its declared length) is no truncation. Checked on the index, before any
    frame is decoded (the last packet of a cut file may not decode at all)."""
    if declared is None or end < SHORT * declared:
        check_length(path, present, header, "frames", asked)


def check_complete(path: str | Path, timeout: float = 10.0) -> None:
    """ShortMediaError when the video or WAV/AIFF at `path` holds clearly less than its header declares, found
    without decoding (`hallubench build` checks each media file it places): a video's packets are demuxed in the
    guarded helper (guard.py), a WAV/AIFF's header is read. Other files are left to the loaders at run time."""
    suffix = Path(path).suffix.lower()
    if suffix in HEADER_SUFFIXES:
        import soundfile as sf

        rate, declared = sf.info(str(path)).samplerate, declared_frames(path)
        check_length(path, round(sf.info(str(path)).frames / rate, 2), declared and round(declared / rate, 2), "s",
                     WHOLE)
    elif suffix in VIDEO_SUFFIXES:
        from .guard import DECODERS, bounds, run_guarded

        run_guarded(f"{DECODERS}:video_length", str(path), path=Path(path), timeout=timeout,
                    **bounds(Path(path), timeout, steps=0))


def declared_frames(path: str | Path) -> int | None:
    """The sample frames a WAV (RIFF) or AIFF header declares; None for other files or a length left unknown.

    Read from the chunks here: libsndfile and PyAV report the length clipped to the bytes present, and the
    standard library's `wave` reads PCM WAV only (not float WAV, nor AIFF)."""
    with open(path, "rb") as file:
        head = file.read(12)
        order = "<" if head[:4] == b"RIFF" and head[8:] == b"WAVE" else \
            ">" if head[:4] == b"FORM" and head[8:] in (b"AIFF", b"AIFC") else None
        align = None
        while order and len(chunk := file.read(8)) == 8:
            name, size = chunk[:4], struct.unpack(order + "I", chunk[4:])[0]
            body = file.read(size if name in (b"fmt ", b"COMM") else 0)
            if name == b"fmt ":
                align = struct.unpack("<H", body[12:14])[0] if len(body) >= 14 else None
            elif name == b"COMM" and len(body) >= 6:
                return struct.unpack(">I", body[2:6])[0]
            elif name == b"data":
                return size // align if align and size not in UNKNOWN_SIZES else None
            if name not in (b"fmt ", b"COMM"):
                file.seek(size, 1)
            file.seek(size & 1, 1)  # chunks are padded to an even length
    return None
