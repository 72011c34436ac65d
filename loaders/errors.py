"""Exceptions raised by the media loaders. Each names the file it is about."""
from __future__ import annotations

from pathlib import Path


class MediaError(Exception):
    """Base class: something is wrong with a media file. `path` is the file (or "<bytes>").

    Raised as `MediaError(path, message)`; `MediaError(message)` alone (path None) serves callers
    that report a problem with no single file, e.g. a dataset row that lacks one.
    """

    def __init__(self, path: str | Path, message: str | None = None):
        self.path = None if message is None else str(path)
        self.message = str(path) if message is None else message
        super().__init__(self.message if self.path is None else f"{self.path}: {self.message}")

    def __reduce__(self):  # picklable across processes (DataLoader workers) despite the custom init
        return type(self), (self.message,) if self.path is None else (self.path, self.message)


class MediaNotFoundError(MediaError, FileNotFoundError):
    """The file does not exist."""


class CorruptMediaError(MediaError):
    """The file exists but cannot be parsed or decoded (truncated, garbage, decoder crashed)."""


class NoAudioTrackError(MediaError):
    """Audio was requested from a container that has no audio stream."""


class EmptyMediaError(MediaError):
    """The file is 0 bytes, or holds no frames / no samples (or no stream of the requested kind)."""


class MediaTimeoutError(MediaError, TimeoutError):
    """Decoding made no progress for `timeout` seconds (or ran past its total bound), or probing
    did not finish in time; the decoder process was killed."""
