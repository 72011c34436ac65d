"""Mini AVHBench: `QA.json` + `videos/<video_id>.mp4`, each clip a shape over a tone (its soundtrack).

Per clip, as upstream: a yes and a no question of each hallucination task (the "no" question of Video-driven
Audio Hallucination asks whether the shown shape makes the sound; that of Audio-driven Video Hallucination
whether a sound source is visible), one AV Matching question and one AV Captioning reference. Clip 00004 is a
swapped sample: another clip's soundtrack, so its matching label is "No" (upstream swaps audio between clips).
"""
from __future__ import annotations

from pathlib import Path

from hallubench.registry import register_mini_release

from .files import write_json
from .media import Sound, Visual, write_clip

MATCHING = "Are the contexts of audio and visual content matching?"
CAPTION = "Describe what you see and hear in a single sentence."
# video_id -> (visual, sound, whether the soundtrack is the clip's own)
CLIPS: dict[str, tuple[Visual, Sound, bool]] = {
    "00001": (Visual("circle", "red"), Sound(440), True),
    "00002": (Visual("square", "blue", moving=False), Sound(880, beeping=True), True),
    "00003": (Visual("circle", "green", background="black"), Sound(220), True),
    "00004": (Visual("square", "yellow"), Sound(440), False),  # 00001's soundtrack
}


def rows(video_id: str, visual: Visual, sound: Sound, own: bool) -> list[dict]:
    shape = f"{visual.color} {visual.shape}"
    tone = "beeping tone" if sound.beeping else "steady tone"
    qa = [
        ("Video-driven Audio Hallucination", f"Is the {tone} making sound in the audio?", "Yes"),
        ("Video-driven Audio Hallucination", f"Is the {shape} making sound in the audio?", "No"),
        ("Audio-driven Video Hallucination", f"Is the {shape} visible in the video?", "Yes"),
        ("Audio-driven Video Hallucination", "Is the loudspeaker playing the tone visible in the video?", "No"),
        ("AV Matching", MATCHING, "Yes" if own else "No"),
        ("AV Captioning", CAPTION, f"{visual.describe().capitalize()}, with {sound.describe()}."),
    ]
    return [{"video_id": video_id, "task": task, "text": text, "label": label} for task, text, label in qa]


@register_mini_release("avhbench")
def make(out: Path) -> Path:
    annotations = []
    for video_id, (visual, sound, own) in CLIPS.items():
        write_clip(out / "videos" / f"{video_id}.mp4", visual, sound)
        annotations += rows(video_id, visual, sound, own)
    write_json(out / "QA.json", annotations)
    return out
