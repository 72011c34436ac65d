"""Mini VideoHallucer: `<subset>/<subset>.json` + `<subset>/videos/<file>.mp4` for the five subsets.

Each pair asks a basic question true of its clip ("yes") and a hallucinated one that is false ("no"), as
upstream: the same clip for both except in semantic_detail, where the hallucinated question is asked about a
second clip that differs in one detail (upstream `<id>_a.mp4` / `<id>_b.mp4`). The external subsets share
their videos and basic questions, as upstream; external_factual's hallucinated question carries an
`explanation`. The clips are silent: VideoHallucer is a video-only benchmark.
"""
from __future__ import annotations

from pathlib import Path

from hallubench.registry import register_mini_release

from .files import write_json
from .media import Visual, write_clip

RED, BLUE = Visual("circle", "red"), Visual("square", "blue", moving=False)
GREEN, YELLOW = Visual("circle", "green", background="black"), Visual("square", "yellow")


def _pair(video: str, basic: str, halluc: str, kind: str, halluc_video: str | None = None,
          explanation: str | None = None) -> dict:
    hallucination = {"video": halluc_video or video, "question": halluc, "answer": "no"}
    if explanation:
        hallucination["explanation"] = explanation
    return {"basic": {"video": video, "question": basic, "answer": "yes"}, "hallucination": hallucination,
            "type": kind}


def _recipe(video: str, step: str, wrong_step: str, kind: str, explanation: str | None = None) -> dict:
    ask = "Based on the video, should we {} when we draw the shape?"
    return _pair(video, ask.format(step), ask.format(wrong_step), kind, explanation=explanation)


CLIPS: dict[str, dict[str, Visual]] = {
    "object_relation": {"1001_red_0_2.mp4": RED, "1002_blue_0_2.mp4": BLUE},
    "temporal": {"v_miniGreen01.mp4": GREEN, "v_miniYellow02.mp4": YELLOW},
    "semantic_detail": {"miniRed01_a.mp4": RED, "miniRed01_b.mp4": Visual("circle", "blue"),
                        "miniSq02_a.mp4": YELLOW, "miniSq02_b.mp4": Visual("square", "yellow", background="black")},
    "external_factual": {"miniHow01_0.mp4": GREEN, "miniHow02_0.mp4": BLUE},
    "external_nonfactual": {"miniHow01_0.mp4": GREEN, "miniHow02_0.mp4": BLUE},
}

PAIRS: dict[str, list[dict]] = {
    "object_relation": [
        _pair("1001_red_0_2.mp4", "Is there a red circle in the video?", "Is there a red square in the video?",
              "subject"),
        _pair("1001_red_0_2.mp4", "Is the red circle on a white background?",
              "Is the red circle on a black background?", "relation"),
        _pair("1002_blue_0_2.mp4", "Is there a blue square in the video?", "Is there a blue ball in the video?",
              "object"),
    ],
    "temporal": [
        _pair("v_miniGreen01.mp4", "Does 'the circle is on the left' happen at the beginning of the video?",
              "Does 'the circle is on the left' happen at the end of the video?", "temporal_absolute"),
        _pair("v_miniYellow02.mp4", "Does the square move from left to right?",
              "Does the square move from right to left?", "temporal_relative"),
    ],
    "semantic_detail": [
        _pair("miniRed01_a.mp4", "Is the circle in the video red?", "Is the circle in the video red?",
              "semantic_detail", halluc_video="miniRed01_b.mp4"),
        _pair("miniSq02_a.mp4", "Is the yellow square on a white background?",
              "Is the yellow square on a white background?", "semantic_detail", halluc_video="miniSq02_b.mp4"),
    ],
    "external_factual": [
        _recipe("miniHow01_0.mp4", "start with a green circle", "add a red border", "external_factual_instruct",
                explanation="missing the detail: add a red border"),
        _recipe("miniHow02_0.mp4", "fill the square with blue", "fill the square with orange",
                "external_factual_course", explanation="missing the detail: fill the square with orange"),
    ],
    "external_nonfactual": [
        _recipe("miniHow01_0.mp4", "start with a green circle", "start with a green circle and erase it",
                "external_nonfactual_instruct"),
        _recipe("miniHow02_0.mp4", "fill the square with blue", "fill the square with blue and then cut it in half",
                "external_nonfactual_course"),
    ],
}


@register_mini_release("videohallucer")
def make(out: Path) -> Path:
    for subset, pairs in PAIRS.items():
        for name, visual in CLIPS[subset].items():
            write_clip(out / subset / "videos" / name, visual, None)
        write_json(out / subset / f"{subset}.json", pairs)
    return out
