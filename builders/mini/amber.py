"""Mini AMBER: `data/annotations.json`, `data/query/query_*.json`, `data/relation.json`, `data/safe_words.txt` as in
github.com/junyangwang0410/AMBER, and `image/AMBER_<n>.jpg` as the Google-Drive image archive unpacks.

As upstream: ids 1..(number of images) are the generative items ("Describe this image.", one per image, with the
image's `truth` and `hallu` objects), the yes/no questions follow (attribute, then existence, then relation), each
query file lists its part, and a relation question answered "no" has type "relation" (upstream's 689 do). The
objects are words of the release's relation.json that a drawn shape can stand for (sun, moon, ball, kite...);
`relation.json` and `safe_words.txt` are the release's own (the amber metric's copy).
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from hallubench.registry import register_mini_release

from .files import write_bytes, write_json
from .media import Scene, Shape

DESCRIBE = "Describe this image."
# query file suffix -> the annotation types it holds
PARTS = {
    "discriminative-attribute": ("discriminative-attribute-state", "discriminative-attribute-number",
                                 "discriminative-attribute-action"),
    "discriminative-existence": ("discriminative-hallucination",),
    "discriminative-relation": ("discriminative-relation", "relation"),
}


@dataclass(frozen=True)
class Picture:
    scene: Scene
    truth: tuple[str, ...]
    hallu: tuple[str, ...]
    # (type, question, answer) beyond the existence questions made from truth and hallu
    questions: tuple[tuple[str, str, str], ...]


STATE, NUMBER, ACTION = (f"discriminative-attribute-{kind}" for kind in ("state", "number", "action"))
CONTACT = "Is there direct contact between the {} and {}?"

PICTURES = (
    Picture(Scene((Shape("circle", "yellow", (96, 24), radius=14), Shape("triangle", "green", (40, 64), radius=30)),
                  background="blue"),
            ("sky", "sun", "mountain"), ("cloud", "bird", "tree"), (
                (STATE, "Is the sky sunny in this image?", "yes"), (STATE, "Is the sky gloomy in this image?", "no"),
                (NUMBER, "Is there one sun in this image?", "yes"), (NUMBER, "Are there two suns in this image?", "no"),
                ("discriminative-relation", CONTACT.format("mountain", "sky"), "yes"),
                ("relation", CONTACT.format("sun", "mountain"), "no"))),
    Picture(Scene((Shape("circle", "white", (40, 40), radius=20), Shape("circle", "yellow", (100, 20), radius=4),
                   Shape("circle", "yellow", (110, 70), radius=4)), background="black"),
            ("moon", "star"), ("sun", "cloud", "tree"), (
                (NUMBER, "Are there two stars in this image?", "yes"),
                (NUMBER, "Are there three stars in this image?", "no"),
                (STATE, "Is the moon full in this image?", "yes"), (STATE, "Is the moon crescent in this image?", "no"),
                ("relation", CONTACT.format("moon", "star"), "no"))),
    Picture(Scene((Shape("circle", "red", (36, 60), radius=14), Shape("square", "blue", (92, 60), radius=18)),
                  background="green"),
            ("grass", "ball", "box"), ("dog", "person", "toy"), (
                (STATE, "Is the ball red in this image?", "yes"), (STATE, "Is the ball blue in this image?", "no"),
                (ACTION, "Does the ball roll in this image?", "no"),
                ("discriminative-relation", CONTACT.format("ball", "grass"), "yes"),
                ("relation", CONTACT.format("ball", "box"), "no"))),
    Picture(Scene((Shape("triangle", "red", (64, 36), radius=20), Shape("square", "green", (64, 120), radius=40)),
                  background="blue"),
            ("sky", "kite", "grass"), ("person", "bird", "tree", "cloud"), (
                (ACTION, "Does the kite fly in this image?", "yes"),
                (ACTION, "Does the kite fall in this image?", "no"),
                (NUMBER, "Is there one kite in this image?", "yes"),
                ("discriminative-relation", CONTACT.format("kite", "sky"), "yes"),
                ("relation", CONTACT.format("kite", "grass"), "no"))),
)


def jpeg(scene: Scene) -> bytes:
    buffer = io.BytesIO()
    scene.image().save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def _existence(picture: Picture) -> list[tuple[str, str, str]]:
    return [("discriminative-hallucination", f"Is there a {obj} in this image?", answer)
            for objects, answer in ((picture.truth, "yes"), (picture.hallu, "no")) for obj in objects]


@register_mini_release("amber")
def make(out: Path) -> Path:
    images = [f"AMBER_{n}.jpg" for n in range(1, len(PICTURES) + 1)]
    for image, picture in zip(images, PICTURES):
        write_bytes(out / "image" / image, jpeg(picture.scene))
    annotations = [{"id": n, "type": "generative", "truth": list(p.truth), "hallu": list(p.hallu)}
                   for n, p in enumerate(PICTURES, 1)]
    queries = [{"id": n, "image": image, "query": DESCRIBE} for n, image in enumerate(images, 1)]
    parts = {"generative": list(queries)}
    for part, types in PARTS.items():
        parts[part] = []
        for image, picture in zip(images, PICTURES):
            for kind, question, answer in picture.questions + tuple(_existence(picture)):
                if kind in types:
                    n = len(annotations) + 1
                    annotations.append({"id": n, "type": kind, "truth": answer})
                    parts[part].append({"id": n, "image": image, "query": question})
    parts["discriminative"] = [q for part in PARTS for q in parts[part]]
    parts["all"] = parts["generative"] + parts["discriminative"]
    for part, rows in parts.items():
        write_json(out / "data" / "query" / f"query_{part}.json", rows)
    write_json(out / "data" / "annotations.json", annotations)
    from hallubench.metrics.amber.amber import RELATION, SAFE_WORDS  # here: the metric module imports evaluate

    write_json(out / "data" / "relation.json", RELATION)
    (out / "data" / "safe_words.txt").write_text("\n".join(SAFE_WORDS), encoding="utf-8")
    return out
