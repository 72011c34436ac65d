"""MHaluBench image-to-text (Chen et al. 2024, UniHD): image_to_text_annotated.json [+ images/].

One row per annotated response, with its segments and their claims. The upstream key `repsonse` (sic)
becomes `response` (a release already spelling it `response` is read too). Images are copied from
images/<image_name> next to the JSON when that folder exists and embedded in the parquet as `datasets.Image`
(named images/<image_name>); otherwise `image` is null on every row.
Ids are "mhalubench-<index>" by position in the JSON. Every segment needs claims, and its label must be
the one its claims give (hallucination iff any claim is), as on all 661 released segments.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import datasets

from hallubench.registry import register_builder
from hallubench.builders.base import ReleaseBuilder, RowError, image_cell, load_json_list, strings

FILE = "image_to_text_annotated.json"
LABELS = ("hallucination", "non-hallucination")
CLAIM = {"claim": datasets.Value("string"), "claim_label": datasets.Value("string"),
         "claim_category": datasets.List(datasets.Value("string"))}
SEGMENT = {"segment": datasets.Value("string"), "segment_label": datasets.Value("string"),
           "segment_category": datasets.List(datasets.Value("string")), "claims": datasets.List(CLAIM)}


@register_builder
class MHaluBench(ReleaseBuilder):
    NAME = "mhalubench"
    ELSEWHERE = "image_to_text_annotated.json (+ images/) from github.com/BriansIDP/crosscheckgpt data/VisualImage/"
    SUMMARY_COLUMNS = ("task_type",)
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="default")]
    FEATURES = datasets.Features({
        "id": datasets.Value("string"),
        "image_name": datasets.Value("string"),
        "image": datasets.Image(),
        "response": datasets.Value("string"),
        "task_type": datasets.Value("string"),
        "segments": datasets.List(SEGMENT),
    })

    def read_records(self) -> tuple[Path, list[Any]]:
        path = self.source / FILE if self.source.is_dir() else self.source
        self.images = path.parent / "images"
        if not self.images.is_dir():
            self.notes.append("The release had no images/ folder, so `image` is null on every row.")
        return path, load_json_list(self.release_file(path), "MHaluBench image-to-text annotations (image_name, repsonse, task_type, annotation)")

    def convert(self, index: int, raw: Any) -> dict[str, Any]:
        if isinstance(raw, dict) and "repsonse" not in raw and "response" in raw:
            raw = {**raw, "repsonse": raw["response"]}
        values = strings(raw, ("image_name", "repsonse", "task_type"))
        name = values["image_name"]
        if not name or "/" in name or name in (".", ".."):
            raise RowError(f"image_name {name!r} cannot name a file in images/")
        image = self.place_media(self.images / name, f"images/{name}") if self.images.is_dir() else None
        image = image_cell(self.media_root, image) if image else None
        segments = raw.get("annotation")
        if not isinstance(segments, list):
            raise RowError("field 'annotation' must be a list of segments")
        return {"id": self.row_id(index, raw), "image_name": name, "image": image,
                "response": values["repsonse"], "task_type": values["task_type"],
                "segments": [segment(s, f"annotation[{i}]") for i, s in enumerate(segments)]}


def segment(raw: Any, where: str) -> dict[str, Any]:
    """One annotated segment with its claims; RowError naming the place of a bad value.

    The mhalubench metric scores segments by deriving their labels from the claims (hallucination iff any
    claim is), so a segment without claims, or whose label disagrees with its claims, is refused here.
    """
    values = labelled(raw, where, "segment")
    claims = raw.get("claims")
    if not isinstance(claims, list) or not claims:
        raise RowError(f"{where}.claims must be a non-empty list (a segment's label follows from its claims)")
    claims = [labelled(c, f"{where}.claims[{i}]", "claim") for i, c in enumerate(claims)]
    derived = LABELS[0] if any(c["claim_label"] == LABELS[0] for c in claims) else LABELS[1]
    if values["segment_label"] != derived:
        raise RowError(f"{where}.segment_label is {values['segment_label']!r} but its claims make it {derived!r} "
                       "(a segment is a hallucination iff one of its claims is); fix the annotation")
    return {**values, "claims": claims}


def labelled(raw: Any, where: str, kind: str) -> dict[str, Any]:
    """`<kind>`, `<kind>_label` (one of LABELS) and `<kind>_category` (list of strings) of a segment or claim."""
    try:
        values = strings(raw, (kind, f"{kind}_label"))
    except RowError as err:
        raise RowError(f"{where}: {err}") from None
    if values[f"{kind}_label"] not in LABELS:
        raise RowError(f"{where}.{kind}_label is {values[f'{kind}_label']!r}, expected one of {LABELS}")
    category = raw.get(f"{kind}_category")
    if not (isinstance(category, list) and all(isinstance(c, str) for c in category)):
        raise RowError(f"{where}.{kind}_category must be a list of strings")
    return {**values, f"{kind}_category": category}
