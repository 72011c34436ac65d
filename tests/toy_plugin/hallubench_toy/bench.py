"""A benchmark: its release builder, mini release, parser and two tasks (one scored by the package's own metric,
one that draws samples for a CrossCheck ranking)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets

from hallubench.benchmarks.task import MediaSpec, Task
from hallubench.builders.base import ReleaseBuilder, RowError
from hallubench.errors import BuildError
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_builder, register_mini_release, register_parser, register_task

QUESTIONS = [("Is the sky blue?", True), ("Is grass red?", False), ("Is snow white?", True)]


@register_builder
class ToyEchoBench(ReleaseBuilder):
    """The release: `questions.jsonl`, one {"text": question, "label": true|false} per line."""

    NAME = "toyecho"
    FEATURES = datasets.Features({"id": datasets.Value("string"), "text": datasets.Value("string"),
                                  "label": datasets.Value("bool")})
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="default")]
    ELSEWHERE = "only in this plug-in package's mini release"

    @classmethod
    def card_template(cls) -> str:
        return "---\npretty_name: Toy echo\n$configs\n---\n\n# Toy echo (a plug-in's benchmark)\n\n$rows\n$media\n$notes\n"

    def read_records(self) -> tuple[Path, list[Any]]:
        path = self.source / "questions.jsonl"
        if not path.is_file():
            raise BuildError(f"{path}: missing; the release is questions.jsonl")
        return path, [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def convert(self, index: int, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, dict) or not isinstance(raw.get("label"), bool) or not isinstance(raw.get("text"), str):
            raise RowError("a row is {\"text\": question, \"label\": true or false}")
        return {"id": f"q{index}", "text": raw["text"], "label": raw["label"]}


@register_mini_release("toyecho")
def make(out: Path) -> Path:
    (out / "questions.jsonl").write_text("".join(json.dumps({"text": q, "label": a}) + "\n" for q, a in QUESTIONS))
    return out


@register_parser("toy_echo_yes_no")
def parse(text: str) -> str | None:
    """The first word, if it is yes or no."""
    words = text.lower().replace(".", " ").split()
    return words[0] if words and words[0] in ("yes", "no") else None


register_task(Task(
    name="toyecho_qa", benchmark="toyecho", config="default", prompt=lambda row: row["text"] + " yes or no",
    media=MediaSpec(), generation=GenerationSettings(max_new_tokens=4), parser="toy_echo_yes_no",
    metric="toy_agreement", reference=lambda row: "yes" if row["label"] else "no", higher_is_better={"agreement": True},
))
register_task(Task(
    name="toyecho_describe", benchmark="toyecho", config="default", prompt=lambda row: "Describe the sky.",
    media=MediaSpec(), generation=GenerationSettings(max_new_tokens=16),
    samples=GenerationSettings(max_new_tokens=16, temperature=1.0, n=2), parser="text", metric=None,
    scored_by="crosscheck over the run folders of several models",
))
