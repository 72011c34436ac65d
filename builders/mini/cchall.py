"""Mini CCHall: `test.parquet` as HF `datasets` writes it (image column = struct {bytes, path}, PNG bytes).

Rows cover the four hallucination types, four `dataset_source` values and the nine non-English
languages (three per resource level). `response1` is English, `response2` is in `language`; what the
two responses say about the drawn shapes makes `label` true (a wrong object in both, the same one,
is cross-modal, non-cross-lingual; different wrong objects is cross-modal, cross-lingual; a wrong
object only in the other language is cross-lingual, non-cross-modal).

Assumptions where the public card is silent: `choice` lists the four types in a fixed letter order,
one "A. <type>" per line; `label` is the type's name as written in `choice` (without the letter);
`language_category` is "high resource" / "medium resource" / "low resource"; the image struct's
`path` holds a file name built from `image_id`.
"""
from __future__ import annotations

from pathlib import Path

from hallubench.registry import register_mini_release

from .media import Scene, Shape

NON = "Non-hallucination"
MODAL = "Cross-modal, non-cross-lingual hallucination"
LINGUAL = "Cross-lingual, non-cross-modal hallucination"
BOTH = "Cross-modal, cross-lingual hallucination"
TYPES = (NON, MODAL, LINGUAL, BOTH)
CHOICE = "\n".join(f"{letter}. {name}" for letter, name in zip("ABCD", TYPES))

LANGUAGE_CATEGORY = {
    "fr": "high resource", "es": "high resource", "pt": "high resource",
    "nl": "medium resource", "sv": "medium resource", "cs": "medium resource",
    "hr": "low resource", "cy": "low resource", "sw": "low resource",
}
LEFT, RIGHT, MIDDLE = (40, 48), (88, 48), (64, 48)
WHAT_SHAPES = "What shapes are in the image?"
DESCRIBE = "Describe the image briefly."

# (question_id, dataset_source, image_id, scene, question, response1, response2, label, language)
ROWS = (
    (101, "AMBER", "AMBER_12", Scene((Shape("circle", "red", LEFT), Shape("square", "blue", RIGHT))), DESCRIBE,
     "The image shows a red circle and a blue square.", "L'image montre un cercle rouge et un carré bleu.",
     NON, "fr"),
    (102, "GQA", "2354786", Scene((Shape("square", "green", MIDDLE),)), "What colour is the square?",
     "It is a green square.", "Ni mraba wa kijani.", NON, "sw"),
    (103, "XM3600", "000411001ff7dd4f", Scene((Shape("triangle", "red", MIDDLE),)), DESCRIBE,
     "The image shows a red triangle.", "Bilden visar en röd triangel.", NON, "sv"),
    (104, "xFlickrCO", "1000092795", Scene((Shape("circle", "yellow", MIDDLE),)), WHAT_SHAPES,
     "A yellow circle and a red triangle.", "Een gele cirkel en een rode driehoek.", MODAL, "nl"),
    (105, "AMBER", "AMBER_37", Scene((Shape("circle", "blue", MIDDLE),)), DESCRIBE,
     "There is a blue circle next to a green square.", "Postoji plavi krug pored zelenog kvadrata.",
     MODAL, "hr"),
    (106, "GQA", "2318410", Scene((Shape("square", "red", MIDDLE),)), WHAT_SHAPES,
     "A red square.", "Un triángulo verde.", LINGUAL, "es"),
    (107, "XM3600", "0a1b2c3d4e5f6071", Scene((Shape("circle", "green", LEFT), Shape("square", "yellow", RIGHT))),
     WHAT_SHAPES, "A green circle and a yellow square.", "Zelený kruh a modrý trojúhelník.", LINGUAL, "cs"),
    (108, "xFlickrCO", "1001773457", Scene((Shape("square", "blue", MIDDLE),)), DESCRIBE,
     "The image shows a blue square and a red circle.",
     "A imagem mostra um quadrado azul e um triângulo amarelo.", BOTH, "pt"),
    (109, "AMBER", "AMBER_58", Scene((Shape("circle", "yellow", MIDDLE),)), WHAT_SHAPES,
     "A yellow circle and a green square.", "Cylch melyn a thriongl glas.", BOTH, "cy"),
)


def records() -> list[dict]:
    """The rows in upstream column order, the image as {bytes, path}."""
    return [{
        "question_id": qid, "dataset_source": source, "image_id": image_id, "question": question,
        "response1": response1, "response2": response2, "choice": CHOICE, "label": label,
        "language": language, "language_category": LANGUAGE_CATEGORY[language],
        "image": {"bytes": scene.png(), "path": f"{image_id}.png"},
    } for qid, source, image_id, scene, question, response1, response2, label, language in ROWS]


@register_mini_release("cchall")
def make(out: Path) -> Path:
    import datasets  # heavy import, only when CCHall is made
    from datasets import Dataset, Features, Image, Value

    features = Features({
        "question_id": Value("int64"),
        **{name: Value("string") for name in ("dataset_source", "image_id", "question", "response1", "response2",
                                              "choice", "label", "language", "language_category")},
        "image": Image(),
    })
    out.mkdir(parents=True, exist_ok=True)
    was_enabled = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        Dataset.from_list(records(), features=features).to_parquet(str(out / "test.parquet"))
    finally:
        if was_enabled:
            datasets.enable_progress_bars()
    return out
