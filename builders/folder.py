"""Write a Hub-ready dataset folder from a builder, atomically.

Everything is built in a hidden temporary folder next to `out` (data/<config>/test-<fingerprint>.parquet,
media, README.md card, LICENSE, skipped.jsonl) and renamed to `out` only once complete, so a failed build
leaves nothing that looks like a dataset.

Why the fingerprint is in the file name: for a local folder whose card has YAML `configs:`, `datasets`
(5.x) keys its cache on the folder's base name, the card's `dataset_info` and the data-file *patterns*,
never on the files' bytes; two folders named `cmm`, or one rebuilt in place, would share one cache entry
and `load_dataset` would serve the first one's rows. A file named after a hash of its bytes makes the
pattern, hence the cache entry, follow the content. The card's `dataset_info` also records features and
split sizes, so `datasets` checks the row count it generates against the card.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any

import datasets
import pyarrow.parquet as pq
import yaml
from datasets.exceptions import DatasetGenerationError
from datasets.info import DatasetInfosDict
from huggingface_hub import DatasetCardData

from hallubench.builders.base import PLAIN_ID, ReleaseBuilder, RowError
from hallubench.errors import BuildError, NothingLeftToBuildError
from hallubench.builders.eval_yaml import FILE as EVAL_FILE
from hallubench.builders.eval_yaml import eval_yaml
from hallubench.builders.hub import Snapshot
from hallubench.writes import check_replaceable, mark_folder, write_text_atomically
from hallubench.builders.safe_files import (check_output_location, is_output_error, output_error, regular_file_inside,
                                            release_root)

SPLIT = "test"
FINGERPRINT_CHARS = 16  # hex digits of the sha256 of a data file in its name: test-<fingerprint>.parquet


@dataclass
class BuildSummary:
    """What a build wrote: the folder, rows per config, and the rows it left out (with reasons)."""

    path: Path
    rows: dict[str, int] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # config -> data file relative to the folder
    infos: dict[str, datasets.DatasetInfo] = field(default_factory=dict)  # config -> features and split size
    skipped: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    mini: bool = False  # built from an embedded mini release: synthetic, for trying the pipeline
    origin: Snapshot | None = None  # the Hub repo and commit the release was downloaded from


def build_release(builder_cls: type[ReleaseBuilder], source: str | Path, out: str | Path,
                  skip_missing: bool = False, overwrite: bool = False, mini: bool = False,
                  origin: Snapshot | None = None) -> BuildSummary:
    """Convert the release at `source` with `builder_cls` into the dataset folder `out`; `mini` marks the card
    of a dataset built from an embedded mini release, so runs on it say so; `origin` is the Hub snapshot `source`
    was downloaded as, recorded in the card."""
    source, out = Path(source).expanduser(), Path(out).expanduser()
    if not source.exists():
        raise BuildError(f"source {source} does not exist: point --source at the official {builder_cls.NAME} release.")
    if out.exists() and not (out.is_dir() and not any(out.iterdir())) and not overwrite:
        raise BuildError(f"output {out} already exists and is not empty: choose another --output-dir or pass --overwrite.")
    check_output_location(source, out)
    check_replaceable(out, "--output-dir", f"{builder_cls.NAME} dataset")  # --overwrite deletes only what we made
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    except OSError as err:
        raise output_error(err, out.parent) from err
    try:
        summary = BuildSummary(path=out, mini=mini, origin=origin)
        configs: dict[str, datasets.Dataset] = {}
        for config in builder_cls.BUILDER_CONFIGS:
            builder = builder_cls(source=source, media_root=tmp, skip_missing=skip_missing,
                                  config_name=config.name, cache_dir=str(tmp / ".cache"))
            try:
                builder.download_and_prepare(download_mode="force_redownload")
            except DatasetGenerationError as err:
                if isinstance(err.__cause__, (BuildError, OSError)):
                    raise err.__cause__ from None
                raise
            check_rows_left(builder, source, config.name)
            configs.update(builder.output_configs(builder.as_dataset(split=SPLIT)))
            summary.skipped += builder.skipped
            summary.notes += builder.notes
        for name, dataset in configs.items():
            if not PLAIN_ID.fullmatch(name):
                raise BuildError(f"{source}: config name {name!r} is not a plain name (letters, digits, _ . -); "
                                 "check the column the configs come from.")
            summary.files[name] = write_data_file(dataset, tmp, name)
            summary.rows[name] = len(dataset)
            summary.infos[name] = split_info(dataset, tmp / summary.files[name])
        del configs
        shutil.rmtree(tmp / ".cache")
        write_extras(tmp, builder_cls, source, summary)
        mark_folder(tmp, f"hallubench build {builder_cls.NAME} --overwrite")
        replace_folder(tmp, out)
    except BaseException as err:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(err, OSError) and is_output_error(err, tmp, out):  # disk full, read-only: a named error
            raise output_error(err, out) from err
        raise
    return summary


def check_rows_left(builder: ReleaseBuilder, source: Path, config: str) -> None:
    """NothingLeftToBuildError when the builder kept no row of `config` (all skipped), naming the first reasons."""
    split = (builder.info.splits or {}).get(SPLIT)
    if split is not None and split.num_examples:
        return
    reasons = "; ".join(f"{row['file']} row {row['index']} (id {row['id']!r}): {row['reason']}"
                        for row in builder.skipped[:3])
    more = f" and {len(builder.skipped) - 3} more" if len(builder.skipped) > 3 else ""
    why = f"all {len(builder.skipped)} were skipped ({reasons}{more})" if builder.skipped else "the release has none"
    raise NothingLeftToBuildError(
        f"{source}: no row of config {config!r} is left to build: {why}. Check that --source is the complete "
        f"{builder.NAME} release (its media files included); nothing was written.")


def fingerprint(path: Path) -> str:
    """The content fingerprint a data file carries in its name: the start of its sha256."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:FINGERPRINT_CHARS]


def write_data_file(dataset: datasets.Dataset, folder: Path, config: str) -> str:
    """Write the config's split as parquet named by its content; its path relative to `folder`."""
    tmp = folder / "data" / config / f".{SPLIT}.parquet"
    dataset.to_parquet(str(tmp))
    final = tmp.with_name(f"{SPLIT}-{fingerprint(tmp)}.parquet")
    tmp.rename(final)
    return final.relative_to(folder).as_posix()


def split_info(dataset: datasets.Dataset, path: Path) -> datasets.DatasetInfo:
    """Features and the split's size as the card's `dataset_info` states them (what push_to_hub writes)."""
    meta = pq.read_metadata(path)
    num_bytes = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    size = path.stat().st_size
    return datasets.DatasetInfo(
        features=dataset.features, download_size=size, dataset_size=num_bytes,
        splits=datasets.SplitDict({SPLIT: datasets.SplitInfo(SPLIT, num_bytes=num_bytes, num_examples=meta.num_rows)}))


def write_extras(folder: Path, builder_cls: type[ReleaseBuilder], source: Path, summary: BuildSummary) -> None:
    """The dataset card, eval.yaml (when a task scores the benchmark), the upstream LICENSE when the release has
    one, and skipped.jsonl."""
    if summary.skipped:
        write_text_atomically(folder / "skipped.jsonl",
                              "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in summary.skipped))
    license_file = (source if source.is_dir() else source.parent) / "LICENSE"
    if license_file.is_file():
        try:  # a LICENSE linked out of the release (to /etc/passwd) must not end up in the dataset
            shutil.copyfile(regular_file_inside(license_file, release_root(source)), folder / "LICENSE")
        except RowError as err:
            raise BuildError(str(err).replace("media file", "file", 1)) from None
    card = render_card(builder_cls, summary)
    write_text_atomically(folder / "README.md", card)
    name = yaml.safe_load(card.split("---\n")[1]).get("pretty_name", builder_cls.NAME)
    text = eval_yaml(builder_cls.NAME, name)
    if text is not None:
        write_text_atomically(folder / EVAL_FILE, text)


def render_card(builder_cls: type[ReleaseBuilder], summary: BuildSummary) -> str:
    """Fill cards/<name>.md: `$configs` (YAML `configs:` and `dataset_info:`), `$rows` (table of rows per
    config), `$notes` (build notes)."""
    rows = ["| config | rows |", "|---|---|"] + [f"| `{name}` | {count:,} |" for name, count in summary.rows.items()]
    notes = list(summary.notes)
    if summary.origin is not None:
        notes.insert(0, f"Built from the Hub release [`{summary.origin.repo_id}`]"
                        f"(https://huggingface.co/datasets/{summary.origin.repo_id}) at commit `{summary.origin.commit}`.")
    if summary.mini:
        notes.insert(0, "**Synthetic mini benchmark** (hallubench.builders.mini): a few items in the official layout "
                        "with media drawn by code, for trying the pipeline. Scores on it measure nothing.")
    if summary.skipped:
        notes.append(f"{len(summary.skipped)} row(s) of the release were left out; skipped.jsonl lists each "
                     "with its file, index, id and reason.")
    template = Template(builder_cls.card_template())
    return template.substitute(configs=card_yaml(builder_cls, summary).rstrip("\n"), rows="\n".join(rows),
                               media=media_paths(builder_cls),
                               notes="\n".join(f"- {note}" for note in notes) or "- None.")


def media_paths(builder_cls: type[ReleaseBuilder]) -> str:
    """One line on resolving the video/audio path columns, which stay strings: decoding needs hallubench's loaders."""
    if not builder_cls.MEDIA_PATH_COLUMNS:
        return ""
    column = builder_cls.MEDIA_PATH_COLUMNS[0]
    return (f"{', '.join(f'`{c}`' for c in builder_cls.MEDIA_PATH_COLUMNS)} hold paths relative to this folder "
            "(strings, not decoded: read them with `hallubench.loaders` or any video/audio library): "
            f'`os.path.join(folder, row["{column}"])` here, or `hf_hub_download("ORG/NAME", row["{column}"], '
            'repo_type="dataset")` for a copy pushed to the Hub.\n')


def card_yaml(builder_cls: type[ReleaseBuilder], summary: BuildSummary) -> str:
    """The card's `configs:` (one per config, its content-named data file) and `dataset_info:` entries."""
    configs = []
    for name, path in summary.files.items():
        config: dict[str, Any] = {"config_name": name}
        if name == builder_cls.DEFAULT_OUTPUT_CONFIG:
            config["default"] = True
        configs.append({**config, "data_files": [{"split": SPLIT, "path": path}]})
    card_data = DatasetCardData()  # dataset_info as push_to_hub writes it
    DatasetInfosDict(summary.infos).to_dataset_card_data(card_data)
    tool: dict[str, Any] = {"benchmark": builder_cls.NAME}
    if summary.mini:
        tool["mini"] = True
    if summary.origin is not None:
        tool["source"] = {"repo_id": summary.origin.repo_id, "commit": summary.origin.commit}
    return yaml.safe_dump({"configs": configs, "dataset_info": card_data["dataset_info"], "hallubench": tool},
                          sort_keys=False, allow_unicode=True)


def replace_folder(tmp: Path, out: Path) -> None:
    """Move the finished `tmp` to `out`, replacing an old `out` (one hallubench made: `check_replaceable`) only after
    the new one is complete."""
    old = None
    if out.exists():
        if out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        else:
            old = out.with_name(f".{out.name}.old-{tmp.name.rsplit('-', 1)[-1]}")
            out.rename(old)
    tmp.rename(out)
    if old is not None:
        shutil.rmtree(old) if old.is_dir() else old.unlink()
