"""POPE (Li et al. 2023, "Evaluating Object Hallucination in Large Vision-Language Models").

Two layouts of the official release:
- the authors' (github.com/AoiDragon/POPE): `output/coco/coco_pope_{random,popular,adversarial}.json` (JSON lines
  {question_id, image, text, label}) next to the COCO image folder `val2014/` (put the files in your COCO folder, or
  the images in the release; links out of the folder are refused). The SEEM-built A-OKVQA and GQA sets
  (`output/seem/{aokvqa,gqa}/<name>_pope_seem_<setting>.json`, JSON lists) are read too when present: A-OKVQA's
  images are COCO val2014 images as well, GQA's come from the GQA `images/` folder.
- the Hub copy lmms-lab/POPE (`data/test-*.parquet`: question_id, question, answer, image_source, category = the
  setting, and the image embedded), the COCO part only; its images are written to `val2014/<image_source>`.

Rows: id "pope-<dataset>-<setting>-<question_id>", the question and label as released (label lower-cased), the
image as `datasets.Image` (named by its place in the folder). Configs: one per dataset present (`coco` the default).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import datasets
from PIL import UnidentifiedImageError

from hallubench.builders.base import (ReleaseBuilder, RowError, check_relative, column_values, image_cell,
                                      open_parquet, subsets)
from hallubench.builders.safe_files import decode_image
from hallubench.errors import BuildError
from hallubench.registry import register_builder

SETTINGS = ("random", "popular", "adversarial")
DATASETS = ("coco", "aokvqa", "gqa")
# dataset -> (its files, with {setting}; the image folder)
LAYOUT = {
    "coco": ("output/coco/coco_pope_{setting}.json", "val2014"),
    "aokvqa": ("output/seem/aokvqa/aokvqa_pope_seem_{setting}.json", "val2014"),
    "gqa": ("output/seem/gqa/gqa_pope_seem_{setting}.json", "images"),
}
HUB_COLUMNS = ("question_id", "question", "answer", "image_source", "image", "category")


@register_builder
class Pope(ReleaseBuilder):
    NAME = "pope"
    HUB_RELEASE = "lmms-lab/POPE"
    # lmms-eval moved its copies there on 2026-07-30 ("to relieve lmms-lab storage pressure")
    HUB_MIRRORS = ("lmms-lab-encoder/POPE",)
    # the test split only: the repo's Full/ folder holds the same probes again (about 255 MB)
    HUB_FILES = ("data/test-*",)
    SUMMARY_COLUMNS = ("setting", "answer")
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="coco")]
    DEFAULT_OUTPUT_CONFIG = "coco"
    FEATURES = datasets.Features({
        "id": datasets.Value("string"),
        "dataset": datasets.Value("string"),
        "setting": datasets.Value("string"),
        "question_id": datasets.Value("int64"),
        "image_name": datasets.Value("string"),
        "image": datasets.Image(),
        "question": datasets.Value("string"),
        "answer": datasets.Value("string"),
    })

    def read_records(self) -> tuple[Path, Iterator[dict[str, Any]]]:
        hub_shards = sorted(self.source.glob("data/test-*.parquet")) if self.source.is_dir() else []
        if hub_shards:
            self.notes.append("Built from the Hub copy's parquet (COCO settings only; images as embedded there).")
            return self.source, self.hub_records(hub_shards)
        files = {(name, setting): self.source / pattern.format(setting=setting)
                 for name, (pattern, _) in LAYOUT.items() for setting in SETTINGS}
        missing = [str(path) for (name, _), path in files.items() if name == "coco" and not path.is_file()]
        if missing:
            raise BuildError(f"{self.source}: the POPE COCO files {', '.join(missing)} are missing; pass the folder "
                             "holding output/coco/ (github.com/AoiDragon/POPE) and val2014/, or the Hub copy "
                             f"({self.HUB_RELEASE}) with data/test-*.parquet.")
        present = [key for key, path in files.items() if path.is_file()]
        return self.source, ({**raw, "dataset": name, "setting": setting}
                             for name, setting in present for raw in read_probes(self.release_file(files[name, setting])))

    def hub_records(self, shards: list[Path]) -> Iterator[dict[str, Any]]:
        for shard in shards:
            parquet = open_parquet(self.release_file(shard), HUB_COLUMNS, f"{self.HUB_RELEASE}'s POPE parquet")
            for batch in parquet.iter_batches(batch_size=64, columns=list(HUB_COLUMNS)):
                for raw in batch.to_pylist():
                    yield {"question_id": raw["question_id"], "image": raw["image_source"], "text": raw["question"],
                           "label": raw["answer"], "dataset": "coco", "setting": raw["category"],
                           "embedded": raw["image"]}

    def row_id(self, index: int, raw: Any) -> str | None:
        if isinstance(raw, dict):
            return f"pope-{raw.get('dataset')}-{raw.get('setting')}-{raw.get('question_id')}"
        return super().row_id(index, raw)

    def convert(self, index: int, raw: dict[str, Any]) -> dict[str, Any]:
        for name in ("image", "text", "label"):
            if not isinstance(raw.get(name), str):
                raise RowError(f"field {name!r} must be a string, got {raw.get(name)!r}")
        try:
            question_id = int(raw.get("question_id"))
        except (TypeError, ValueError):
            raise RowError(f"question_id must be an integer, got {raw.get('question_id')!r}") from None
        label = raw["label"].strip().lower()
        if label not in ("yes", "no"):
            raise RowError(f"label must be 'yes' or 'no', got {raw['label']!r}")
        if raw["setting"] not in SETTINGS:
            raise RowError(f"setting (the Hub's category) {raw['setting']!r} is not one of {', '.join(SETTINGS)}")
        name = raw["image"]
        if not name or "/" in name or "\\" in name or name in (".", ".."):
            raise RowError(f"image {name!r} cannot name a file in the image folder")
        folder = LAYOUT[raw["dataset"]][1]
        if "embedded" in raw:
            rel = self.write_embedded(raw["embedded"], folder, name)
        else:
            rel = self.place_media(self.source / folder / name, f"{folder}/{name}")
        return {"id": self.row_id(index, raw), "dataset": raw["dataset"], "setting": raw["setting"],
                "question_id": question_id, "image_name": name, "image": image_cell(self.media_root, rel),
                "question": raw["text"], "answer": label}

    def write_embedded(self, image: Any, folder: str, name: str) -> str:
        """The Hub's embedded image written once to `<folder>/<name>` (with its format's suffix when the name has
        none, as lmms-lab's image_source has not); returns that path."""
        data = image.get("bytes") if isinstance(image, dict) else None
        if not data:
            raise RowError("image has no embedded bytes")
        try:
            with decode_image(data) as img:
                suffix = "" if "." in name else f".{(img.format or 'png').lower().replace('jpeg', 'jpg')}"
        except (UnidentifiedImageError, OSError, ValueError) as err:
            raise RowError(f"image bytes are not a readable image ({err})") from err
        rel = f"{folder}/{name}{suffix}"
        check_relative(rel)
        dest = self.media_root / rel
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        return rel

    def summarize(self, rows: list[dict[str, Any]]) -> None:
        extra = sorted({row["dataset"] for row in rows} - {"coco"})
        if extra:
            self.notes.append(f"The release also held the SEEM-built sets: {', '.join(extra)}.")

    def output_configs(self, dataset: datasets.Dataset) -> dict[str, datasets.Dataset]:
        present = set(column_values(dataset, "dataset"))
        return subsets(dataset, "dataset", [name for name in DATASETS if name in present])


def read_probes(path: Path) -> list[Any]:
    """The probes of one file: JSON lines (the COCO files) or one JSON list (the SEEM-built files)."""
    try:
        text = path.read_text(encoding="utf-8")
        if text.lstrip().startswith("["):
            return json.loads(text)
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BuildError(f"{path} is not readable POPE JSON ({err}); re-download it from github.com/AoiDragon/POPE.") from err
