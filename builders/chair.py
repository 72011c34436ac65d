"""CHAIR (Rohrbach et al. 2018): COCO 2014 val images with their ground-truth objects, for captioning.

Reads COCO's own layout: `annotations/instances_val2014.json` and `annotations/captions_val2014.json` (from
annotations_trainval2014.zip) and the images `val2014/<file_name>` (val2014.zip), the files chair.py reads.
The papers that report CHAIR on vision-language models caption 500 val2014 images drawn at random (OPERA's
chair_eval.py: the first 500 of a shuffled folder listing) and publish no list; this builder draws
`SUBSET_SIZE` images with `random.Random(SEED)` from the image ids in sorted order, so every build draws the
same ones (all images when the release has fewer).

Rows: id "chair-<image_id>", the image (`datasets.Image`), `objects` (the image's instance category names,
sorted, once each) and `captions` (its reference captions in file order): the ground truth chair.py builds its
object sets from.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import datasets

from hallubench.builders.base import ReleaseBuilder, RowError, image_cell
from hallubench.errors import BuildError
from hallubench.registry import register_builder

SUBSET_SIZE = 500
SEED = 2018
INSTANCES, CAPTIONS, IMAGES = "annotations/instances_val2014.json", "annotations/captions_val2014.json", "val2014"


@register_builder
class Chair(ReleaseBuilder):
    NAME = "chair"
    ELSEWHERE = ("COCO 2014 val (cocodataset.org: annotations_trainval2014.zip for annotations/instances_val2014.json "
                 "and captions_val2014.json, val2014.zip for val2014/)")
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="default")]
    FEATURES = datasets.Features({
        "id": datasets.Value("string"),
        "image_id": datasets.Value("int64"),
        "image_name": datasets.Value("string"),
        "image": datasets.Image(),
        "objects": datasets.List(datasets.Value("string")),
        "captions": datasets.List(datasets.Value("string")),
    })

    def read_records(self) -> tuple[Path, list[dict[str, Any]]]:
        instances = self.load(INSTANCES, ("images", "annotations", "categories"))
        captions = self.load(CAPTIONS, ("annotations",))
        try:
            names = {c["id"]: c["name"] for c in instances["categories"]}
            images = {image["id"]: image for image in instances["images"]}
            objects: dict[int, set[str]] = {image_id: set() for image_id in images}
            for annotation in instances["annotations"]:
                if annotation["image_id"] in objects:
                    objects[annotation["image_id"]].add(names[annotation["category_id"]])
            refs: dict[int, list[str]] = {image_id: [] for image_id in images}
            for annotation in captions["annotations"]:
                if annotation["image_id"] in refs:
                    refs[annotation["image_id"]].append(annotation["caption"])
        except (KeyError, TypeError) as err:
            raise BuildError(f"{self.source / INSTANCES} or {CAPTIONS}: not COCO's annotation format ({err!r} "
                             "missing or mistyped); re-download annotations_trainval2014.zip.") from err
        ids = sorted(images)
        chosen = sorted(random.Random(SEED).sample(ids, min(SUBSET_SIZE, len(ids))))
        self.notes.append(f"{len(chosen)} of the {len(ids)} val2014 images, drawn with random.Random({SEED}) from the "
                          "sorted image ids (no official list exists).")
        return self.source / INSTANCES, [{**images[i], "objects": sorted(objects[i]), "captions": refs[i]} for i in chosen]

    def load(self, rel: str, keys: tuple[str, ...]) -> dict[str, Any]:
        path = self.source / rel
        if not path.is_file():
            raise BuildError(f"{path} not found: pass the COCO folder holding {INSTANCES}, {CAPTIONS} and {IMAGES}/.")
        try:
            with open(self.release_file(path), encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise BuildError(f"{path} is not readable JSON ({err}); re-download it from cocodataset.org.") from err
        if not isinstance(data, dict) or any(not isinstance(data.get(key), list) for key in keys):
            raise BuildError(f"{path} is not COCO's annotation format: it needs the lists {', '.join(keys)}.")
        return data

    def row_id(self, index: int, raw: Any) -> str | None:
        return f"chair-{raw.get('id')}" if isinstance(raw, dict) else super().row_id(index, raw)

    def convert(self, index: int, raw: dict[str, Any]) -> dict[str, Any]:
        name = raw.get("file_name")
        if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
            raise RowError(f"file_name {name!r} cannot name a file in {IMAGES}/")
        rel = self.place_media(self.source / IMAGES / name, f"{IMAGES}/{name}")
        return {"id": self.row_id(index, raw), "image_id": raw["id"], "image_name": name,
                "image": image_cell(self.media_root, rel), "objects": raw["objects"], "captions": raw["captions"]}
