"""Mini AVHalluBench: `data.json` + `videos/<video_id>.mp4`, each video a shape over a tone, described truly.

Ids follow the upstream `<11-char id>_<start>_<end>` style (seconds or milliseconds).
"""
from __future__ import annotations

from pathlib import Path

from hallubench.registry import register_mini_release

from .files import write_json
from .media import Sound, Visual, write_clip

SOURCE = "hallubench-mini"

CLIPS: tuple[tuple[str, Visual, Sound], ...] = (
    ("hbMiniRdC01_0.000_2.000", Visual("circle", "red"), Sound(440)),
    ("hbMiniBlS02_0_2000", Visual("square", "blue", moving=False), Sound(880, beeping=True)),
    ("hbMiniGrC03_10.000_12.000", Visual("circle", "green", background="black"), Sound(220)),
    ("hbMiniYlS04_5000_7000", Visual("square", "yellow"), Sound(660, beeping=True)),
    ("hbMiniWhC05_0.000_2.000", Visual("circle", "white", background="blue", moving=False), Sound(330)),
)


@register_mini_release("avhallubench")
def make(out: Path) -> Path:
    rows = []
    for video_id, visual, sound in CLIPS:
        write_clip(out / "videos" / f"{video_id}.mp4", visual, sound)
        rows.append({
            "video_id": video_id,
            "source": SOURCE,
            "audio_description": f"The audio contains {sound.describe()} throughout.",
            "visual_description": f"The video shows {visual.describe()}.",
        })
    write_json(out / "data.json", rows)
    return out
