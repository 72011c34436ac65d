"""Write a Hub-ready dataset folder from a builder, atomically.

Everything is built in a hidden temporary folder next to `out` (data/<config>/test.parquet, media,
README.md card, LICENSE, skipped.jsonl) and renamed to `out` only once complete, so a failed build
leaves nothing that looks like a dataset.
"""
from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any

import datasets
from datasets.exceptions import DatasetGenerationError

from hallubench.builders.base import PLAIN_ID, BuildError, ReleaseBuilder, RowError
from hallubench.builders.safe_files import (check_output_location, is_output_error, output_error, regular_file_inside,
                                            release_root)

CARDS = Path(__file__).parent / "cards"
SPLIT = "test"


@dataclass
class BuildSummary:
    """What a build wrote: the folder, rows per config, and the rows it left out (with reasons)."""

    path: Path
    rows: dict[str, int] = field(default_factory=dict)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def build_release(builder_cls: type[ReleaseBuilder], source: str | Path, out: str | Path,
                  skip_missing: bool = False, overwrite: bool = False) -> BuildSummary:
    """Convert the release at `source` with `builder_cls` into the dataset folder `out`."""
    source, out = Path(source).expanduser(), Path(out).expanduser()
    if not source.exists():
        raise BuildError(f"source {source} does not exist: point --source at the official {builder_cls.NAME} release.")
    if out.exists() and not (out.is_dir() and not any(out.iterdir())) and not overwrite:
        raise BuildError(f"output {out} already exists and is not empty: choose another --out or pass --overwrite.")
    check_output_location(source, out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    except OSError as err:
        raise output_error(err, out.parent) from err
    try:
        summary = BuildSummary(path=out)
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
            configs.update(builder.output_configs(builder.as_dataset(split=SPLIT)))
            summary.skipped += builder.skipped
            summary.notes += builder.notes
        for name, dataset in configs.items():
            if not PLAIN_ID.fullmatch(name):
                raise BuildError(f"{source}: config name {name!r} is not a plain name (letters, digits, _ . -); "
                                 "check the column the configs come from.")
            dataset.to_parquet(str(tmp / "data" / name / f"{SPLIT}.parquet"))
            summary.rows[name] = len(dataset)
        del configs
        shutil.rmtree(tmp / ".cache")
        write_extras(tmp, builder_cls, source, summary)
        replace_folder(tmp, out)
    except BaseException as err:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(err, OSError) and is_output_error(err, tmp, out):  # disk full, read-only: a named error
            raise output_error(err, out) from err
        raise
    return summary


def write_extras(folder: Path, builder_cls: type[ReleaseBuilder], source: Path, summary: BuildSummary) -> None:
    """The dataset card, the upstream LICENSE when the release has one, and skipped.jsonl."""
    if summary.skipped:
        with open(folder / "skipped.jsonl", "w", encoding="utf-8") as f:
            for row in summary.skipped:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    license_file = (source if source.is_dir() else source.parent) / "LICENSE"
    if license_file.is_file():
        try:  # a LICENSE linked out of the release (to /etc/passwd) must not end up in the dataset
            shutil.copyfile(regular_file_inside(license_file, release_root(source)), folder / "LICENSE")
        except RowError as err:
            raise BuildError(str(err).replace("media file", "file", 1)) from None
    (folder / "README.md").write_text(render_card(builder_cls, summary), encoding="utf-8")


def render_card(builder_cls: type[ReleaseBuilder], summary: BuildSummary) -> str:
    """Fill cards/<name>.md: `$configs` (YAML), `$rows` (table of rows per config), `$notes` (build notes)."""
    lines = ["configs:"]
    for name in summary.rows:
        lines.append(f"- config_name: {name}")
        if name == builder_cls.DEFAULT_OUTPUT_CONFIG:
            lines.append("  default: true")
        lines += ["  data_files:", f"  - split: {SPLIT}", f"    path: data/{name}/{SPLIT}.parquet"]
    rows = ["| config | rows |", "|---|---|"] + [f"| `{name}` | {count:,} |" for name, count in summary.rows.items()]
    notes = list(summary.notes)
    if summary.skipped:
        notes.append(f"{len(summary.skipped)} row(s) of the release were left out; skipped.jsonl lists each "
                     "with its file, index, id and reason.")
    template = Template((CARDS / f"{builder_cls.NAME}.md").read_text(encoding="utf-8"))
    return template.substitute(configs="\n".join(lines), rows="\n".join(rows),
                               notes="\n".join(f"- {note}" for note in notes) or "- None.")


def replace_folder(tmp: Path, out: Path) -> None:
    """Move the finished `tmp` to `out`, replacing an old `out` only after the new one is complete."""
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
