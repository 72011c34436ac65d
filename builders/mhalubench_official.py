"""MHaluBench, all three parts, from the official release (Hub `openkg/MHaluBench`, Chen et al. 2024, UniHD).

The release (huggingface.co/datasets/openkg/MHaluBench, the data behind github.com/zjunlp/EasyDetect) holds the
validation set the paper scores detectors on, `MHaluBench_val-v0.1.json`, and a later `MHaluBench_val-v0.2.json`.
v0.1 is read where present, on purpose: UniHD's paper scores that one ("we conducted experiments using the
evaluation benchmark from our published V0.1 version", footnote 4), so its Table 2 compares with a build of it; to
build v0.2 (the later, apparently corrected file) name it as --source. The card says which file was read, the images under `data/image-to-text/` (COCO and
TextVQA images of the image-captioning and VQA items) and `data/text-to-image/` (the generated images of the
text-to-image items), and `MHaluBench_train.json` (HalDet-LLaVA's training set, not read here).

Each item is one annotated text with its image: for image captioning (`task_type` "image-caption") and VQA
("vqa") the model's response about the image, for text-to-image ("text-to-image") the user's prompt the image was
generated from. Its `annotation` splits the text into segments and each segment into claims, labelled
"hallucination" / "non-hallucination" with their categories, in the layout of CrossCheckGPT's copy of the
image-to-text part (builders/mhalubench.py, whose checks are reused: a segment is a hallucination iff one of its
claims is). The text is read from `response` (or `repsonse`, sic, as in that copy), the image from `image_path`
(or `image_name`): only its file name is used, looked up in the part's data/ folder, so a path in the JSON never
reaches outside the release. Ids are "mhalubench_official-<index>" by position in the JSON.

Published configs: one per part (`image_caption`, `vqa`, `text_to_image`) and `all`.
"""
from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import datasets

from hallubench.builders.base import ReleaseBuilder, RowError, column_values, image_cell, load_json_list, strings, subsets
from hallubench.builders.mhalubench import SEGMENT, segment
from hallubench.errors import BuildError
from hallubench.registry import register_builder

VAL_FILES = ("MHaluBench_val-v0.1.json", "MHaluBench_val-v0.2.json")
# task_type -> (published config, the data/ folder of its images)
PARTS = {"image-caption": ("image_caption", "image-to-text"), "vqa": ("vqa", "image-to-text"),
         "text-to-image": ("text_to_image", "text-to-image")}


def first(raw: dict, names: tuple[str, str]) -> str:
    """The field `names[0]`, or its other spelling `names[1]`; RowError naming both when neither is there."""
    for name in names:
        if name in raw:
            return strings(raw, (name,))[name]
    raise RowError(f"missing field {names[0]!r} (or {names[1]!r})")


@register_builder
class MHaluBenchOfficial(ReleaseBuilder):
    NAME = "mhalubench_official"
    HUB_RELEASE = "openkg/MHaluBench"
    HUB_FILES = (*VAL_FILES, "data/*")  # not MHaluBench_train.json (HalDet-LLaVA's training set)
    SUMMARY_COLUMNS = ("task_type",)
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="all")]
    DEFAULT_OUTPUT_CONFIG = "all"
    FEATURES = datasets.Features({
        "id": datasets.Value("string"),
        "task_type": datasets.Value("string"),
        "image_path": datasets.Value("string"),
        "image_name": datasets.Value("string"),
        "image": datasets.Image(),
        "response": datasets.Value("string"),
        "segments": datasets.List(SEGMENT),
    })

    def read_records(self) -> tuple[Path, list[Any]]:
        if self.source.is_dir():
            found = [self.source / name for name in VAL_FILES if (self.source / name).is_file()]
            if not found:
                raise BuildError(f"{self.source}: none of {', '.join(VAL_FILES)} found; download the release "
                                 f"(huggingface.co/datasets/{self.HUB_RELEASE}) or name the validation JSON as --source.")
            path = found[0]
        else:
            path = self.source
        self.root = path.parent
        self.notes.append(f"Read {path.name}" + (" (the version UniHD's paper scores)." if path.name == VAL_FILES[0]
                                                  else "."))
        return path, load_json_list(self.release_file(path), "the MHaluBench validation items (image_path, response, "
                                                            "task_type, annotation)")

    def convert(self, index: int, raw: Any) -> dict[str, Any]:
        task_type = strings(raw, ("task_type",))["task_type"]
        if task_type not in PARTS:
            raise RowError(f"task_type {task_type!r} is none of {', '.join(PARTS)}")
        given = first(raw, ("image_path", "image_name"))
        name = PureWindowsPath(PurePosixPath(given).name).name
        if not name or name in (".", ".."):
            raise RowError(f"image_path {given!r} names no image file")
        folder = PARTS[task_type][1]
        rel = self.place_media(self.root / "data" / folder / name, f"data/{folder}/{name}")
        segments = raw.get("annotation")
        if not isinstance(segments, list) or not segments:
            raise RowError("field 'annotation' must be a non-empty list of segments")
        return {"id": self.row_id(index, raw), "task_type": task_type, "image_path": given, "image_name": name,
                "image": image_cell(self.media_root, rel), "response": first(raw, ("response", "repsonse")),
                "segments": [segment(s, f"annotation[{i}]") for i, s in enumerate(segments)]}

    def output_configs(self, dataset: datasets.Dataset) -> dict[str, datasets.Dataset]:
        present = set(column_values(dataset, "task_type"))
        parts = subsets(dataset, "task_type", [t for t in PARTS if t in present])
        return {**{PARTS[t][0]: rows for t, rows in parts.items()}, "all": dataset}
