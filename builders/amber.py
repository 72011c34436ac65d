"""AMBER (Wang et al. 2023): data/query/query_all.json + data/annotations.json + the lexicon in data/ + image/.

The layout of github.com/junyangwang0410/AMBER (data/) with the images of the Google Drive archive its README
links, unpacked beside data/ as image/AMBER_<n>.jpg. One row per query of query_all.json (release order), joined
with its annotation: inference.py reads the annotation of id n at position n-1 of annotations.json, so a release
whose annotations are not in id order is refused. The lexicon the amber metric scores descriptions with
(data/relation.json, data/safe_words.txt) is the metric's copy of the release's; a release whose lexicon differs
is refused rather than scored with another one.

`image` holds the path image/<name> (relative to the output folder), not an embedded datasets.Image: the
release's 1,004 images serve 15,220 queries, and embedding them per row would store each about 15 times.
Ids are "amber-<id>" (the release's query id). `answer` is "yes"/"no" for a question and null for a description;
`truth`/`hallu` are a description's objects (empty for a question).
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import datasets
from hallubench.errors import BuildError
from hallubench.registry import register_builder
from hallubench.builders.base import ReleaseBuilder, RowError, column_values, load_json_list, subsets

GENERATIVE = "generative"


def lexicon():
    """The amber metric's module: its relation.json, safe words and discriminative dimensions, which the release must
    match (imported on use: it imports evaluate, which `hallubench build --help` must not)."""
    from hallubench.metrics.amber import amber

    return amber


@functools.cache
def parts() -> dict[str, str]:
    """annotations.json type -> the part of the release (its query_discriminative-<part>.json) it belongs to."""
    return {GENERATIVE: GENERATIVE, **{kind: "attribute" if "attribute" in kind else dimension
                                       for kind, dimension in lexicon().DIMENSIONS.items()}}
PARTS = ("generative", "existence", "attribute", "relation")
IMAGE_DIR = "image"


@register_builder
class Amber(ReleaseBuilder):
    NAME = "amber"
    # No Hub copy of the release in the authors' layout exists (stzhao/amber holds only a third-party zip of the
    # images): `build amber` without --source says where to download it; `--source hub:ORG/NAME` reads a copy
    # someone pushed in the authors' layout.
    ELSEWHERE = ("data/ of github.com/junyangwang0410/AMBER and the images of the Google Drive archive its README "
                 "links (unpacked beside data/ as image/)")
    SUMMARY_COLUMNS = ("part", "answer")
    MEDIA_PATH_COLUMNS = ("image",)
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="all")]
    DEFAULT_OUTPUT_CONFIG = "all"
    FEATURES = datasets.Features({
        "id": datasets.Value("string"),
        "query_id": datasets.Value("int32"),
        "image": datasets.Value("string"),
        "query": datasets.Value("string"),
        "type": datasets.Value("string"),
        "part": datasets.Value("string"),
        "answer": datasets.Value("string"),
        "truth": datasets.List(datasets.Value("string")),
        "hallu": datasets.List(datasets.Value("string")),
    })

    def read_records(self) -> tuple[Path, list[Any]]:
        data = self.source / "data"
        if not (self.source / IMAGE_DIR).is_dir():
            raise BuildError(f"{self.source}: no {IMAGE_DIR}/ folder; unpack the AMBER images (the Google Drive "
                             f"archive linked in github.com/junyangwang0410/AMBER's README) there, beside data/.")
        self.check_lexicon(data)
        annotations = load_json_list(self.release_file(data / "annotations.json"),
                                     "AMBER's annotations: a list of {id, type, truth[, hallu]}")
        for position, annotation in enumerate(annotations):
            if not isinstance(annotation, dict) or annotation.get("id") != position + 1:
                raise BuildError(f"{data / 'annotations.json'}: entry {position} has id "
                                 f"{annotation.get('id') if isinstance(annotation, dict) else annotation!r}, expected "
                                 f"{position + 1}; inference.py reads the annotation of id n at position n-1.")
        self.annotations = annotations
        path = data / "query" / "query_all.json"
        return path, load_json_list(self.release_file(path), "AMBER's queries: a list of {id, image, query}")

    def check_lexicon(self, data: Path) -> None:
        """The release's relation.json and safe_words.txt must be the lexicon the amber metric holds."""
        relation = load_json_object(self.release_file(data / "relation.json"))
        path = self.release_file(data / "safe_words.txt")
        try:
            with open(path, encoding="utf-8") as lines:  # read as inference.py reads it
                safe_words = tuple(line.split("\n")[0] for line in lines)
        except (OSError, UnicodeDecodeError) as err:
            raise BuildError(f"{path} is not readable ({err}); re-download it from the official release.") from err
        metric = lexicon()
        for name, theirs, ours in (("relation.json", relation, metric.RELATION),
                                   ("safe_words.txt", safe_words, metric.SAFE_WORDS)):
            if theirs != ours:
                raise BuildError(f"{data / name} differs from the lexicon of AMBER @ 534babf that the amber metric "
                                 "scores descriptions with; scores with another lexicon would not be AMBER's.")

    def row_id(self, index: int, raw: Any) -> str | None:
        return f"amber-{raw['id']}" if isinstance(raw, dict) and isinstance(raw.get("id"), int) else None

    def convert(self, index: int, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), int) or isinstance(raw.get("id"), bool):
            raise RowError("expected {id (an integer), image, query}")
        query_id, image, query = raw["id"], raw.get("image"), raw.get("query")
        if not (isinstance(image, str) and isinstance(query, str)):
            raise RowError("fields 'image' and 'query' must be strings")
        if not image or "/" in image or "\\" in image or image in (".", ".."):
            raise RowError(f"image {image!r} cannot name a file in {IMAGE_DIR}/")
        if not 1 <= query_id <= len(self.annotations):
            raise RowError(f"no annotation for id {query_id} in annotations.json ({len(self.annotations)} entries)")
        annotation = self.annotations[query_id - 1]
        kind, truth, hallu = annotation.get("type"), annotation.get("truth"), annotation.get("hallu", [])
        part = parts()
        if kind not in part:
            raise RowError(f"annotation type {kind!r} is not one of {', '.join(part)}")
        if kind == GENERATIVE:
            objects = truth + hallu if isinstance(truth, list) and isinstance(hallu, list) else None
            if not truth or objects is None or any(word not in lexicon().RELATION for word in objects):
                raise RowError(f"a generative annotation needs truth and hallu lists of relation.json objects, got "
                               f"truth {truth!r}, hallu {hallu!r}")
        elif truth not in ("yes", "no"):
            raise RowError(f"a question's truth must be 'yes' or 'no', got {truth!r}")
        generative = kind == GENERATIVE
        return {"id": self.row_id(index, raw), "query_id": query_id,
                "image": self.place_media(self.source / IMAGE_DIR / image, f"{IMAGE_DIR}/{image}"),
                "query": query, "type": kind, "part": part[kind], "answer": None if generative else truth,
                "truth": truth if generative else [], "hallu": hallu if generative else []}

    def output_configs(self, dataset: datasets.Dataset) -> dict[str, datasets.Dataset]:
        present = set(column_values(dataset, "part"))
        parts = subsets(dataset, "part", [p for p in PARTS if p in present])
        discriminative = [i for i, part in enumerate(column_values(dataset, "part")) if part != GENERATIVE]
        configs = {**parts, "all": dataset}
        if discriminative:
            configs["discriminative"] = dataset.select(discriminative)
        return configs


def load_json_object(path: Path) -> dict[str, Any]:
    """relation.json: an object; BuildError naming the file otherwise."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BuildError(f"{path} not found: expected AMBER's relation.json (object -> associated words).") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BuildError(f"{path} is not readable JSON ({err}); re-download it from the official release.") from err
    if not isinstance(data, dict):
        raise BuildError(f"{path} holds a JSON {type(data).__name__}, expected an object (object -> associated words).")
    return data
