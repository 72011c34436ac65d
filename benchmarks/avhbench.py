"""AVHBench (Sung-Bin et al., ICLR 2025): cross-modal hallucination of audio-visual LLMs, yes/no judgments.

Prompt: the release's `text`, verbatim (its README: "input text prompt"), with the video and its own soundtrack
(MediaSpec audio = the video's track): an omni model hears what it sees by default, and `--modality` removes
either medium. Greedy decoding, 64 new tokens (the release names no decoding settings).

Scored by the `pope` metric: the five numbers of the paper's tables and its repo leaderboard (accuracy,
precision, recall, F1, yes %), by POPE's official answer rule (AVHBench ships no scorer; its tables are POPE's).
Tasks: `avhbench_audio_driven_video` (Audio-driven Video Hallucination), `avhbench_video_driven_audio`
(Video-driven Audio Hallucination), `avhbench_av_matching` (AV Matching): each one table of the paper; and
`avhbench` (all three judgment tasks, grouped by task; its top-level numbers pool the three, which the paper
does not report). AV Captioning (METEOR/CIDEr/GAVIE in the paper) is built into the dataset but not run here.
"""
import dataclasses

from hallubench.benchmarks.task import MediaSpec, Task, one_of, yes_no
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_task

SOURCE = "Sung-Bin et al., ICLR 2025, arXiv:2410.18325; github.com/kaist-ami/AVHBench; rule: github.com/AoiDragon/POPE"
# task name -> dataset config: the rows of one released task (Audio-driven Video Hallucination, Video-driven Audio
# Hallucination, AV Matching)
ABOUT = {
    "avhbench_audio_driven_video": "Is the thing the soundtrack suggests visible in the video? (yes/no)",
    "avhbench_video_driven_audio": "Is the thing the video shows heard making its sound? (yes/no)",
    "avhbench_av_matching": "Do the video's sound and picture match? (yes/no)",
}
JUDGMENTS = {
    "avhbench_audio_driven_video": "audio_driven_video_hallucination",
    "avhbench_video_driven_audio": "video_driven_audio_hallucination",
    "avhbench_av_matching": "av_matching",
}


AVHBENCH = Task(
    name="avhbench",
    description="AVHBench's three yes/no judgments pooled, each asked with the video and its own soundtrack",
    benchmark="avhbench",
    config="judgment",
    prompt=lambda row: row["text"],
    media=MediaSpec(video="video", audio="video"),
    generation=GenerationSettings(max_new_tokens=64),
    # AVHBench releases no scorer and its tables report POPE's five numbers: POPE's metric and answer rule.
    parser="pope_answer",
    metric="pope",
    reference=lambda row: one_of(row, "label", ("yes", "no"), yes_no),
    group=lambda row: row["task"],
    # yes_ratio is best at the references' share, so neither direction is better.
    higher_is_better={"accuracy": True, "precision": True, "recall": True, "f1": True, "yes_ratio": None},
    source=SOURCE,
)
register_task(AVHBENCH)

for _name, _config in JUDGMENTS.items():
    register_task(dataclasses.replace(AVHBENCH, name=_name, config=_config, description=ABOUT[_name]))
