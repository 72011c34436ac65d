"""The media loaders' exceptions, which live in hallubench/errors.py with every user-facing error; imported here
too for code written against this module (this alias module goes in the next release)."""
from hallubench.errors import (CorruptMediaError, EmptyMediaError, MediaError, MediaNotFoundError,  # noqa: F401
                               MediaTimeoutError, NoAudioTrackError)
