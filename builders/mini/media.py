"""Media for the mini releases: still scenes of coloured shapes (PNG) and clips of a shape and a tone (mp4, wav).

Every spec can describe itself in words, so the annotations are generated from the same object that
draws the media and stay true to it.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from hallubench.builders.mini.synthetic import COLORS, shape_frames, tone, write_mp4, write_wav

FRAME_SIZE = (64, 96)  # (height, width), even for yuv420
FPS = 8.0
SECONDS = 2.0
SAMPLE_RATE = 16000
IMAGE_SIZE = (96, 128)  # (height, width)
BEEPS_PER_SECOND = 2  # described as "twice a second"


@dataclass(frozen=True)
class Visual:
    """One coloured shape on a plain background, drifting left to right or standing in the centre."""

    shape: str
    color: str
    background: str = "white"
    moving: bool = True

    def frames(self, seconds: float = SECONDS, fps: float = FPS) -> np.ndarray:
        return shape_frames(int(round(seconds * fps)), self.shape, self.color, self.background,
                            FRAME_SIZE, self.moving)

    def describe(self) -> str:
        where = "moving from left to right on" if self.moving else "standing still in the centre of"
        return f"a {self.color} {self.shape} {where} a {self.background} background"


@dataclass(frozen=True)
class Sound:
    """A sine tone at `freq` Hz, either steady or cut into beeps (half on, half off)."""

    freq: float
    beeping: bool = False

    def samples(self, seconds: float = SECONDS, sr: int = SAMPLE_RATE) -> np.ndarray:
        wave = tone(self.freq, seconds, sr)
        if self.beeping:
            t = np.arange(wave.size) / sr
            wave = wave * (np.floor(t * 2 * BEEPS_PER_SECOND) % 2 == 0)
        return wave.astype(np.float32)

    def describe(self) -> str:
        if self.beeping:
            article = "an" if f"{self.freq:g}".startswith(("8", "11", "18")) else "a"  # "an eight-hundred..."
            return f"{article} {self.freq:g} Hz tone beeping twice a second"
        return f"a steady {self.freq:g} Hz tone"


def write_clip(path: Path, visual: Visual | None, sound: Sound | None) -> Path:
    """An mp4 (with an audio track iff `sound`) when `visual` is given, else a wav of `sound`."""
    if visual is None:
        if sound is None:
            raise ValueError(f"{path}: a clip needs a visual, a sound, or both")
        return write_wav(path, sound.samples(), SAMPLE_RATE)
    audio = None if sound is None else sound.samples()
    return write_mp4(path, visual.frames(), FPS, audio=audio, sr=SAMPLE_RATE)


@dataclass(frozen=True)
class Shape:
    """A filled shape in a still image: `center` (x, y) and `radius` in pixels."""

    kind: str
    color: str
    center: tuple[int, int]
    radius: int = 16

    def box(self) -> tuple[int, int, int, int]:
        x, y = self.center
        return x - self.radius, y - self.radius, x + self.radius, y + self.radius


@dataclass(frozen=True)
class Scene:
    """A still image: shapes on a background, with optional text written at `text_at` (x, y)."""

    shapes: tuple[Shape, ...]
    background: str = "white"
    text: str | None = None
    text_at: tuple[int, int] = (4, 4)

    def image(self) -> Image.Image:
        height, width = IMAGE_SIZE
        image = Image.new("RGB", (width, height), COLORS[self.background])
        draw = ImageDraw.Draw(image)
        for shape in self.shapes:
            fill = COLORS[shape.color]
            if shape.kind == "circle":
                draw.ellipse(shape.box(), fill=fill)
            elif shape.kind == "square":
                draw.rectangle(shape.box(), fill=fill)
            elif shape.kind == "triangle":
                left, top, right, bottom = shape.box()
                draw.polygon([(left, bottom), (right, bottom), ((left + right) // 2, top)], fill=fill)
            else:
                raise ValueError(f"shape kind must be circle, square or triangle, got {shape.kind!r}")
        if self.text:
            ink = "black" if self.background != "black" else "white"
            draw.text(self.text_at, self.text, fill=COLORS[ink])
        return image

    def png(self) -> bytes:
        buffer = io.BytesIO()
        self.image().save(buffer, format="PNG", optimize=False)
        return buffer.getvalue()
