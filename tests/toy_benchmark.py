"""A whole benchmark in one module, as a newcomer adds one: its release builder, mini release, parser and
task, plus a model adapter to answer it, each registered by decorator or call; no other file names it.

The release is `toy.json`: yes/no questions about a colour word, answered by `truth`."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets

from hallubench.benchmarks.task import MediaSpec, Task
from hallubench.builders.base import ReleaseBuilder, RowError, load_json_list, strings
from hallubench.models.protocol import GenerationSettings, TextPart
from hallubench.registry import register_builder, register_mini_release, register_model, register_parser, register_task

QUESTIONS = [("Is the sky blue?", "yes"), ("Is grass red?", "no"), ("Is snow white?", "yes"), ("Is coal white?", "no")]


@register_builder
class ToyBench(ReleaseBuilder):
    NAME = "toybench"
    ELSEWHERE = "nowhere: it is a test"
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="default")]
    FEATURES = datasets.Features({"id": datasets.Value("string"), "question": datasets.Value("string"),
                                  "answer": datasets.Value("string")})

    @classmethod
    def card_template(cls) -> str:
        return "---\npretty_name: Toy bench\n$configs\n---\n\n# Toy bench\n\n$rows\n\n$media\n\n## Notes\n\n$notes\n"

    def read_records(self) -> tuple[Path, list[Any]]:
        path = self.source / "toy.json"
        return path, load_json_list(path, "toy questions (question, truth)")

    def convert(self, index: int, raw: Any) -> dict[str, Any]:
        values = strings(raw, ("question", "truth"))
        if values["truth"] not in ("yes", "no"):
            raise RowError(f"truth {values['truth']!r} is not yes or no")
        return {"id": self.row_id(index, raw), "question": values["question"], "answer": values["truth"]}


@register_mini_release("toybench")
def make(out: Path) -> Path:
    (out / "toy.json").write_text(json.dumps([{"question": q, "truth": a} for q, a in QUESTIONS]))
    return out


@register_parser("toy_yes_no")
def parse(text: str) -> str | None:
    word = text.strip().lower().rstrip(".")
    return word if word in ("yes", "no") else None


register_task(Task(
    name="toybench", benchmark="toybench", config="default", prompt=lambda row: row["question"] + " yes or no",
    media=MediaSpec(), generation=GenerationSettings(max_new_tokens=4), parser="toy_yes_no", metric="pa_hr",
    reference=lambda row: row["answer"], higher_is_better={"accuracy": True},
))


@register_model("always_yes")
class AlwaysYes:
    """Answers "Yes." to everything (so PA is 1 and HR 0)."""

    name = "always-yes"
    fingerprint = "always-yes-v1"
    accepts = frozenset()

    def __init__(self, **model_args: Any):
        self.model_args = model_args

    def generate(self, conversations, settings, seeds=None):
        assert all(isinstance(p, TextPart) for c in conversations for m in c for p in m.content)
        return [["Yes."] * settings.n for _ in conversations]
