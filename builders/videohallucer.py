"""VideoHallucer (Wang et al. 2024): <subset>/<subset>.json + <subset>/videos/<file>, five subsets of
basic/hallucinated yes/no question pairs (Hub bigai-nlco/VideoHallucer, uploaded by the authors and linked from the
GitHub README as ColorfulAI/VideoHallucer; the layout of that README).

Each released pair {basic: {video, question, answer}, hallucination: {video, question, answer[,
explanation]}, type} becomes two rows, basic first, sharing a `pair_id` "<subset>-<index>" (index = position in
the subset's JSON); the row ids add the role. The two questions of a pair may show different videos
(semantic_detail). Videos are placed at "<subset>/videos/<file>" as released. A subset missing from the
release is left out and named in the card's build notes; a release with none of them is an error.

A pair identical to an earlier pair of the same subset is left out (both its rows, listed in skipped.jsonl, and
counted in the card's notes): the Hub copy was uploaded on 2024-06-17, before the authors removed 24 repeated
temporal pairs on GitHub (ae4c2f2: 200 -> 176), and its row ids, made from positions, would not show them as repeats.
"""
from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

import datasets

from hallubench.errors import BuildError
from hallubench.registry import register_builder
from hallubench.builders.base import ReleaseBuilder, RowError, load_json_list, repeats, strings, subsets

# The five subsets the paper evaluates (Table 2), in its order; the repo's extra interaction/ and fact_detect/
# folders are not part of the benchmark's scores.
SUBSETS = ("object_relation", "temporal", "semantic_detail", "external_factual", "external_nonfactual")
ROLES = ("basic", "hallucination")
QUESTION_FIELDS = ("video", "question", "answer")
LAYOUT = "a list of {basic: {video, question, answer}, hallucination: {video, question, answer}, type}"


@register_builder
class VideoHallucer(ReleaseBuilder):
    NAME = "videohallucer"
    HUB_RELEASE = "bigai-nlco/VideoHallucer"
    HUB_FILES = tuple(f"{subset}/*" for subset in SUBSETS)  # not the repo's interaction/ and fact_detect/
    SUMMARY_COLUMNS = ("subset", "answer")
    MEDIA_PATH_COLUMNS = ("video",)
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="all")]
    DEFAULT_OUTPUT_CONFIG = "all"
    FEATURES = datasets.Features({
        "id": datasets.Value("string"),
        "pair_id": datasets.Value("string"),
        "subset": datasets.Value("string"),
        "type": datasets.Value("string"),
        "role": datasets.Value("string"),
        "video": datasets.Value("string"),
        "question": datasets.Value("string"),
        "answer": datasets.Value("string"),
        "explanation": datasets.Value("string"),
    })

    def read_records(self) -> tuple[Path, Iterator[tuple[str, int, str, Any]]]:
        present = [s for s in SUBSETS if (self.source / s / f"{s}.json").exists()]
        if not present:
            raise BuildError(f"{self.source}: none of {', '.join(f'{s}/{s}.json' for s in SUBSETS)} found; "
                             "point --source at the folder holding the official VideoHallucer subsets.")
        missing = [s for s in SUBSETS if s not in present]
        if missing:
            self.notes.append(f"Subsets missing from the release, left out: {', '.join(missing)}.")
        pairs = {s: load_json_list(self.release_file(self.source / s / f"{s}.json"), LAYOUT) for s in present}
        records = [(s, i, role, pair) for s in present for i, pair in enumerate(pairs[s]) for role in ROLES]
        self.left_out = repeats(((s, role, json.dumps(pair, sort_keys=True)) for s, _, role, pair in records),
                                [None] * len(records))
        if self.left_out:
            self.notes.append(f"{len(self.left_out) // 2} pairs identical to an earlier pair of their subset left out "
                              "(listed in skipped.jsonl; the authors removed such repeats on GitHub at ae4c2f2).")
        return self.source, records

    def row_id(self, index: int, raw: Any) -> str | None:
        subset, pair_index, role, _ = raw
        return f"{subset}-{pair_index:04d}-{role}"

    def convert(self, index: int, raw: Any) -> dict[str, Any]:
        subset, pair_index, role, pair = raw
        if not isinstance(pair, dict) or not isinstance(pair.get(role), dict):
            raise RowError(f"{subset}/{subset}.json pair {pair_index}: no {role!r} object ({LAYOUT})")
        values = strings(pair[role], QUESTION_FIELDS)
        kind = strings(pair, ("type",))["type"]
        answer = values["answer"].strip().lower()
        if answer not in ("yes", "no"):
            raise RowError(f"{role} answer must be 'yes' or 'no', got {values['answer']!r}")
        explanation = pair[role].get("explanation")
        if explanation is not None and not isinstance(explanation, str):
            raise RowError(f"{role} explanation must be a string, got {type(explanation).__name__}")
        video = values["video"]
        if not video or PurePosixPath(video).name != video:
            raise RowError(f"{role} video {video!r} must be a file name inside {subset}/videos/")
        rel = f"{subset}/videos/{video}"
        return {"id": self.row_id(index, raw), "pair_id": f"{subset}-{pair_index:04d}", "subset": subset,
                "type": kind, "role": role, "video": self.place_media(self.source / rel, rel),
                "question": values["question"], "answer": answer, "explanation": explanation}

    def output_configs(self, dataset: datasets.Dataset) -> dict[str, datasets.Dataset]:
        present = set(dataset.data.column("subset").to_pylist())
        return {**subsets(dataset, "subset", [s for s in SUBSETS if s in present]), "all": dataset}
