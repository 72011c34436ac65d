"""AVHalluBench (Sun et al. 2024, CrossCheckGPT): data.json + videos/<video_id>.mp4, one row per video.

Ids are the upstream `video_id`, kept verbatim even when they carry stray characters (one upstream id
starts with a quote), because the video file is named after it and the "cleaned" id can belong to
another clip with other descriptions. Such ids, and any id that only differs from another by those
characters, are listed in the card's build notes. An id repeated with identical content is kept once
(the repeat goes to skipped.jsonl); an id repeated with different content is an error.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import datasets

from hallubench.registry import register_builder
from hallubench.builders.base import PLAIN_ID, ReleaseBuilder, RowError, load_json_list, strings

FIELDS = ("video_id", "source", "audio_description", "visual_description")
LAYOUT = "the official AVHalluBench layout: data.json (list of {video_id, source, audio_description, " \
         "visual_description}) next to videos/<video_id>.mp4"


@register_builder
class AVHalluBench(ReleaseBuilder):
    NAME = "avhallubench"
    HUB_RELEASE = "scb10x/avhallubench"
    SUMMARY_COLUMNS = ("source",)
    MEDIA_PATH_COLUMNS = ("video",)
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="default")]
    FEATURES = datasets.Features({
        "id": datasets.Value("string"),
        "video_id": datasets.Value("string"),
        "source": datasets.Value("string"),
        "video": datasets.Value("string"),
        "audio_description": datasets.Value("string"),
        "visual_description": datasets.Value("string"),
    })

    def read_records(self) -> tuple[Path, list[Any]]:
        path = self.source / "data.json"
        return path, load_json_list(self.release_file(path), LAYOUT)

    def row_id(self, index: int, raw: Any) -> str | None:
        video_id = raw.get("video_id") if isinstance(raw, dict) else None
        return video_id if isinstance(video_id, str) else None

    def convert(self, index: int, raw: Any) -> dict[str, Any]:
        values = strings(raw, FIELDS)
        video_id = values["video_id"]
        if not video_id.strip() or "/" in video_id or video_id in (".", ".."):
            raise RowError(f"video_id {video_id!r} cannot name a file videos/<video_id>.mp4")
        video = self.place_media(self.source / "videos" / f"{video_id}.mp4", f"videos/{video_id}.mp4")
        return {"id": video_id, **values, "video": video}

    def summarize(self, rows: list[dict[str, Any]]) -> None:
        ids = {row["id"] for row in rows}
        for row_id in sorted(ids):
            if PLAIN_ID.fullmatch(row_id):
                continue
            cleaned = re.sub(r"[^A-Za-z0-9_.\-]", "", row_id)
            clash = f"; it differs only by those characters from the id {cleaned!r}, a separate row" \
                if cleaned in ids else ""
            self.notes.append(f"The id {row_id!r} holds characters other than letters, digits, `_`, `.`, `-`; "
                              f"kept verbatim because its video file is named after it{clash}.")
