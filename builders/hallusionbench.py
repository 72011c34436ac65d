"""HallusionBench (Guan et al., CVPR 2024): 1,129 yes/no questions over 346 figures, Visual Dependent (VD) and
Visual Supplement (VS).

Reads either layout of the release:
- the authors' (github.com/tianyi-lab/HallusionBench): `HallusionBench.json` next to `hallusion_bench/` (the
  unzipped hallusion_bench.zip), each row's `filename` ("./VD/illusion/0_0.png", or null for a question asked
  without a figure) relative to that folder;
- the Hub copy `lmms-lab/HallusionBench` (HUB_RELEASE): `data/image-*.parquet` (the 951 rows with a figure,
  embedded as an image column) and `data/non_image-*.parquet` (the 178 without), the same fields otherwise.
Both hold the same 1,129 rows; rows keep the eleven official fields as strings (the upstream types), the figure
becomes `image` (a `datasets.Image` named `hallusion_bench/<category>/<subcategory>/<set_id>_<figure_id>.png`, also
a file in the folder), null when `visual_input` is "0". Ids are "hallusionbench-<category>-<subcategory>-<set_id>-
<figure_id>-<question_id>", the key the authors' scorer asserts unique (utils.py `get_eval_all`).
"""
from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any, Iterator

import datasets

from hallubench.errors import BuildError
from hallubench.registry import register_builder
from hallubench.builders.base import (ReleaseBuilder, RowError, check_relative, image_cell, load_json_list,
                                      open_parquet, strings)

FIELDS = ("category", "subcategory", "visual_input", "set_id", "figure_id", "sample_note", "question_id",
          "question", "gt_answer_details", "gt_answer", "filename")
KEY = ("category", "subcategory", "set_id", "figure_id", "question_id")
JSON_FILE = "HallusionBench.json"
IMAGE_DIR = "hallusion_bench"
HUB_SPLITS = ("image", "non_image")
# Fields a Hub copy may lack (lmms-eval reads neither): a missing filename is derived from the key as the authors'
# get_image_file_location does, a missing sample_note stays null; the build notes say so.
HUB_OPTIONAL = ("sample_note", "filename")


@register_builder
class HallusionBench(ReleaseBuilder):
    NAME = "hallusionbench"
    HUB_RELEASE = "lmms-lab/HallusionBench"
    HUB_MIRRORS = ("lmms-lab-encoder/HallusionBench",)  # lmms-eval's copies moved there on 2026-07-30
    HUB_FILES = tuple(f"data/{split}-*" for split in HUB_SPLITS)
    SUMMARY_COLUMNS = ("category", "subcategory", "visual_input", "gt_answer")
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="all")]
    DEFAULT_OUTPUT_CONFIG = "all"
    FEATURES = datasets.Features({"id": datasets.Value("string"),
                                  **{name: datasets.Value("string") for name in FIELDS},
                                  "image": datasets.Image()})

    def read_records(self) -> tuple[Path, Iterator[dict[str, Any]] | list[Any]]:
        if (self.source / JSON_FILE).is_file() or self.source.name == JSON_FILE:
            path = self.source / JSON_FILE if self.source.is_dir() else self.source
            self.images = path.parent / IMAGE_DIR
            return path, load_json_list(self.release_file(path), "the HallusionBench questions: a list of {"
                                        + ", ".join(FIELDS) + "}")
        self.images, self.lacking = None, []
        files = [file for split in HUB_SPLITS for file in sorted(self.source.glob(f"data/{split}-*.parquet"))]
        if not files:
            raise BuildError(f"{self.source}: neither {JSON_FILE} (the GitHub release, with {IMAGE_DIR}/ from "
                             "hallusion_bench.zip) nor data/image-*.parquet and data/non_image-*.parquet (the Hub "
                             f"copy {self.HUB_RELEASE}) found.")
        missing = [split for split in HUB_SPLITS if not any(f.name.startswith(f"{split}-") for f in files)]
        if missing:
            raise BuildError(f"{self.source}/data has no {missing[0]}-*.parquet: the Hub copy holds the questions "
                             f"with a figure (image) and without one (non_image); download both.")
        required = [name for name in FIELDS if name not in HUB_OPTIONAL]
        parquets = [open_parquet(self.release_file(file), required, f"a split of {self.HUB_RELEASE}") for file in files]
        self.lacking = sorted({name for parquet in parquets for name in HUB_OPTIONAL
                               if name not in parquet.schema_arrow.names})
        return self.source / "data", (row for parquet in parquets for batch in parquet.iter_batches(batch_size=64)
                                      for row in batch.to_pylist())

    def row_id(self, index: int, raw: Any) -> str | None:
        if isinstance(raw, dict) and all(isinstance(raw.get(name), str) for name in KEY):
            return "-".join([self.NAME, *(raw[name] for name in KEY)])
        return super().row_id(index, raw)

    def convert(self, index: int, raw: Any) -> dict[str, Any]:
        if self.images is None and isinstance(raw, dict) and any(name not in raw for name in HUB_OPTIONAL):
            raw = {"sample_note": None, "filename": _authors_filename(raw), **raw}
        values = strings(raw, FIELDS, nullable=("filename",) if self.images else HUB_OPTIONAL)
        if values["category"] not in ("VD", "VS"):
            raise RowError(f"category {values['category']!r} is neither 'VD' nor 'VS'")
        if values["visual_input"] not in ("0", "1", "2") or values["gt_answer"] not in ("0", "1"):
            raise RowError(f"visual_input must be '0', '1' or '2' and gt_answer '0' or '1'; got "
                           f"{values['visual_input']!r} and {values['gt_answer']!r}")
        if (values["visual_input"] == "0") != (values["filename"] is None):
            raise RowError(f"visual_input {values['visual_input']!r} with filename {values['filename']!r}: a question "
                           "has a figure exactly when visual_input is not '0'")
        row = {"id": self.row_id(index, raw), **values, "image": None}
        if values["filename"] is not None:
            rel = f"{IMAGE_DIR}/{PurePosixPath(values['filename'].removeprefix('./'))}"
            check_relative(rel)
            placed = self.place_media(self.images / rel.removeprefix(f"{IMAGE_DIR}/"), rel) if self.images \
                else self.write_embedded(raw.get("image"), rel)
            row["image"] = image_cell(self.media_root, placed)
        return row

    def write_embedded(self, image: Any, rel: str) -> str:
        """The Hub copy's embedded figure {bytes, path}, written as it is at `rel` (a figure of several rows once)."""
        data = image.get("bytes") if isinstance(image, dict) else None
        if not data:
            raise RowError("the row names a figure but its image column holds no embedded bytes")
        dest = self.media_root / rel
        if not dest.exists():  # image_cell then checks the bytes are an image of a safe size
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        return rel

    def summarize(self, rows: list[dict[str, Any]]) -> None:
        figures = {row["image"]["path"] for row in rows if row["image"]}
        self.notes.append(f"{len(rows)} questions, {len(figures)} figures; "
                          f"{sum(row['image'] is None for row in rows)} questions are asked without a figure "
                          "(visual_input 0).")
        if self.images is None and self.lacking:
            self.notes.append(f"The Hub copy had no {' or '.join(self.lacking)} column: filename is derived as "
                              "./<category>/<subcategory>/<set_id>_<figure_id>.png for rows with a figure (the "
                              "authors' get_image_file_location), sample_note is null.")


def _authors_filename(raw: dict[str, Any]) -> str | None:
    """The figure's path as the authors' get_image_file_location builds it; None for visual_input 0."""
    if str(raw.get("visual_input")) == "0" or not all(isinstance(raw.get(k), str) for k in KEY[:4]):
        return None
    return f"./{raw['category']}/{raw['subcategory']}/{raw['set_id']}_{raw['figure_id']}.png"

