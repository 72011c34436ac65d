"""CHAIR (Rohrbach et al. 2018, EMNLP, arXiv:1809.02156): object hallucination in detailed image descriptions.

The model describes each COCO val2014 image; the `chair` metric reproduces the authors' utils/chair.py
(github.com/LisaAnne/Hallucination @ 6e4d33c) against the image's instance categories and reference captions.
The 2018 paper scored captioning models, which take no prompt; for vision-language models the papers reporting
CHAIR use "Please describe this image in detail." with up to 512 new tokens on 500 random val2014 images (OPERA,
Huang et al. 2024, github.com/shikiw/OPERA @ 2a0a234 chair_eval.py, greedy unless `--beam`), as does this task.
An empty description is unparsed (counted; chair.py scores it as a caption without hallucination, and so does
the metric's CHAIR_s).
"""
from typing import Any

from hallubench.benchmarks.task import MediaSpec, Task
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_parser, register_task

PROMPT = "Please describe this image in detail."


@register_parser("chair_caption")
def chair_caption(text: str, **metric_inputs: Any) -> str | None:
    """The description, stripped; None when empty (the image's `objects` are the metric's, not read here)."""
    return text.strip() or None


register_task(Task(
    name="chair",
    description="Describe the image in detail; CHAIR counts the objects named that it does not hold",
    benchmark="chair",
    config="default",
    prompt=lambda row: PROMPT,
    media=MediaSpec(image="image"),
    generation=GenerationSettings(max_new_tokens=512, temperature=0.0),
    parser="chair_caption",
    metric="chair",
    reference=lambda row: list(row["captions"]),
    metric_inputs=lambda row: {"objects": list(row["objects"])},
    higher_is_better={"chair_s": False, "chair_i": False},
    source="Rohrbach et al. 2018, arXiv:1809.02156; github.com/LisaAnne/Hallucination @ 6e4d33c utils/chair.py; "
           "prompt and length: github.com/shikiw/OPERA @ 2a0a234 chair_eval.py",
))
