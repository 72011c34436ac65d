"""Whether a media file decodes to what its header declares. A truncated download or copy decodes to a part of the
file with no error from the decoders (PyAV and libsndfile clip the length to the bytes present); scoring a sample
on that part would be silent, so the loaders raise ShortMediaError instead (the harness counts it as a media error).
"""
from __future__ import annotations

import struct
from pathlib import Path

from hallubench.errors import ShortMediaError

SHORT = 0.9  # below this share of what its header declares, a file is truncated
UNKNOWN_SIZES = (0, 0xFFFFFFFF)  # what a WAV written as a stream declares before its length is known


def check_length(path: str | Path, decoded: float, declared: float | None, unit: str, asked: str) -> None:
    """ShortMediaError naming the file, what was `asked`, what decoded and what its header declares, when `decoded`
    is below SHORT of `declared` (in `unit`: "frames", "s")."""
    if declared and decoded < SHORT * declared:
        raise ShortMediaError(path, f"truncated: {decoded:g} {unit} decode of the {declared:g} {unit} its header "
                                    f"declares (asked: {asked}). Re-download or re-encode it: the sample is counted "
                                    "as a media error, never scored on what is left")


def check_video_length(path: str | Path, present: int, header: int, end: float, declared: float | None,
                       sampling: dict) -> None:
    """ShortMediaError when the video holds clearly fewer frames than its header claims and ends clearly before the
    length it declares (a truncated file): sampling would cover only the part left. A header whose frame count
    alone is off (the file still runs its declared length) is no truncation. Checked on the index, before any
    frame is decoded (the last packet of a cut file may not decode at all)."""
    asked = f"{sampling['num_frames']} frames" if sampling.get("fps") is None else \
        f"{sampling['fps']:g} fps, at most {sampling['max_frames']} frames"
    if declared is None or end < SHORT * declared:
        check_length(path, present, header, "frames", asked)


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
