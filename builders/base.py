"""What every benchmark builder shares: reading rows, checking them, placing media, reporting bad rows.

A builder is a `datasets.GeneratorBasedBuilder` that reads one official release (`source`) and
yields normalized rows. Media files are placed under `media_root` (the output folder being built)
and rows hold their paths relative to it. A problem with one row raises `RowError`; the builder turns
it into a `BuildError` naming the file, row index and id, or, with `skip_missing`, records the row in
`skipped` (written to skipped.jsonl by `hallubench.builders.folder`).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Iterator

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
from hallubench.builders import safe_files
from hallubench.errors import BuildError, RowError

SKIP_HINT = ("Fix the release, or pass --skip-missing (skip_missing=True) to skip such rows; "
             "they are then listed in skipped.jsonl in the output folder.")
# Characters a row id may hold without comment; other ids are kept verbatim but reported.
PLAIN_ID = re.compile(r"[A-Za-z0-9_.\-]+")


class ReleaseBuilder(datasets.GeneratorBasedBuilder):
    """Base of the benchmark builders: subclasses set NAME, FEATURES, BUILDER_CONFIGS and implement
    `read_records` and `convert`; `output_configs` maps the generated split onto published configs."""

    NAME: str = ""
    HUB_RELEASE: str | None = None  # the Hub dataset repo of the official release, in the layout read here
    HUB_MIRRORS: tuple[str, ...] = ()  # repos the same release moved to, tried in order when HUB_RELEASE is gone
    HUB_FILES: tuple[str, ...] | None = None  # the files of a Hub release the builder reads (allow_patterns; None: all)
    ELSEWHERE: str = ""  # where the release is published when it has no Hub copy in that layout
    FEATURES: datasets.Features | dict[str, datasets.Features]
    SUMMARY_COLUMNS: tuple[str, ...] = ()  # label-like columns whose value counts `summarize` shows
    MEDIA_PATH_COLUMNS: tuple[str, ...] = ()  # video/audio columns holding paths relative to the folder
    DEFAULT_OUTPUT_CONFIG: str | None = None  # marked `default: true` in the card when several configs exist

    def __init__(self, *, source: str | Path, media_root: str | Path, skip_missing: bool = False, **kwargs: Any):
        self.source = Path(source)
        self.media_root = Path(media_root)
        self.skip_missing = skip_missing
        self.skipped: list[dict[str, Any]] = []  # rows left out, each with file, index, id and reason
        self.notes: list[str] = []  # facts about this build worth a line in the dataset card
        self.left_out: dict[int, str] = {}  # record index -> why it is left out (read_records may fill it)
        super().__init__(**kwargs)

    @classmethod
    def card_template(cls) -> str:
        """The dataset card (a string.Template filled with $configs, $rows, $media, $notes): cards/<NAME>.md."""
        return (Path(__file__).parent / "cards" / f"{cls.NAME}.md").read_text(encoding="utf-8")

    # --- to implement -------------------------------------------------------------------------
    def read_records(self) -> tuple[Path, Iterable[Any]]:
        """The file the rows come from and its raw records, in release order."""
        raise NotImplementedError

    def convert(self, index: int, raw: Any) -> dict[str, Any]:
        """One normalized row (with its `id`) from one raw record; raises RowError on bad input."""
        raise NotImplementedError

    def row_id(self, index: int, raw: Any) -> str | None:
        """The id of the row made from `raw`; by default "<NAME>-<index>", the position in the release."""
        return f"{self.NAME}-{index:04d}"

    def summarize(self, rows: list[dict[str, Any]]) -> None:
        """Called once with every kept row, to add notes."""

    def output_configs(self, dataset: datasets.Dataset) -> dict[str, datasets.Dataset]:
        """Published configs made from the generated split: by default the builder config itself."""
        return {self.config.name: dataset}

    # --- datasets.GeneratorBasedBuilder -------------------------------------------------------
    def _info(self) -> datasets.DatasetInfo:
        features = self.FEATURES if isinstance(self.FEATURES, datasets.Features) else self.FEATURES[self.config.name]
        return datasets.DatasetInfo(features=features)

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        return [datasets.SplitGenerator(name=datasets.Split.TEST)]

    def _generate_examples(self) -> Iterator[tuple[int, dict[str, Any]]]:
        path, records = self.read_records()
        kept: dict[str, tuple[int, dict[str, Any]]] = {}
        for index, raw in enumerate(records):
            if index in self.left_out:
                self.skipped.append({"file": str(path), "index": index, "id": self.row_id(index, raw),
                                     "reason": self.left_out[index]})
                continue
            try:
                row = self.convert(index, raw)
            except RowError as err:
                self.reject(path, index, self.row_id(index, raw), str(err))
                continue
            except BuildError as err:  # the output cannot be written: no row can be kept, say where it stopped
                raise BuildError(f"{path}: row {index} (id {self.row_id(index, raw)!r}): {err}") from err
            first = kept.get(row["id"])
            if first is not None:
                if first[1] != row:
                    raise BuildError(
                        f"{path}: rows {first[0]} and {index} share the id {row['id']!r} but differ in content. "
                        "Ids must be unique: remove or rename one of them in the release.")
                self.skipped.append({"file": str(path), "index": index, "id": row["id"],
                                     "reason": f"identical duplicate of row {first[0]}"})
                continue
            kept[row["id"]] = (index, row)
            yield index, row
        self.summarize([row for _, row in kept.values()])

    # --- helpers for subclasses ---------------------------------------------------------------
    def reject(self, path: Path, index: int, row_id: str | None, reason: str) -> None:
        if not self.skip_missing:
            raise BuildError(f"{path}: row {index} (id {row_id!r}): {reason}. {SKIP_HINT}")
        self.skipped.append({"file": str(path), "index": index, "id": row_id, "reason": reason})

    def release_file(self, path: Path) -> Path:
        """`path`, a file of the release the builder reads (annotations, tables): BuildError when it is a link out of
        the release, a FIFO or a device; the file named by --source itself is the user's choice and taken as is."""
        if Path(path) == self.source:
            return Path(path)
        try:
            return safe_files.regular_file_inside(path, safe_files.release_root(self.source))
        except RowError as err:
            if not os.path.lexists(path):  # the caller says which file it expected
                return Path(path)
            raise BuildError(str(err).replace("media file", "release file", 1)) from None

    def place_media(self, src: Any, rel: str) -> str:
        """Put the media file `src` at `rel` under the output folder; returns `rel`.

        `src` is a Path or any object with exists() and open() (a zip member). Hard-links when it can (same
        file system), else copies. A file already placed (two rows of one clip) is kept.
        """
        check_relative(rel)
        # os.PathLike, not Path: datasets swaps the `Path` of builder modules for its own streaming class.
        if isinstance(src, os.PathLike):  # stat first: a link out of the release, a FIFO or a device is never opened
            src = safe_files.regular_file_inside(src, safe_files.release_root(self.source))
        elif not src.exists():
            raise RowError(f"media file {src} is missing")
        dest = self.media_root / rel
        if dest.exists():
            return rel
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise safe_files.output_error(err, dest.parent) from err
        if isinstance(src, os.PathLike):
            try:
                os.link(src, dest)
                return rel
            except OSError:
                pass
        safe_files.copy_media(src, dest)
        return rel


def image_cell(folder: Path, rel: str) -> dict[str, Any]:
    """A `datasets.Image` value for the image placed at `rel`: its bytes embedded (so `load_dataset` and the Hub
    viewer show it anywhere) and `rel` as its name; the file itself stays in the folder for the harness.
    RowError (the file removed) for bytes that are no image or one above safe_files.MAX_IMAGE_PIXELS."""
    data = (folder / rel).read_bytes()
    try:
        with safe_files.decode_image(data):  # reads the header only: the size is known before any pixel is
            pass
    except (RowError, OSError, ValueError) as err:  # PIL's UnidentifiedImageError is an OSError
        (folder / rel).unlink(missing_ok=True)
        raise RowError(f"image {rel}: {err}") from err
    return {"path": rel, "bytes": data}


def repeats(keys: Iterable[Any], answers: Iterable[Any]) -> dict[int, str]:
    """The records to leave out among ones that ask the same thing (equal `keys`; None: no key): a repeat with the
    first one's answer is left out as a repeat of it; where the answers differ, every one of them is, since the
    release does not say which is right. Returns record index -> reason (ReleaseBuilder.left_out)."""
    first: dict[Any, list[tuple[int, Any]]] = {}
    for index, (key, answer) in enumerate(zip(keys, answers)):
        if key is not None:
            first.setdefault(key, []).append((index, answer))
    out: dict[int, str] = {}
    for members in first.values():
        if len({repr(answer) for _, answer in members}) > 1:
            listed = ", ".join(f"record {i} ({answer!r})" for i, answer in members)
            out.update({i: f"asks the same as another record with another answer: {listed}" for i, _ in members})
        else:
            out.update({i: f"repeats record {members[0][0]}" for i, _ in members[1:]})
    return out


def open_parquet(path: Path, columns: Iterable[str], what: str) -> pq.ParquetFile:
    """A parquet file holding every one of `columns`; BuildError naming the file and `what` it should be otherwise."""
    try:
        parquet = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as err:
        raise BuildError(f"{path} is not a readable parquet file ({err}); expected {what}.") from err
    missing = [name for name in columns if name not in parquet.schema_arrow.names]
    if missing:
        raise BuildError(f"{path} lacks the column(s) {', '.join(missing)}; expected {what} with the fields "
                         f"{', '.join(columns)}.")
    return parquet


def load_json_list(path: Path, what: str) -> list[Any]:
    """A JSON file holding a list; BuildError naming the file otherwise."""
    if not path.is_file():
        raise BuildError(f"{path} not found: expected {what}.")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BuildError(f"{path} is not readable JSON ({err}); re-download it from the official release.") from err
    if not isinstance(data, list):
        raise BuildError(f"{path} holds a JSON {type(data).__name__}, expected a list of records ({what}).")
    return data


def strings(raw: Any, fields: Iterable[str], nullable: Iterable[str] = ()) -> dict[str, str | None]:
    """The named string fields of a record; RowError naming a missing or mistyped field."""
    if not isinstance(raw, dict):
        raise RowError(f"expected a JSON object, got {type(raw).__name__}")
    nullable = set(nullable)
    missing = [name for name in fields if name not in raw]
    if missing:
        raise RowError(f"missing field(s) {', '.join(map(repr, missing))}")
    values = {}
    for name in fields:
        value = raw[name]
        if not (isinstance(value, str) or (value is None and name in nullable)):
            raise RowError(f"field {name!r} must be a string{' or null' if name in nullable else ''}, "
                           f"got {type(value).__name__}")
        values[name] = value
    return values


def check_relative(rel: str) -> None:
    """RowError unless `rel` is a plain relative path that stays inside the output folder."""
    path = PurePosixPath(rel)
    if not rel or path.is_absolute() or ".." in path.parts or "\\" in rel or "\x00" in rel:
        raise RowError(f"unsafe media path {rel!r}: it must be relative and stay inside the release")


def column_values(dataset: datasets.Dataset, column: str) -> list[Any]:
    """The cells of one column, read straight from Arrow (row-wise access is slow)."""
    return dataset.data.column(column).to_pylist()


def subsets(dataset: datasets.Dataset, column: str, values: Iterable[str]) -> dict[str, datasets.Dataset]:
    """One dataset per value of `column`, rows in their original order."""
    cells = column_values(dataset, column)
    return {value: dataset.select([i for i, cell in enumerate(cells) if cell == value]) for value in values}
