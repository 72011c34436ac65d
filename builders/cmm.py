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
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

import datasets
from hallubench.errors import BuildError
from hallubench.registry import register_builder
from hallubench.builders.base import (ReleaseBuilder, RowError, column_values, load_json_list, strings,
                                      subsets)

SUB_CATEGORIES = (
    "visual-language", "audio-language", "visual-audio-language",
    "overrely_visual_ignore_audio", "overrely_audio_ignore_visual", "overrely_language_ignore_visual",
)
TEXT_FIELDS = ("category", "sub_category", "modality", "granularity", "correlation_type", "question", "answer")
MEDIA_FIELDS = ("video_path", "audio_path")
FIELDS = TEXT_FIELDS[:5] + MEDIA_FIELDS + TEXT_FIELDS[5:]
SUFFIX = "answer with yes or no."
MEDIA_DIR = "reorg_raw_files"


@register_builder
class CMM(ReleaseBuilder):
    NAME = "cmm"
    HUB_RELEASE = "DAMO-NLP-SG/CMM"
    SUMMARY_COLUMNS = ("answer",)
    MEDIA_PATH_COLUMNS = ("video_path", "audio_path")
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="all")]
    DEFAULT_OUTPUT_CONFIG = "all"
    FEATURES = datasets.Features({"id": datasets.Value("string"), **{f: datasets.Value("string") for f in FIELDS}})

    def read_records(self) -> tuple[Path, list[Any]]:
        self.media = self.open_media()
        self.stripped = 0
        path = self.source / "all_data_final_reorg.json"
        return path, load_json_list(self.release_file(path), "the CMM probes: a list of {" + ", ".join(FIELDS) + "}")

    def open_media(self) -> Any:
        """The root media paths resolve against: the release folder, or the zip."""
        if (self.source / MEDIA_DIR).is_dir():
            return self.source
        archive = self.source / f"{MEDIA_DIR}.zip"
        if not archive.is_file():
            raise BuildError(f"{self.source}: neither {MEDIA_DIR}/ nor {MEDIA_DIR}.zip found; "
                             "put the official media next to all_data_final_reorg.json.")
        return _ZipMedia(self.release_file(archive))

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
        row = {"id": self.row_id(index, raw), **values, "answer": answer, "question": question}
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
        present = set(column_values(dataset, "sub_category"))
        return {**subsets(dataset, "sub_category", [s for s in SUB_CATEGORIES if s in present]), "all": dataset}


class _ZipMedia:
    """Media paths resolved inside reorg_raw_files.zip. Zips made from the folder hold members
    "reorg_raw_files/..."; zips of its content do not, so the prefix is dropped for those."""

    def __init__(self, archive: Path):
        try:
            self.zip = zipfile.ZipFile(archive)
        except (OSError, zipfile.BadZipFile) as err:
            raise BuildError(f"{archive} is not a readable zip ({err}); re-download it.") from err
        self.archive = archive
        self.names = set(self.zip.namelist())
        self.prefix = "" if any(name.startswith(f"{MEDIA_DIR}/") for name in self.names) else f"{MEDIA_DIR}/"

    def __truediv__(self, rel: str) -> _ZipMember:
        return _ZipMember(self, rel.removeprefix(self.prefix))


@dataclass
class _ZipMember:
    """One member of the media zip, with the two methods `ReleaseBuilder.place_media` uses."""

    media: _ZipMedia
    name: str

    def exists(self) -> bool:
        return self.name in self.media.names

    def open(self, mode: str = "rb") -> IO[bytes]:
        return self.media.zip.open(self.name)

    def __str__(self) -> str:
        return f"{self.media.archive}:{self.name}"
