"""Mini MHaluBench, official layout: `MHaluBench_val-v0.1.json` + `data/image-to-text/` + `data/text-to-image/`.

Two items of each part: the captioning and VQA items of the CrossCheckGPT-copy mini release (mini/mhalubench.py,
same scenes and annotations) and text-to-image items whose annotated text is the user's prompt, split into
segments and claims; the drawn image makes every "non-hallucination" claim true and every "hallucination" claim
false (for text-to-image: the generated image does not show what the claim asks for). `image_path` is written as
the release writes it, a path the builder reduces to its file name.
"""
from __future__ import annotations

from pathlib import Path

from hallubench.registry import register_mini_release

from .files import write_bytes, write_json
from .media import Scene, Shape
from .mhalubench import HALLU, ITEMS as I2T_ITEMS, LEFT, MIDDLE, OK, RIGHT, segment_record

I2T = ("hbmini_000001.png", "hbmini_000003.png", "hbmini_000005.png", "hbmini_000006.png")
# image_name -> (scene, [(segment, [(claim, categories, label)])]): the prompt and what the generated image shows
T2I_ITEMS = {
    "t2i_mini_0001.png": (
        Scene((Shape("circle", "red", LEFT), Shape("circle", "red", RIGHT))), [
            ("Two red circles side by side", [
                ("There are two circles", ["object"], OK),
                ("The circles are red", ["attribute"], OK)]),
            ("with a blue square between them.", [
                ("There is a blue square between the circles", ["object", "attribute"], HALLU)]),
        ]),
    "t2i_mini_0002.png": (
        Scene((Shape("square", "green", MIDDLE),), text="OPEN", text_at=(50, 76)), [
            ("A green square above a sign that says \"CLOSED\".", [
                ("There is a green square", ["object", "attribute"], OK),
                ("The sign says \"CLOSED\"", ["scene-text"], HALLU)]),
        ]),
}


@register_mini_release("mhalubench_official")
def make(out: Path) -> Path:
    items = []
    for image_name in I2T:
        scene, task_type, segments = I2T_ITEMS[image_name]
        write_bytes(out / "data" / "image-to-text" / image_name, scene.png())
        items.append({"image_path": f"/MHaluBench/data/image-to-text/{image_name}", "task_type": task_type,
                      "response": " ".join(segment for segment, _ in segments),
                      "annotation": [segment_record(segment, claims) for segment, claims in segments]})
    for image_name, (scene, segments) in T2I_ITEMS.items():
        write_bytes(out / "data" / "text-to-image" / image_name, scene.png())
        items.append({"image_path": f"/MHaluBench/data/text-to-image/{image_name}", "task_type": "text-to-image",
                      "response": " ".join(segment for segment, _ in segments),
                      "annotation": [segment_record(segment, claims) for segment, claims in segments]})
    write_json(out / "MHaluBench_val-v0.1.json", items)
    return out
