"""Mini HallusionBench in the authors' GitHub layout: `HallusionBench.json` + `hallusion_bench/<category>/
<subcategory>/<set_id>_<figure_id>.png` (the zip's folder); `hub_layout` writes the same rows as the Hub copy
`lmms-lab/HallusionBench` holds them (`data/image-*.parquet` with the image embedded, `data/non_image-*.parquet`).

As upstream (github.com/tianyi-lab/HallusionBench @ 744007c, `HallusionBench.json`): every field is a string;
`visual_input` is "0" (no figure: the Visual Supplement question asked alone, `filename` null), "1" (the original
figure) or "2" (an edited figure); a Visual Dependent set has figure 0 (original) and 1 (edited), a Visual Supplement
set figure 0 (no figure), 1 (original) and 2 (edited); the same `question_id` across a set's figures is one
question pair; `filename` is "./<category>/<subcategory>/<set_id>_<figure_id>.png", relative to hallusion_bench/;
`gt_answer` is "1" (yes) or "0" (no). The figures are drawn scenes whose content the answers are true to.
"""
from __future__ import annotations

from pathlib import Path

from hallubench.registry import register_mini_release

from .files import write_bytes, write_json
from .media import Scene, Shape

IMAGE_DIR = "hallusion_bench"
FIELDS = ("category", "subcategory", "visual_input", "set_id", "figure_id", "sample_note", "question_id",
          "question", "gt_answer_details", "gt_answer", "filename")
LEFT, RIGHT, MIDDLE = (36, 48), (92, 48), (64, 56)

# (category, subcategory, set_id, sample_note, figures, questions): figures [(visual_input, scene or None)];
# questions [(question per figure, gt_answer per figure, gt_answer_details per figure)]
SETS = (
    ("VD", "illusion", "0", "circles",
     [("1", Scene((Shape("circle", "red", LEFT, 14), Shape("circle", "blue", RIGHT, 14)))),
      ("2", Scene((Shape("circle", "red", LEFT, 22), Shape("circle", "blue", RIGHT, 10))))],
     [(["Are the two circles the same size?"] * 2, "10",
       ["The two circles are the same size.", "The left circle is larger than the right circle."]),
      (["Is the left circle larger than the right circle?"] * 2, "01",
       ["The two circles are the same size.", "The left circle is larger than the right circle."])]),
    ("VD", "ocr", "0", "word",
     [("1", Scene((), text="CAT", text_at=(50, 40))), ("2", Scene((), text="DOG", text_at=(50, 40)))],
     [(['Does the image show "CAT"?'] * 2, "10", ['The image shows "CAT".', 'The image shows "DOG".']),
      (['Does the image show "DOG"?'] * 2, "01", ['The image shows "CAT".', 'The image shows "DOG".'])]),
    ("VD", "figure", "1", "colour",
     [("1", Scene((Shape("square", "red", MIDDLE),))), ("2", Scene((Shape("square", "green", MIDDLE),)))],
     [(["Is the square red?"] * 2, "10", ["The square is red.", "The square is green."]),
      (["Is the square green?"] * 2, "01", ["The square is red.", "The square is green."])]),
    ("VS", "table", "0", "boiling",
     [("0", None), ("1", Scene((), text="water boils: 100C", text_at=(4, 40))),
      ("2", Scene((), text="water boils: 90C", text_at=(4, 40)))],
     [(["Does water boil at 100 degrees Celsius at sea level?"]
       + ["According to the table, does water boil at 100 degrees Celsius?"] * 2, "110",
       ["Water boils at 100 degrees Celsius at sea level.", "Water boils at 100 degrees Celsius.",
        "According to the table, water boils at 90 degrees Celsius."]),
      (["Does water boil at 90 degrees Celsius at sea level?"]
       + ["According to the table, does water boil at 90 degrees Celsius?"] * 2, "001",
       ["Water boils at 100 degrees Celsius at sea level.", "Water boils at 100 degrees Celsius.",
        "According to the table, water boils at 90 degrees Celsius."])]),
    ("VS", "map", "1", "capital",
     [("0", None), ("1", Scene((), text="France: Paris", text_at=(20, 40))),
      ("2", Scene((), text="France: Lyon", text_at=(20, 40)))],
     [(["Is Paris the capital of France?"] + ["According to the map, is Paris the capital of France?"] * 2, "110",
       ["Paris is the capital of France.", "Paris is the capital of France.",
        "According to the map, Lyon is the capital of France."]),
      (["Is Lyon the capital of France?"] + ["According to the map, is Lyon the capital of France?"] * 2, "001",
       ["Paris is the capital of France.", "Paris is the capital of France.",
        "According to the map, Lyon is the capital of France."])]),
)


def records(out: Path | None = None) -> list[tuple[dict, bytes | None]]:
    """The rows in upstream field order, each with its figure's PNG bytes (None without a figure); with `out`,
    the figures are also written under out/hallusion_bench/."""
    rows = []
    for category, subcategory, set_id, note, figures, questions in SETS:
        for figure_id, (visual_input, scene) in enumerate(figures):
            png = None if scene is None else scene.png()
            filename = None if scene is None else f"./{category}/{subcategory}/{set_id}_{figure_id}.png"
            if png is not None and out is not None:
                write_bytes(out / IMAGE_DIR / filename.removeprefix("./"), png)
            for question_id, (asked, answers, details) in enumerate(questions):
                rows.append(({
                    "category": category, "subcategory": subcategory, "visual_input": visual_input,
                    "set_id": set_id, "figure_id": str(figure_id), "sample_note": note,
                    "question_id": str(question_id), "question": asked[figure_id],
                    "gt_answer_details": details[figure_id], "gt_answer": answers[figure_id], "filename": filename,
                }, png))
    return rows


@register_mini_release("hallusionbench")
def make(out: Path) -> Path:
    write_json(out / "HallusionBench.json", [row for row, _ in records(out)])
    return out


def hub_layout(out: Path) -> Path:
    """The mini release as `lmms-lab/HallusionBench` holds the benchmark: split `image` (the rows with a figure, the
    PNG embedded as a `datasets.Image` named by its `filename`) and split `non_image` (the rest, no image column)."""
    import datasets  # heavy import, only when the Hub layout is made
    from datasets import Dataset, Features, Image, Value

    text = {name: Value("string") for name in FIELDS}
    rows = records()
    was_enabled = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        (out / "data").mkdir(parents=True, exist_ok=True)
        with_image = [{**row, "image": {"bytes": png, "path": row["filename"]}} for row, png in rows if png]
        Dataset.from_list(with_image, features=Features({**text, "image": Image()})).to_parquet(
            str(out / "data" / "image-00000-of-00001.parquet"))
        Dataset.from_list([row for row, png in rows if png is None], features=Features(text)).to_parquet(
            str(out / "data" / "non_image-00000-of-00001.parquet"))
    finally:
        if was_enabled:
            datasets.enable_progress_bars()
    return out
