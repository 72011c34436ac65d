"""AVHBench (Sung-Bin et al., ICLR 2025): QA.json + videos/<video_id>.mp4, the layout of the release's README
(github.com/kaist-ami/AVHBench @ d44bcb0: "{video_id}.mp4" and "{QA}.json"; published on Google Drive, no Hub copy).

QA.json is a list of {video_id, task, text, label}: `task` one of the four AVHBench tasks, `text` the prompt as
given to the model, `label` "Yes"/"No" for the three judgment tasks and the reference caption for AV Captioning.
Rows keep the four fields; `label` of a judgment is stored lower-case ("yes"/"no"); ids are "avhbench-<index>"
by position (the release has none). Each video keeps its own soundtrack (the benchmark is audio-visual): the
AV Matching videos with swapped audio are separate files in videos/, as released. The release's folder may be
named AVHBench_v0 with json/QA.json and video/ (data/readme.txt); both spellings are read.

A judgment asked twice (the same video_id, task and text) is kept once: a repeat with the same label is left out,
and where the labels differ every copy is, since the release does not say which is right (each listed in
skipped.jsonl, counted in the card's notes). QA.json is reported to hold 7 such repeats, 2 with conflicting labels.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import datasets

from hallubench.errors import BuildError
from hallubench.registry import register_builder
from hallubench.builders.base import ReleaseBuilder, RowError, load_json_list, repeats, strings, subsets

# task name as released -> config name
TASKS = {
    "Audio-driven Video Hallucination": "audio_driven_video_hallucination",
    "Video-driven Audio Hallucination": "video_driven_audio_hallucination",
    "AV Matching": "av_matching",
    "AV Captioning": "av_captioning",
}
CAPTIONING = "AV Captioning"
FIELDS = ("video_id", "task", "text", "label")
LAYOUT = "a list of {video_id, task, text, label}"
ANNOTATIONS = ("QA.json", "json/QA.json")
VIDEO_DIRS = ("videos", "video")


def _judgment_key(record: Any) -> tuple | None:
    """What a judgment asks (video, task, question); None for captioning and records that are not judgments."""
    if not isinstance(record, dict) or record.get("task") in (None, CAPTIONING):
        return None
    return tuple(str(record.get(name)) for name in ("video_id", "task", "text"))


@register_builder
class AVHBench(ReleaseBuilder):
    NAME = "avhbench"
    ELSEWHERE = ("the QA json and the videos from the Google Drive links in github.com/kaist-ami/AVHBench's README "
                 "(QA.json next to videos/<video_id>.mp4)")
    SUMMARY_COLUMNS = ("task", "label")
    MEDIA_PATH_COLUMNS = ("video",)
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="all")]
    DEFAULT_OUTPUT_CONFIG = "all"
    FEATURES = datasets.Features({"id": datasets.Value("string"), **{f: datasets.Value("string") for f in FIELDS},
                                  "video": datasets.Value("string")})

    def read_records(self) -> tuple[Path, list[Any]]:
        path = next((self.source / name for name in ANNOTATIONS if (self.source / name).exists()), None)
        videos = next((name for name in VIDEO_DIRS if (self.source / name).is_dir()), None)
        if path is None or videos is None:
            raise BuildError(f"{self.source}: expected {' or '.join(ANNOTATIONS)} ({LAYOUT}) and the folder "
                             f"{' or '.join(VIDEO_DIRS)}/ of <video_id>.mp4; put the official release there.")
        self.videos = videos
        records = load_json_list(self.release_file(path), LAYOUT)
        self.left_out = repeats(map(_judgment_key, records), [str(r.get("label", "")).strip().lower()
                                                              if isinstance(r, dict) else None for r in records])
        if self.left_out:
            conflicting = sum("another answer" in why for why in self.left_out.values())
            self.notes.append(f"{len(self.left_out)} repeated judgments left out ({conflicting} of them asked again "
                              "with another label, so no copy is kept); see skipped.jsonl.")
        return path, records

    def convert(self, index: int, raw: Any) -> dict[str, Any]:
        values = strings(raw, FIELDS)
        if values["task"] not in TASKS:
            raise RowError(f"unknown task {values['task']!r}; expected one of {', '.join(TASKS)}")
        label = values["label"].strip()
        if values["task"] != CAPTIONING:
            label = label.lower()
            if label not in ("yes", "no"):
                raise RowError(f"label must be 'Yes' or 'No' for {values['task']}, got {values['label']!r}")
        video_id = values["video_id"]
        if not video_id.strip() or "/" in video_id or "\\" in video_id or video_id in (".", ".."):
            raise RowError(f"video_id {video_id!r} cannot name a file {self.videos}/<video_id>.mp4")
        rel = f"{self.videos}/{video_id}.mp4"
        return {"id": self.row_id(index, raw), **values, "label": label, "video": self.place_media(self.source / rel, rel)}

    def output_configs(self, dataset: datasets.Dataset) -> dict[str, datasets.Dataset]:
        cells = dataset.data.column("task").to_pylist()
        by_task = subsets(dataset, "task", [t for t in TASKS if t in set(cells)])
        judgment = dataset.select([i for i, task in enumerate(cells) if task != CAPTIONING])
        return {**{TASKS[task]: rows for task, rows in by_task.items()}, "judgment": judgment, "all": dataset}
