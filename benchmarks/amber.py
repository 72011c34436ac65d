"""AMBER (Wang et al. 2023, arXiv:2311.07397): image descriptions and yes/no questions on existence, attribute and
relation, scored by the `amber` metric as the authors' inference.py scores them.

Prompts: the query as released (github.com/junyangwang0410/AMBER @ 534babf, data/query/query_*.json): "Describe
this image." for the generative items and the yes/no question as written for the others; the model sees the
image. The release fixes no decoding settings: greedy, up to 512 new tokens (a full description; a yes/no answer
stops earlier).

Tasks, one per query file of the release: `amber` (query_all.json: every item, with the AMBER score
(1 - CHAIR + F1) / 2), `amber_generative` (CHAIR, Cover, Hal, Cog), `amber_discriminative` (accuracy, precision,
recall, F1 of "no", overall and per dimension), `amber_existence`, `amber_attribute`, `amber_relation`.

Nouns are found with the metric's installable path (nltk's tokenizer and lemminflect, no tagger and no spaCy
near-synonyms: the authors' nltk data and en_core_web_lg are not on PyPI); `--task-args nlp=authors` runs the
authors' calls where those are installed. Answers are read by the first yes/no word (`mode=default`);
`--task-args mode=official` applies the script's exact "Yes"/"No" match.
"""
from __future__ import annotations

import dataclasses

from hallubench.benchmarks.task import MediaSpec, Row, Task
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_parser, register_task

GENERATIVE = "generative"
# task -> the config (the release's query file) it runs on
PARTS = {"amber": "all", "amber_generative": "generative", "amber_discriminative": "discriminative",
         "amber_existence": "existence", "amber_attribute": "attribute", "amber_relation": "relation"}
ABOUT = {
    "amber_generative": "AMBER's descriptions: the objects a description names, against the image's (CHAIR, Hal)",
    "amber_discriminative": "AMBER's yes/no questions on existence, attributes and relations of the image's objects",
    "amber_existence": "AMBER's yes/no questions: is this object in the image?",
    "amber_attribute": "AMBER's yes/no questions on an object's state, number or action",
    "amber_relation": "AMBER's yes/no questions on how two objects in the image relate",
}
LOWER_IS_BETTER = ("chair", "hal", "cog")  # the paper marks CHAIR, Hal and Cog lower-is-better
DIMENSIONS = ("", "existence_", "attribute_", "state_", "number_", "action_", "relation_")
HIGHER_IS_BETTER = {
    **{name: name not in LOWER_IS_BETTER for name in ("chair", "cover", "hal", "cog", "amber_score")},
    **{f"{dim}{score}": True for dim in DIMENSIONS for score in ("accuracy", "precision", "recall", "f1")},
}


@register_parser("amber")
def parse_amber(text: str, types: str) -> str | None:
    """A description: the stripped text (an empty one unparseable); a question: "yes", "no", or None, read as the
    amber metric's default mode reads it (imported on first use: the metric module imports evaluate)."""
    if types == GENERATIVE:
        return text.strip() or None
    from hallubench.metrics.amber.amber import read_yes_no

    answer = read_yes_no(text, "default")
    return answer.lower() if answer else None


def reference(row: Row) -> dict:
    """The amber metric's reference: the question's answer ("" for a description) and a description's objects."""
    return {"answer": row["answer"] or "", "truth": list(row["truth"]), "hallu": list(row["hallu"])}


AMBER = Task(
    name="amber",
    description="AMBER whole: describe the image, and answer yes/no on its objects, attributes and relations",
    benchmark="amber",
    config="all",
    prompt=lambda row: row["query"],
    media=MediaSpec(image="image"),
    generation=GenerationSettings(max_new_tokens=512),
    parser="amber",
    metric="amber",
    reference=reference,
    metric_inputs=lambda row: {"types": row["type"]},
    metric_args={"mode": "default", "nlp": "installable"},  # --task-args mode=official / nlp=authors
    higher_is_better=HIGHER_IS_BETTER,
    source="Wang et al. 2023, arXiv:2311.07397; github.com/junyangwang0410/AMBER @ 534babf (data/query, inference.py)",
)
register_task(AMBER)
for _name, _config in PARTS.items():
    if _name != AMBER.name:
        register_task(dataclasses.replace(AMBER, name=_name, config=_config, description=ABOUT[_name]))
