"""Graded perturbations of the media a model is shown: the ladders of CMM's Figure 2 (Leng et al. 2024, §2.1).

The paper validates unimodal over-reliance by degrading one medium step by step and reading the model's
P("yes") and P("no") at each step: the video "progressively" blurred (Fig. 2a language dominance, 2b visual
dominance), noise added to the audio track (Fig. 2c audio dominance). `--perturb KIND=L1,L2,...` gives such a
ladder; a run evaluates every item once per level (each (item, level) its own sample record, keyed by the level),
so one run, resumable like any other, covers the whole ladder. Kinds:

- `video_blur` / `image_blur`: Gaussian blur of standard deviation `level` pixels (Pillow's
  `ImageFilter.GaussianBlur`, whose radius is the standard deviation) on each sampled frame / on the image;
  0 leaves them as they are.
- `audio_snr`: white Gaussian noise added to the waveform at a signal-to-noise ratio of `level` dB (noise power =
  signal power / 10^(level/10)), drawn from numpy's PCG64 with the sample's perturbation seed; `inf` adds none. A
  silent track stays silent (there is no signal to set the noise power by).

The paper does not give its blur radii or noise levels (only "increasing" ones) nor the noise's kind; white
Gaussian noise at a stated SNR and a Gaussian blur are the usual readings, and the levels are the user's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
from PIL import Image, ImageFilter

from hallubench.errors import ConfigError
from hallubench.harness.sharding import stable_hash
from hallubench.models.protocol import AudioPart, ImagePart, Part, VideoPart

# kind -> the medium it degrades (harness/media.py's kinds)
KINDS = {"video_blur": "video", "image_blur": "image", "audio_snr": "audio"}


@dataclass(frozen=True)
class Perturbation:
    """One level of one ladder as a sample sees it; `seed` draws its noise."""

    kind: str
    level: str  # normalised text of the level ("4", "-10", "inf"): JSON has no infinity
    seed: int

    @property
    def label(self) -> str:
        """`kind=level`: the sample id's suffix and the level's group name in results."""
        return f"{self.kind}={self.level}"

    @property
    def value(self) -> float:
        return float(self.level)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "level": self.level, "seed": self.seed, "label": self.label}


def _level(kind: str, text: Any) -> str:
    """A level as normalised text; ConfigError for one the kind cannot take."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ConfigError(f"--perturb {kind}: level {text!r} is not a number") from None
    if math.isnan(value) or value == -math.inf or (kind != "audio_snr" and not 0 <= value < math.inf):
        allowed = "a number of dB or inf (no noise)" if kind == "audio_snr" else "a blur sigma >= 0 (pixels)"
        raise ConfigError(f"--perturb {kind}: level {text!r} is not {allowed}")
    return f"{value:g}"


def parse_perturb(given: Any) -> dict[str, list[str]]:
    """`--perturb` values ("video_blur=0,2,4", repeatable; or a YAML mapping kind -> levels) as kind -> levels."""
    if not given:
        return {}
    if isinstance(given, str):
        given = [given]
    pairs: Iterable[tuple[Any, Any]]
    if isinstance(given, dict):
        pairs = given.items()
    elif isinstance(given, (list, tuple)):
        pairs = [tuple(str(text).partition("=")[::2]) for text in given]
    else:
        raise ConfigError(f"--perturb: expected KIND=L1,L2,... (or a mapping in --config); got {given!r}")
    ladders: dict[str, list[str]] = {}
    for kind, levels in pairs:
        if kind not in KINDS:
            raise ConfigError(f"--perturb: unknown kind {kind!r}; choose one of {', '.join(KINDS)} (KIND=L1,L2,...)")
        if kind in ladders:
            raise ConfigError(f"--perturb {kind} given twice")
        levels = levels.split(",") if isinstance(levels, str) else list(levels) if isinstance(levels, (list, tuple)) \
            else [levels]
        normalised = [_level(kind, str(level).strip()) for level in levels if str(level).strip()]
        if not normalised or len(set(normalised)) != len(normalised):
            raise ConfigError(f"--perturb {kind}: give distinct levels, e.g. {kind}=0,2,4")
        ladders[kind] = normalised
    return ladders


def ladder(perturb: dict[str, list[str]]) -> list[tuple[str, str]]:
    """Every (kind, level) a run evaluates, ladder by ladder in the order given."""
    return [(kind, level) for kind, levels in perturb.items() for level in levels]


def perturbation_seed(run_seed: int, task: str, row_id: str, kind: str, level: str) -> int:
    """The noise seed of one (item, level): from the run seed, task, item id and level, so reruns draw the same."""
    return int(stable_hash("perturb", run_seed, task, row_id, kind, level)[:8], 16) & 0x7FFFFFFF


def blur(image: Image.Image, sigma: float) -> Image.Image:
    return image if sigma == 0 else image.filter(ImageFilter.GaussianBlur(radius=sigma))


def add_noise(samples: np.ndarray, snr_db: float, seed: int) -> np.ndarray:
    """`samples` plus white Gaussian noise at `snr_db` (mean signal power over noise power)."""
    power = float(np.mean(np.square(samples, dtype=np.float64)))
    if snr_db == math.inf or power == 0.0:
        return samples
    noise = np.random.default_rng(seed).normal(0.0, math.sqrt(power / 10 ** (snr_db / 10)), samples.shape)
    return (samples + noise).astype(np.float32)


def _apply(part: Part, perturbation: Perturbation) -> Part:
    medium, value = KINDS[perturbation.kind], perturbation.value
    if medium == "video" and isinstance(part, VideoPart):
        frames = np.stack([np.asarray(blur(Image.fromarray(frame), value)) for frame in part.frames])
        return VideoPart(frames=frames, fps=part.fps)
    if medium == "image" and isinstance(part, ImagePart):
        return ImagePart(image=blur(part.image.convert("RGB"), value))
    if medium == "audio" and isinstance(part, AudioPart):
        return AudioPart(samples=add_noise(part.samples, value, perturbation.seed), sr=part.sr)
    return part


def perturb(parts: list[Part], perturbation: Perturbation | None) -> list[Part]:
    """The parts with `perturbation` applied to those of its medium (all of them unchanged for None)."""
    return parts if perturbation is None else [_apply(part, perturbation) for part in parts]
