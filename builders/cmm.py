"""CMM (Leng et al. 2024, "The Curse of Multi-Modalities"): all_data_final_reorg.json + reorg_raw_files/.

Media come from the folder reorg_raw_files/ or, when it is absent, from reorg_raw_files.zip (its
members with or without the leading reorg_raw_files/). Rows keep the nine official fields; media paths
lose their "./" and stay relative ("reorg_raw_files/<category>/<sub_category>/<file>"), null stays null.
Ids are "cmm-<index>" by position in the official JSON (it has no id field). `answer` is stored
lower-case ("yes"/"no"). The "Answer with yes or no." instruction is added at prompt time, so a question
that already ends with it has it removed (counted in the card's build notes).
"""
from __future__ import annotations

import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

import datasets

from hallubench.builders.base import BuildError, ReleaseBuilder, RowError, load_json_list, strings, subsets

SUB_CATEGORIES = (
    "visual-language", "audio-language", "visual-audio-language",
    "overrely_visual_ignore_audio", "overrely_audio_ignore_visual", "overrely_language_ignore_visual",
)
TEXT_FIELDS = ("category", "sub_category", "modality", "granularity", "correlation_type", "question", "answer")
MEDIA_FIELDS = ("video_path", "audio_path")
FIELDS = TEXT_FIELDS[:5] + MEDIA_FIELDS + TEXT_FIELDS[5:]
SUFFIX = "answer with yes or no."
MEDIA_DIR = "reorg_raw_files"


class CMM(ReleaseBuilder):
    NAME = "cmm"
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="all")]
    DEFAULT_OUTPUT_CONFIG = "all"
    FEATURES = datasets.Features({"id": datasets.Value("string"), **{f: datasets.Value("string") for f in FIELDS}})

    def read_records(self) -> tuple[Path, list[Any]]:
        self.media = self.open_media()
        self.stripped = 0
        path = self.source / "all_data_final_reorg.json"
        return path, load_json_list(path, "the CMM probes: a list of {" + ", ".join(FIELDS) + "}")

    def open_media(self) -> Any:
        """The root media paths resolve against: the folder, or the zip (as a zipfile.Path)."""
        if (self.source / MEDIA_DIR).is_dir():
            return self.source
        archive = self.source / f"{MEDIA_DIR}.zip"
        if not archive.is_file():
            raise BuildError(f"{self.source}: neither {MEDIA_DIR}/ nor {MEDIA_DIR}.zip found; "
                             "put the official media next to all_data_final_reorg.json.")
        try:
            root = zipfile.Path(zipfile.ZipFile(archive))
        except (OSError, zipfile.BadZipFile) as err:
            raise BuildError(f"{archive} is not a readable zip ({err}); re-download it.") from err
        # Zips made from the folder hold reorg_raw_files/...; zips of its content do not.
        return root if (root / MEDIA_DIR).exists() else _Prefixless(root)

    def convert(self, index: int, raw: Any) -> dict[str, Any]:
        values = strings(raw, FIELDS, nullable=MEDIA_FIELDS)
        if values["sub_category"] not in SUB_CATEGORIES:
            raise RowError(f"unknown sub_category {values['sub_category']!r}; expected one of {', '.join(SUB_CATEGORIES)}")
        answer = values["answer"].strip().lower()
        if answer not in ("yes", "no"):
            raise RowError(f"answer must be 'yes' or 'no', got {values['answer']!r}")
        question = values["question"].strip()
        if question.lower().endswith(SUFFIX):
            question = question[: -len(SUFFIX)].rstrip()
            self.stripped += 1
        row = {"id": f"cmm-{index:04d}", **values, "answer": answer, "question": question}
        for name in MEDIA_FIELDS:
            if values[name] is not None:
                rel = str(PurePosixPath(values[name].removeprefix("./")))
                if not rel.startswith(f"{MEDIA_DIR}/"):
                    raise RowError(f"{name} {values[name]!r} is not under ./{MEDIA_DIR}/")
                row[name] = self.place_media(self.media / rel, rel)
        return row

    def summarize(self, rows: list[dict[str, Any]]) -> None:
        if self.stripped:
            self.notes.append(f"{self.stripped} question(s) ended with \"Answer with yes or no.\"; "
                              "it was removed, since the prompt adds it.")

    def output_configs(self, dataset: datasets.Dataset) -> dict[str, datasets.Dataset]:
        present = set(dataset["sub_category"])
        return {**subsets(dataset, "sub_category", [s for s in SUB_CATEGORIES if s in present]), "all": dataset}


class _Prefixless:
    """A zip root for archives of the folder's content: "reorg_raw_files/x" resolves to member "x"."""

    def __init__(self, root: zipfile.Path):
        self.root = root

    def __truediv__(self, rel: str) -> zipfile.Path:
        return self.root / rel.removeprefix(f"{MEDIA_DIR}/")
