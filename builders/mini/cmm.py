"""Mini CMM: `all_data_final_reorg.json` + `reorg_raw_files/<category>/<sub_category>/<id>.mp4|.wav`
(or the same tree inside `reorg_raw_files.zip`).

Like upstream, each sample is probed twice: one question about something present (answer "yes") and
one about something absent (answer "no"), so every sub_category is balanced. Field values follow the
upstream examples (`category` "inter-modality_spurious_correlation" / "over-reliance_unimodal_priors",
`granularity` "object-level" / "event-level", `correlation_type` free text). Assumptions where the
public examples say nothing: `modality` names the media given ("visual", "audio", "visual-audio"), and
a sample with both video and sound gets a `.wav` of the soundtrack as `audio_path` next to its `.mp4`
(which also carries the track).
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from hallubench.registry import register_mini_release

from .files import write_json, zip_tree
from .media import Sound, Visual, write_clip

MEDIA_DIR = "reorg_raw_files"
SPURIOUS = "inter-modality_spurious_correlation"
OVERRELIANCE = "over-reliance_unimodal_priors"


def see(thing: str) -> str:
    return f"Did you see {thing} in the video?"


def hear(thing: str) -> str:
    return f"Did you hear {thing} in the audio?"


@dataclass(frozen=True)
class Sample:
    sample_id: str
    visual: Visual | None
    sound: Sound | None
    granularity: str
    correlation_type: str
    present: str  # question whose answer is "yes"
    absent: str  # question whose answer is "no"

    @property
    def modality(self) -> str:
        return "-".join(name for name, media in (("visual", self.visual), ("audio", self.sound)) if media)


RED_CIRCLE, BLUE_SQUARE = Visual("circle", "red"), Visual("square", "blue", moving=False)
GREEN_CIRCLE, YELLOW_SQUARE = Visual("circle", "green"), Visual("square", "yellow")
STEADY_440, BEEP_880 = Sound(440), Sound(880, beeping=True)
STEADY_220, BEEP_660 = Sound(220), Sound(660, beeping=True)

SUB_CATEGORIES: dict[str, tuple[str, tuple[Sample, ...]]] = {
    "visual-language": (SPURIOUS, (
        Sample("1001", RED_CIRCLE, None, "object-level", "global_frequency", see("a red circle"), see("a person")),
        Sample("1002", BLUE_SQUARE, None, "object-level", "co-occurrence", see("a blue square"), see("a blue circle")),
        Sample("1003", GREEN_CIRCLE, None, "event-level", "global_frequency",
               see("a green circle moving from left to right"), see("a green circle bouncing up and down")),
        Sample("1004", YELLOW_SQUARE, None, "event-level", "co-occurrence",
               see("a yellow square sliding across the screen"), see("a yellow square spinning in place")),
    )),
    "audio-language": (SPURIOUS, (
        Sample("2001", None, STEADY_440, "event-level", "global_frequency", hear("a steady tone"), hear("a dog barking")),
        Sample("2002", None, BEEP_880, "event-level", "co-occurrence", hear("a beeping sound"), hear("a person speaking")),
        Sample("2003", None, STEADY_220, "event-level", "global_frequency",
               hear("a low-pitched steady tone"), hear("music with drums")),
        Sample("2004", None, BEEP_660, "event-level", "co-occurrence",
               hear("a series of short beeps"), hear("a continuous tone without pauses")),
    )),
    "visual-audio-language": (SPURIOUS, (
        Sample("3001", RED_CIRCLE, STEADY_440, "object-level", "co-occurrence", see("a red circle"), hear("a dog barking")),
        Sample("3002", BLUE_SQUARE, BEEP_880, "event-level", "co-occurrence",
               hear("a beeping sound"), see("an alarm clock")),
        Sample("3003", GREEN_CIRCLE, STEADY_220, "object-level", "global_frequency",
               see("a green circle"), hear("a crowd cheering")),
        Sample("3004", YELLOW_SQUARE, BEEP_660, "event-level", "global_frequency",
               hear("short beeps"), see("a traffic light")),
    )),
    "overrely_visual_ignore_audio": (OVERRELIANCE, (
        Sample("4001", RED_CIRCLE, STEADY_440, "event-level", "visual_dominance",
               hear("a steady tone"), hear("a ball rolling")),
        Sample("4002", BLUE_SQUARE, BEEP_880, "event-level", "visual_dominance",
               hear("a beeping sound"), hear("a door slamming")),
        Sample("4003", GREEN_CIRCLE, STEADY_220, "event-level", "visual_dominance",
               hear("a low steady tone"), hear("a ball bouncing")),
        Sample("4004", YELLOW_SQUARE, BEEP_660, "event-level", "visual_dominance",
               hear("short beeps"), hear("footsteps")),
    )),
    "overrely_audio_ignore_visual": (OVERRELIANCE, (
        Sample("5001", Visual("square", "red"), BEEP_880, "object-level", "audio_dominance",
               see("a red square"), see("an alarm clock")),
        Sample("5002", Visual("circle", "blue", moving=False), STEADY_440, "object-level", "audio_dominance",
               see("a blue circle"), see("a tuning fork")),
        Sample("5003", Visual("square", "green"), BEEP_660, "event-level", "audio_dominance",
               see("a green square moving from left to right"), see("a ringing phone")),
        Sample("5004", Visual("circle", "yellow", moving=False), Sound(330), "object-level", "audio_dominance",
               see("a yellow circle"), see("a person playing a flute")),
    )),
    "overrely_language_ignore_visual": (OVERRELIANCE, (
        Sample("6001", Visual("circle", "yellow", background="blue", moving=False), None, "object-level",
               "language_dominance", see("a yellow circle"), see("the sun shining in the sky")),
        Sample("6002", RED_CIRCLE, None, "event-level", "language_dominance",
               see("a red circle moving from left to right"), see("a red ball bouncing on the ground")),
        Sample("6003", Visual("square", "green", moving=False), None, "object-level", "language_dominance",
               see("a green square"), see("a green leaf")),
        Sample("6004", Visual("circle", "blue", moving=False), None, "object-level", "language_dominance",
               see("a blue circle"), see("ocean waves")),
    )),
}


def write_media(root: Path, category: str, sub_category: str, sample: Sample) -> tuple[str | None, str | None]:
    """Write the sample's files under `root` and return its (video_path, audio_path) as upstream spells them."""
    folder = Path(MEDIA_DIR) / category / sub_category
    video_path = audio_path = None
    if sample.visual is not None:
        video_path = folder / f"{sample.sample_id}.mp4"
        write_clip(root / video_path, sample.visual, sample.sound)
    if sample.sound is not None:
        audio_path = folder / f"{sample.sample_id}.wav"
        write_clip(root / audio_path, None, sample.sound)
    return tuple(None if p is None else f"./{p.as_posix()}" for p in (video_path, audio_path))


@register_mini_release("cmm")
def make(out: Path, zipped: bool = False) -> Path:
    rows = []
    for sub_category, (category, samples) in SUB_CATEGORIES.items():
        for sample in samples:
            video_path, audio_path = write_media(out, category, sub_category, sample)
            for question, answer in ((sample.present, "yes"), (sample.absent, "no")):
                rows.append({
                    "category": category, "sub_category": sub_category, "modality": sample.modality,
                    "granularity": sample.granularity, "correlation_type": sample.correlation_type,
                    "video_path": video_path, "audio_path": audio_path, "question": question, "answer": answer,
                })
    write_json(out / "all_data_final_reorg.json", rows)
    archive = out / f"{MEDIA_DIR}.zip"
    archive.unlink(missing_ok=True)  # a stale other form would make the release ambiguous
    if zipped:
        zip_tree(out / MEDIA_DIR, archive)
        shutil.rmtree(out / MEDIA_DIR)
    return out
