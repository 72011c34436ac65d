"""Media loaders: sampled video frames, mono audio at a target rate, RGB images.

- `load_video`: frames at the middle of k equal segments of the video (k = num_frames, or
  duration * fps capped at max_frames); a video with fewer frames yields each of its frames once.
  The clip records the exact frame indices and start timestamps used. `blank=True`: black frames
  of the same shape, indices and timestamps.
- `load_audio`: mono float32 at `sr` (16 kHz default); wav/flac via libsndfile, mp4 and other
  containers via their audio track (PyAV); `muted=True`: zeros of the same length.
- `load_image`: PIL RGB from a path or bytes.

Every failure is a `MediaError` subclass naming the file: MediaNotFoundError, EmptyMediaError
(0 bytes, no frames/samples, no stream of the kind asked for), CorruptMediaError, NoAudioTrackError,
MediaTimeoutError. Decoders run in a helper process that reports progress; it is killed when no
progress comes for `timeout` seconds or past a generous bound scaled to the file and the work asked
(see guard.py), so a file that makes the decoder hang or crash costs seconds while a long clip on a
busy machine still loads. Arrays come back through shared memory (shared.py).
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
