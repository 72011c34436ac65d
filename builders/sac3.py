"""SAC3 (Zhang et al. 2023): the four evaluation files of github.com/intuit/sac3 `dataset/`.

Each item holds a question, the target answer whose factuality is judged, 10 paraphrases of the
question, the target model's (gpt-3.5-turbo) answers to the question (`self_answers`) and to the
paraphrases (`perturbed_answers`), and the judge's raw verdicts on whether each of those answers is
equivalent to the target answer (`self_judgments`, `perturbed_judgments`, "Guess: Yes/No\nProbability: p").
Upstream names: question_perturb, self_evaluations, perb_evaluations, self_SC, perb_SC.

- prime, senator: the target is `hallucinated_answer`; every item is hallucinated.
- hotpotqa, nq_open: the target is the model's `generated_answer`; upstream `label` "True" means it was
  judged correct against `right_answer`, "False" that it is hallucinated, so `hallucinated = label == "False"`.
  hotpotqa also keeps HaluEval's `knowledge` and its crafted `hallucinated_answer` (not the judged target).

List fields may be JSON lists or Python-list strings (parsed with ast.literal_eval); judge strings are raw.
Ids are "<config>-<index>" by position in the file.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import datasets

from hallubench.registry import register_builder
from hallubench.builders.base import ReleaseBuilder, RowError, load_json_list, strings

FILES = {
    "prime": "prime-500-SC.json",
    "senator": "senator-500-SC.json",
    "hotpotqa": "hotpotQA_250_eval_labeled-SC.json",
    "nq_open": "nq_open_250_eval_labeled-SC.json",
}
LISTS = {  # normalized name -> upstream name
    "perturbed_questions": "question_perturb",
    "self_answers": "self_evaluations",
    "perturbed_answers": "perb_evaluations",
    "self_judgments": "self_SC",
    "perturbed_judgments": "perb_SC",
}
TEXTS = datasets.List(datasets.Value("string"))
COMMON = {"id": datasets.Value("string"), "question": datasets.Value("string"),
          "target_answer": datasets.Value("string"), "hallucinated": datasets.Value("bool")}
LABELLED = {**COMMON, "right_answers": TEXTS}


@register_builder
class SAC3(ReleaseBuilder):
    NAME = "sac3"
    ELSEWHERE = "the four files of github.com/intuit/sac3 dataset/"
    SUMMARY_COLUMNS = ("hallucinated",)
    BUILDER_CONFIGS = [datasets.BuilderConfig(name=name) for name in FILES]
    FEATURES = {
        "prime": datasets.Features({**COMMON, **{name: TEXTS for name in LISTS}}),
        "senator": datasets.Features({**COMMON, **{name: TEXTS for name in LISTS}}),
        "hotpotqa": datasets.Features({**LABELLED, "knowledge": datasets.Value("string"),
                                       "halueval_hallucinated_answer": datasets.Value("string"),
                                       **{name: TEXTS for name in LISTS}}),
        "nq_open": datasets.Features({**LABELLED, **{name: TEXTS for name in LISTS}}),
    }

    def read_records(self) -> tuple[Path, list[Any]]:
        path = self.source / FILES[self.config.name]
        return path, load_json_list(self.release_file(path), f"the SAC3 {self.config.name} set (github.com/intuit/sac3 dataset/)")

    def row_id(self, index: int, raw: Any) -> str | None:
        return f"{self.config.name}-{index:04d}"

    def convert(self, index: int, raw: Any) -> dict[str, Any]:
        name = self.config.name
        row: dict[str, Any] = {"id": self.row_id(index, raw)}
        if name in ("prime", "senator"):
            values = strings(raw, ("question", "hallucinated_answer"))
            row.update(question=values["question"], target_answer=values["hallucinated_answer"], hallucinated=True)
        else:
            values = strings(raw, ("question", "label"))
            if values["label"] not in ("True", "False"):
                raise RowError(f"label must be 'True' or 'False', got {values['label']!r}")
            row.update(question=values["question"], hallucinated=values["label"] == "False")
            if name == "hotpotqa":
                extra = strings(raw, ("knowledge", "right_answer", "generated_answer", "hallucinated_answer"))
                row.update(target_answer=extra["generated_answer"], right_answers=[extra["right_answer"]],
                           knowledge=extra["knowledge"], halueval_hallucinated_answer=extra["hallucinated_answer"])
            else:
                generated = text_list(raw, "generated_answer")
                if len(generated) != 1:
                    raise RowError(f"generated_answer must hold one answer, got {len(generated)}")
                row.update(target_answer=generated[0], right_answers=text_list(raw, "right_answer"))
        row.update({normalized: text_list(raw, upstream) for normalized, upstream in LISTS.items()})
        return row


def text_list(raw: dict[str, Any], key: str) -> list[str]:
    """A list of strings stored as a JSON list or as a Python-list string."""
    if key not in raw:
        raise RowError(f"missing field {key!r}")
    value = raw[key]
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError, RecursionError) as err:
            raise RowError(f"field {key!r} is a string that is not a Python list literal ({err})") from None
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise RowError(f"field {key!r} must be a list of strings")
    return value
