"""Exceptions raised by the media loaders. Each names the file it is about."""
from __future__ import annotations

from pathlib import Path


class MediaError(Exception):
    """Base class: something is wrong with a media file. `path` is the file (or "<bytes>")."""

    def __init__(self, path: str | Path, message: str):
        self.path = str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")

    def __reduce__(self):  # picklable across processes (DataLoader workers) despite the two-argument init
        return type(self), (self.path, self.message)


class MediaNotFoundError(MediaError, FileNotFoundError):
    """The file does not exist."""


class CorruptMediaError(MediaError):
    """The file exists but cannot be parsed or decoded (truncated, garbage, decoder crashed)."""


class NoAudioTrackError(MediaError):
    """Audio was requested from a container that has no audio stream."""


class EmptyMediaError(MediaError):
    """The file is 0 bytes, or holds no frames / no samples (or no stream of the requested kind)."""


class MediaTimeoutError(MediaError, TimeoutError):
    """Probing or decoding did not finish within the time limit; the decoder process was killed."""
