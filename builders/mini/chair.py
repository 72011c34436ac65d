"""Mini CHAIR in COCO 2014's layout: `annotations/instances_val2014.json`, `annotations/captions_val2014.json` and
`val2014/COCO_val2014_<12-digit id>.jpg`, as cocodataset.org ships them and chair.py reads them.

Six drawn scenes stand for COCO images; each holds one shape per object and the objects' names written on it, so
the instance annotations (real COCO category ids and names) are true to the image. The reference captions name the
objects, some through synonyms and plurals ("a puppy", "two men"), as COCO's do, since chair.py takes ground-truth
objects from the captions too.
"""
from __future__ import annotations

import io
from pathlib import Path

from hallubench.registry import register_mini_release

from .files import write_bytes, write_json
from .media import Scene, Shape

# COCO 2014 category id -> name (the real ids)
CATEGORIES = {1: "person", 3: "car", 17: "cat", 18: "dog", 34: "frisbee", 37: "sports ball", 38: "kite",
              59: "pizza", 62: "chair", 67: "dining table", 70: "toilet", 72: "tv", 85: "clock"}
SPOTS = ((28, 56), (64, 56), (100, 56))
SHAPES = ("circle", "square", "triangle")
COLORS = ("red", "blue", "green")
# image id -> (its objects, its reference captions)
IMAGES = {
    42: (("dog", "frisbee"), ("A puppy jumps to catch a frisbee.", "A dog playing with a frisbee in a park.")),
    73: (("person", "car"), ("Two men stand next to a parked car.", "A man walking past an automobile.")),
    139: (("cat", "tv"), ("A kitten watches the television.", "A cat sitting in front of a TV.")),
    241: (("pizza", "dining table", "chair"), ("A pizza on a table next to a chair.",
                                              "A large pizza is served on the dining table.")),
    357: (("toilet",), ("A white toilet in a small bathroom.", "The seat of the toilet is up.")),
    428: (("kite", "person", "sports ball"), ("A child flies a kite while a ball lies on the grass.",
                                             "People with a kite and a soccer ball.")),
}


def file_name(image_id: int) -> str:
    return f"COCO_val2014_{image_id:012d}.jpg"


def scene(objects: tuple[str, ...]) -> Scene:
    shapes = tuple(Shape(SHAPES[i], COLORS[i], SPOTS[i], radius=12) for i in range(len(objects)))
    return Scene(shapes, text=", ".join(objects))


def jpeg(image_scene: Scene) -> bytes:
    buffer = io.BytesIO()
    image_scene.image().save(buffer, format="JPEG", quality=95)
    return buffer.getvalue()


@register_mini_release("chair")
def make(out: Path) -> Path:
    ids = {name: cid for cid, name in CATEGORIES.items()}
    images = [{"license": 1, "file_name": file_name(i), "height": 96, "width": 128, "id": i} for i in IMAGES]
    instances, captions = [], []
    for image_id, (objects, refs) in IMAGES.items():
        write_bytes(out / "val2014" / file_name(image_id), jpeg(scene(objects)))
        for k, name in enumerate(objects):
            x, y = SPOTS[k]
            instances.append({"segmentation": [[x - 12, y - 12, x + 12, y - 12, x + 12, y + 12, x - 12, y + 12]],
                              "area": 576.0, "iscrowd": 0, "image_id": image_id, "bbox": [x - 12, y - 12, 24, 24],
                              "category_id": ids[name], "id": len(instances) + 1})
        captions += [{"image_id": image_id, "id": len(captions) + k + 1, "caption": text} for k, text in enumerate(refs)]
    head = {"info": {"description": "hallubench mini COCO 2014 val"}, "licenses": [{"id": 1, "name": "CC BY 4.0"}]}
    write_json(out / "annotations" / "instances_val2014.json", {**head, "images": images, "annotations": instances,
               "categories": [{"supercategory": "object", "id": cid, "name": name} for cid, name in CATEGORIES.items()]})
    write_json(out / "annotations" / "captions_val2014.json", {**head, "images": images, "annotations": captions})
    return out
