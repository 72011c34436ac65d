"""Mini POPE in the authors' layout: `output/coco/coco_pope_<setting>.json` (JSON lines, as github.com/AoiDragon/POPE
ships them) + the COCO image folder `val2014/COCO_val2014_<12-digit id>.jpg`; or, with `hub=True`, the layout of the
Hub copy lmms-lab/POPE: `data/test-00000-of-00001.parquet` with the images embedded.

Four drawn scenes stand for COCO images; their "objects" are the coloured shapes drawn. As in POPE, each image
is probed about objects it holds ("yes") and as many it lacks ("no"), with "Is there a {} in the image?" (the
authors' default template); the three settings differ only in the absent objects asked about: any absent object
(random), the objects most frequent over all images (popular), the objects most often seen together with this
image's objects (adversarial), as main.py samples them.
"""
from __future__ import annotations

import io
import random
from collections import Counter
from itertools import combinations
from pathlib import Path

from hallubench.registry import register_mini_release

from .files import write_bytes
from .media import Scene, Shape

SETTINGS = ("random", "popular", "adversarial")
TEMPLATE = "Is there a {} in the image?"
LEFT, RIGHT, MIDDLE = (32, 48), (96, 48), (64, 48)
# COCO id -> the scene; every object is "<color> <shape>"
SCENES = {
    1: Scene((Shape("circle", "red", LEFT), Shape("square", "blue", RIGHT))),
    2: Scene((Shape("circle", "red", LEFT), Shape("triangle", "green", RIGHT))),
    3: Scene((Shape("square", "blue", LEFT), Shape("circle", "yellow", RIGHT))),
    4: Scene((Shape("triangle", "green", LEFT), Shape("square", "red", RIGHT), Shape("circle", "blue", MIDDLE, 10))),
}
VOCABULARY = ("red circle", "blue square", "green triangle", "yellow circle", "red square", "blue circle",
              "yellow square", "green circle", "red triangle")


def file_name(coco_id: int) -> str:
    return f"COCO_val2014_{coco_id:012d}.jpg"


def objects(scene: Scene) -> list[str]:
    return [f"{shape.color} {shape.kind}" for shape in scene.shapes]


def negatives(coco_id: int, setting: str, k: int) -> list[str]:
    """k absent objects: drawn at random (seeded by the image), by frequency over all images (popular), or by
    co-occurrence with this image's objects (adversarial); ties by vocabulary order."""
    present = objects(SCENES[coco_id])
    absent = [name for name in VOCABULARY if name not in present]
    if setting == "random":
        random.Random(coco_id).shuffle(absent)
    elif setting == "popular":
        frequency = Counter(name for scene in SCENES.values() for name in objects(scene))
        absent.sort(key=lambda name: -frequency[name])
    elif setting == "adversarial":
        together = Counter(pair for scene in SCENES.values() for pair in combinations(sorted(objects(scene)), 2))
        absent.sort(key=lambda name: -sum(together[tuple(sorted((name, p)))] for p in present))
    return absent[:k]


def probes(setting: str) -> list[dict]:
    """The setting's questions in the authors' order: per image, a present object then an absent one, in turn."""
    rows = []
    for coco_id, scene in SCENES.items():
        present = objects(scene)[:2]
        for yes, no in zip(present, negatives(coco_id, setting, len(present))):
            for name, label in ((yes, "yes"), (no, "no")):
                rows.append({"question_id": len(rows) + 1, "image": file_name(coco_id),
                             "text": TEMPLATE.format(name), "label": label})
    return rows


def jpeg(scene: Scene) -> bytes:
    buffer = io.BytesIO()
    scene.image().save(buffer, format="JPEG", quality=95)
    return buffer.getvalue()


def write_hub_parquet(path: Path) -> None:
    """The lmms-lab/POPE columns: id, question_id, question, answer, image_source, image (embedded), category."""
    import datasets

    features = datasets.Features({name: datasets.Value("string") for name in
                                  ("id", "question_id", "question", "answer", "image_source")})
    features["image"] = datasets.Image()
    features["category"] = datasets.Value("string")
    rows = [{"id": str(i), "question_id": str(probe["question_id"]), "question": probe["text"],
             "answer": probe["label"], "image_source": probe["image"].removesuffix(".jpg"),
             "image": {"bytes": jpeg(SCENES[int(probe["image"][-16:-4])]), "path": None}, "category": setting}
            for i, (setting, probe) in enumerate((s, p) for s in SETTINGS for p in probes(s))]
    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(path))


@register_mini_release("pope")
def make(out: Path, hub: bool = False) -> Path:
    if hub:
        write_hub_parquet(out / "data" / "test-00000-of-00001.parquet")
        return out
    for coco_id, scene in SCENES.items():
        write_bytes(out / "val2014" / file_name(coco_id), jpeg(scene))
    for setting in SETTINGS:
        lines = "".join(f'{{"question_id": {p["question_id"]}, "image": "{p["image"]}", "text": "{p["text"]}", '
                        f'"label": "{p["label"]}"}}\n' for p in probes(setting))
        write_bytes(out / "output" / "coco" / f"coco_pope_{setting}.json", lines.encode())
    return out
