"""Media loaders: sampled video frames, mono audio at a target rate, RGB images.

Every failure is a `MediaError` subclass naming the file; decoding that could hang runs in a
guarded helper process (see guard.py).
"""
from .audio import AudioClip, load_audio
from .errors import (CorruptMediaError, EmptyMediaError, MediaError, MediaNotFoundError, MediaTimeoutError,
                     NoAudioTrackError)
from .image import load_image
from .video import VideoClip, load_video

__all__ = [
    "AudioClip", "CorruptMediaError", "EmptyMediaError", "MediaError", "MediaNotFoundError", "MediaTimeoutError",
    "NoAudioTrackError", "VideoClip", "load_audio", "load_image", "load_video",
]
