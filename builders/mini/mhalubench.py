"""Mini MHaluBench: `image_to_text_annotated.json` (upstream keys, `repsonse` sic) + `images/<image_name>`.

Each response is the join of its segments; a segment is labelled "hallucination" iff one of its claims
is, and its categories are the union of its claims' categories, as in the upstream file. The drawn
scene makes every "non-hallucination" claim true and every "hallucination" claim false. The upstream
file has only "image-caption" items; two "vqa" items are added so both task types are exercised.
"""
from __future__ import annotations

from pathlib import Path

from hallubench.registry import register_mini_release

from .files import write_bytes, write_json
from .media import Scene, Shape

HALLU, OK = "hallucination", "non-hallucination"
LEFT, RIGHT, MIDDLE = (36, 48), (92, 48), (64, 48)

# image_name -> (scene, task_type, [(segment, [(claim, categories, label)])])
ITEMS = {
    "hbmini_000001.png": (
        Scene((Shape("circle", "red", LEFT), Shape("square", "blue", RIGHT))), "image-caption", [
            ("The image shows a red circle on the left and a blue square on the right.", [
                ("There is a red circle", ["object", "attribute"], OK),
                ("The circle is on the left", ["attribute"], OK),
                ("There is a blue square on the right", ["object", "attribute"], OK)]),
            ("A green triangle sits between them.", [
                ("There is a green triangle", ["object", "attribute"], HALLU)]),
        ]),
    "hbmini_000002.png": (
        Scene((Shape("square", "yellow", (64, 40)),), background="black", text="42", text_at=(58, 70)),
        "image-caption", [
            ("A yellow square is drawn on a black background.", [
                ("There is a yellow square", ["object", "attribute"], OK),
                ("The background is black", ["attribute"], OK)]),
            ("The number 24 is written below it.", [
                ("The number 24 is written below the square", ["scene-text"], HALLU)]),
        ]),
    "hbmini_000003.png": (
        Scene((Shape("circle", "green", LEFT), Shape("circle", "green", RIGHT))), "image-caption", [
            ("Two green circles are shown side by side.", [
                ("There are two circles", ["object"], OK),
                ("The circles are green", ["attribute"], OK)]),
            ("A circle has no corners.", [
                ("A circle has no corners", ["fact"], OK)]),
        ]),
    "hbmini_000004.png": (
        Scene((Shape("triangle", "blue", MIDDLE, radius=24),)), "image-caption", [
            ("A blue triangle points upward.", [
                ("There is a blue triangle", ["object", "attribute"], OK),
                ("The triangle points upward", ["attribute"], OK)]),
            ("It stands next to a yellow circle and a red square.", [
                ("There is a yellow circle", ["object", "attribute"], HALLU),
                ("There is a red square", ["object", "attribute"], HALLU)]),
        ]),
    "hbmini_000005.png": (
        Scene((Shape("square", "red", LEFT), Shape("circle", "green", RIGHT))), "vqa", [
            ("Yes, there is a green circle to the right of the red square.", [
                ("There is a green circle", ["object", "attribute"], OK),
                ("The circle is to the right of the red square", ["attribute"], OK)]),
        ]),
    "hbmini_000006.png": (
        Scene((Shape("circle", "blue", MIDDLE),)), "vqa", [
            ("The circle is red.", [
                ("The circle is red", ["attribute"], HALLU)]),
        ]),
}


def segment_record(segment: str, claims: list[tuple[str, list[str], str]]) -> dict:
    categories = list(dict.fromkeys(c for _, cats, _ in claims for c in cats))
    return {
        "segment": segment,
        "claims": [{"claim": claim, "claim_category": cats, "claim_label": label} for claim, cats, label in claims],
        "segment_category": categories,
        "segment_label": HALLU if any(label == HALLU for _, _, label in claims) else OK,
    }


@register_mini_release("mhalubench")
def make(out: Path) -> Path:
    items = []
    for image_name, (scene, task_type, segments) in ITEMS.items():
        write_bytes(out / "images" / image_name, scene.png())
        items.append({
            "image_name": image_name,
            "repsonse": " ".join(segment for segment, _ in segments),
            "task_type": task_type,
            "annotation": [segment_record(segment, claims) for segment, claims in segments],
        })
    write_json(out / "image_to_text_annotated.json", items)
    return out
