"""Load audio as mono float32 at a target rate: wav/flac with libsndfile, other containers (mp4...)
from their own audio track with PyAV (in the guarded helper), resampled with librosa (soxr).

PyAV, not decord's AudioReader: on a 60 s mp4 it decodes 5x faster (tests/perf/bench_audio.py), and
it reads the declared duration and rate itself, so no ffprobe process starts per file."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import librosa
import numpy as np
import soundfile as sf

from .complete import WHOLE, check_length, declared_frames
from .errors import CorruptMediaError, EmptyMediaError
from .guard import bounds, run_guarded
from .probe import existing_file, probe

SOUNDFILE_SUFFIXES = {".wav", ".flac", ".ogg", ".aiff", ".aif"}


@dataclass
class AudioClip:
    samples: np.ndarray  # (N,) float32 mono
    sr: int
    duration: float  # seconds = N / sr
    path: str


def _read_soundfile(path: Path) -> tuple[np.ndarray, int]:
    try:
        samples, rate = sf.read(path, dtype="float32", always_2d=True)
        declared = declared_frames(path)
    except (sf.LibsndfileError, RuntimeError, ValueError) as error:
        raise CorruptMediaError(path, f"cannot decode audio ({error}); re-download or re-encode it") from None
    check_length(path, round(len(samples) / rate, 2), declared and round(declared / rate, 2), "s", WHOLE)
    return samples.T, rate


def _read_track(path: Path, timeout: float) -> tuple[np.ndarray, int]:
    try:
        track = run_guarded("hallubench.loaders.decode:audio_track", str(path), path=path, timeout=timeout,
                            **bounds(path, timeout, steps=0))
    except CorruptMediaError:
        probe(path)  # ffprobe tells a well-formed empty container (EmptyMediaError) from a damaged one
        raise
    samples, rate, declared = track["samples"][:, :track["count"]], track["rate"], track["declared"]
    if not rate:
        raise CorruptMediaError(path, "the audio track declares no sample rate; re-encode it with ffmpeg")
    if declared:
        check_length(path, round(samples.shape[1] / rate, 2), round(declared, 2), "s", WHOLE)
        samples = samples[:, :round(declared * rate)]  # AAC decoders emit encoder padding past the declared end
    return samples, rate


def load_audio(path: str | Path, sr: int = 16000, muted: bool = False, timeout: float = 10.0) -> AudioClip:
    """Mono float32 samples of `path` at `sr` Hz (channels averaged, resampled with librosa).

    wav/flac/ogg/aiff are read directly; anything else (mp4, m4a, mkv...) via its first audio track,
    decoded in a helper process that is killed when `timeout` seconds pass without progress
    (MediaTimeoutError, see guard.py). `muted=True` returns zeros of exactly the length the real
    audio would have (the file is still decoded, so the same errors are raised, e.g. NoAudioTrackError).
    """
    if not sr > 0:
        raise ValueError(f"sr must be a positive sample rate in Hz, got {sr!r}")
    if not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
    path = existing_file(path)
    if path.suffix.lower() in SOUNDFILE_SUFFIXES:
        channels, rate = _read_soundfile(path)
    else:
        channels, rate = _read_track(path, timeout)
    if channels.shape[-1] == 0:
        raise EmptyMediaError(path, "audio has no samples")
    mono = librosa.to_mono(channels) if channels.shape[0] > 1 else channels[0]
    samples = librosa.resample(mono, orig_sr=rate, target_sr=sr) if rate != sr else mono
    samples = np.ascontiguousarray(samples, dtype=np.float32)
    if muted:
        samples = np.zeros_like(samples)
    return AudioClip(samples=samples, sr=sr, duration=len(samples) / sr, path=str(path))
