"""CCHall (Zhang et al. 2025): test.parquet (or the Hub's data/test-*.parquet shards) with embedded images ->
rows + images/<id>.png.

Ids are "cchall-<index>" by position in test.parquet (question_id is kept as its own column but is
not documented as unique). Images are written as PNG (PNG bytes as they are, other formats re-encoded
losslessly from the decoded image) to images/<id>.png and embedded in the parquet as `datasets.Image`. Configs: one per dataset_source plus `all`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import datasets
from PIL import UnidentifiedImageError
from hallubench.errors import BuildError
from hallubench.registry import register_builder
from hallubench.builders.base import (ReleaseBuilder, RowError, check_relative, column_values, image_cell,
                                      open_parquet, strings, subsets)
from hallubench.builders.safe_files import decode_image

TEXT_FIELDS = ("dataset_source", "image_id", "question", "response1", "response2", "choice", "label",
               "language", "language_category")
COLUMNS = ("question_id",) + TEXT_FIELDS + ("image",)


@register_builder
class CCHall(ReleaseBuilder):
    NAME = "cchall"
    HUB_RELEASE = "67L11/CCHall"
    SUMMARY_COLUMNS = ("label", "language_category")
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="all")]
    DEFAULT_OUTPUT_CONFIG = "all"
    FEATURES = datasets.Features({
        "id": datasets.Value("string"),
        "question_id": datasets.Value("int64"),
        **{name: datasets.Value("string") for name in TEXT_FIELDS},
        "image": datasets.Image(),
    })

    def read_records(self) -> tuple[Path, Iterator[dict[str, Any]]]:
        files = self.parquet_files()
        parquets = [open_parquet(self.release_file(path), COLUMNS, "CCHall's test.parquet") for path in files]
        where = files[0] if len(files) == 1 else self.source
        return where, (row for parquet in parquets
                       for batch in parquet.iter_batches(batch_size=64, columns=list(COLUMNS))
                       for row in batch.to_pylist())

    def parquet_files(self) -> list[Path]:
        """The test split: the file given, the folder's test.parquet, or its shards data/test-*.parquet in order
        (the layout `push_to_hub` writes)."""
        if not self.source.is_dir() or (self.source / "test.parquet").exists():
            return [self.source / "test.parquet" if self.source.is_dir() else self.source]
        return sorted(self.source.glob("data/test-*.parquet")) or [self.source / "test.parquet"]

    def convert(self, index: int, raw: dict[str, Any]) -> dict[str, Any]:
        from hallubench.metrics.cchall.cchall import LABELS  # here, not at import: the metric imports evaluate

        values = strings(raw, TEXT_FIELDS)
        if values["label"] not in LABELS:
            raise RowError(f"label {values['label']!r} is not one of CCHall's four types {LABELS}")
        if not isinstance(raw["question_id"], int):
            raise RowError(f"question_id must be an integer, got {raw['question_id']!r}")
        row_id = self.row_id(index, raw)
        return {"id": row_id, "question_id": raw["question_id"], **values,
                "image": image_cell(self.media_root, self.write_png(raw["image"], f"images/{row_id}.png"))}

    def write_png(self, image: Any, rel: str) -> str:
        """Write the HF Image struct {bytes, path} as a PNG at `rel` under the output folder."""
        data = image.get("bytes") if isinstance(image, dict) else None
        if not data:
            raise RowError("image has no embedded bytes")
        check_relative(rel)
        dest = self.media_root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            with decode_image(data) as img:  # bounded: a decompression bomb is a RowError
                if img.format == "PNG":
                    dest.write_bytes(data)
                else:
                    img.save(dest, format="PNG")
        except (UnidentifiedImageError, OSError, ValueError) as err:
            dest.unlink(missing_ok=True)
            raise RowError(f"image bytes are not a readable image ({err})") from err
        return rel

    def output_configs(self, dataset: datasets.Dataset) -> dict[str, datasets.Dataset]:
        sources = sorted(set(column_values(dataset, "dataset_source")))
        if "all" in sources:
            raise BuildError(f"{self.source}: a dataset_source is named 'all', which clashes with the `all` config.")
        return {**subsets(dataset, "dataset_source", sources), "all": dataset}
