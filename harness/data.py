"""Where the built datasets are, and reading one task's rows through the one dataset reader
(builders/dataset_reader.py), checked.

`--data-dir` is required: a folder of built datasets (`<dir>/<benchmark>/`, or one benchmark's folder
itself), a Hub dataset repo id of built hallubench datasets (`org/name[@revision]`), or `mini` for the
embedded mini benchmarks, built once into a cache folder (`$HALLUBENCH_CACHE`, default
`~/.cache/hallubench`) by `hallubench.builders.mini.build_all`.
Those are synthetic (media drawn by code) and results made on them say so.

The rows `datasets` returns are checked against the folder's data files (row count, then the rows
themselves), so a stale `datasets` cache entry or a data file edited after the build stops the run with an
error naming the folder instead of evaluating other items than the folder holds.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hallubench.benchmarks.task import Task
from hallubench.errors import ConfigError, DatasetRowError, StaleRowsError  # noqa: F401  (importable from here)
from hallubench.harness.command import command_line

COMPLETE = ".complete"
MINI = "mini"
GUIDANCE = (
    "Build the benchmarks from their official releases with `hallubench build <benchmark> --output-dir datasets/<benchmark>` "
    "(it downloads the release from the Hub, or takes --source PATH) and pass --data-dir datasets/, pass a Hub "
    "dataset repo of a built benchmark (--data-dir org/name), or pass --data-dir mini to try the pipeline on the "
    "embedded synthetic mini benchmarks (not a measurement of any model).")


def require_data_dir(value: str | Path | None) -> str:
    """The --data-dir as given; ConfigError with the guidance when there is none."""
    if value is None or str(value) == "":
        raise ConfigError(f"--data-dir is required: hallubench never picks benchmark data for you. {GUIDANCE}")
    return str(value)


def resolve_data_dir(value: str | Path | None) -> Path:
    """The --data-dir a run reads; ConfigError with guidance when none was given or it does not exist.

    `mini` names the embedded mini benchmarks (a folder called mini: give it as ./mini); an existing path is
    a folder; `hub:org/name[@rev]`, or a bare `org/name[@rev]` that is no local path, is a Hub dataset repo of
    built hallubench datasets (one benchmark's folder, or `<benchmark>/` folders), downloaded to the HF cache.
    """
    given = require_data_dir(value)
    if given == MINI:
        return ensure_mini(default_data_dir())
    path = Path(given).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ConfigError(f"--data-dir {given}: not a folder. {GUIDANCE}")
        return path
    from hallubench.errors import BuildError
    from hallubench.builders.hub import HUB_PREFIX, download, parse_repo

    repo = parse_repo(given)
    if repo is None or (not given.startswith(HUB_PREFIX) and given.startswith((".", "/", "~"))):
        raise ConfigError(f"--data-dir {given}: no such folder (nor a Hub dataset repo id org/name). {GUIDANCE}")
    what = f"--data-dir {given}" if given.startswith(HUB_PREFIX) else \
        f"--data-dir {given} (no such folder here, so read as a Hub dataset repo id)"
    try:
        return download(*repo, what=what, manual="pass that folder as --data-dir").path
    except BuildError as err:
        raise ConfigError(str(err)) from None


def default_data_dir() -> Path:
    """The cache folder of the mini benchmarks, keyed by the builders' source so an upgrade rebuilds them."""
    from importlib.util import find_spec

    digest = hashlib.sha256()  # the builders' folder, found without importing them (they import datasets)
    root = Path(next(iter(find_spec("hallubench.builders").submodule_search_locations)))
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".md")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    cache = Path(os.environ.get("HALLUBENCH_CACHE", Path.home() / ".cache" / "hallubench"))
    return cache / f"mini-{digest.hexdigest()[:12]}"


def ensure_mini(cache: Path) -> Path:
    """Build the mini benchmarks under `cache` unless a finished build is there; the datasets folder.

    The build goes to a private folder renamed into place, so concurrent runs never see half a build.
    """
    cache = Path(cache)
    if not (cache / COMPLETE).exists():
        from hallubench.builders.mini import build_all

        cache.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache.parent, prefix=f".{cache.name}-") as tmp:
            build_all(tmp)
            (Path(tmp) / COMPLETE).write_text("built by hallubench.builders.mini.build_all\n")
            if cache.exists() and not (cache / COMPLETE).exists():
                shutil.rmtree(cache)  # left by an interrupted build of an older version
            try:
                os.rename(tmp, cache)
            except OSError:
                if not (cache / COMPLETE).exists():  # not merely another run finishing first
                    raise
    return cache / "datasets"


def card_metadata(folder: Path) -> dict[str, Any]:
    """The YAML header of the folder's README.md (empty when there is none), read inside the folder."""
    from hallubench.builders.dataset_reader import read_card

    return read_card(folder)


def is_mini(folder: Path, card: dict[str, Any] | None = None) -> bool:
    """Whether the dataset folder was built from an embedded mini release (its card, `card` when read, says so)."""
    return bool(((card_metadata(folder) if card is None else card).get("hallubench") or {}).get("mini"))


def dataset_dir(data_dir: Path, task: Task, given: str | None = None) -> Path:
    """The built dataset folder of `task`: `<data_dir>/<benchmark>`, or `data_dir` itself when its card says it is
    that benchmark; ConfigError saying how to make it otherwise. `given` is the --data-dir as typed: a Hub repo id
    downloaded to `data_dir` is named in the error, which never advises building into the download cache."""
    folder = Path(data_dir) / task.benchmark
    if (folder / "README.md").exists():
        return folder
    if (card_metadata(data_dir).get("hallubench") or {}).get("benchmark") == task.benchmark:
        return Path(data_dir)
    if given is not None and given != MINI and Path(given).expanduser() != Path(data_dir):
        holds = sorted({p.parent.name for p in Path(data_dir).glob("*/README.md")} |
                       {str((card_metadata(data_dir).get("hallubench") or {}).get("benchmark") or "")} - {""})
        raise ConfigError(
            f"--data-dir {given}: that Hub dataset repo holds no built {task.benchmark!r} dataset (task "
            f"{task.name!r}; it holds: {', '.join(holds) or 'no hallubench dataset'}). Build it locally with "
            f"`hallubench build {task.benchmark} --output-dir datasets/{task.benchmark}` and pass --data-dir datasets/, or "
            f"pass --data-dir with the Hub repo of a built {task.benchmark} dataset.")
    raise ConfigError(
        f"no built {task.benchmark!r} dataset at {folder} (task {task.name!r}); run "
        f"`{command_line(['build', task.benchmark, '--output-dir', str(folder)])}` or pass --data-dir with built datasets")


def data_files(folder: Path, task: Task) -> list[Path]:
    """The data files the card lists for the task's config and split, every config's checked to stay inside it."""
    from hallubench.builders.dataset_reader import DatasetFolder

    return DatasetFolder(folder).data_files(task.config, task.split, task.name)


def check_fingerprints(folder: Path, files: list[Path]) -> None:
    """A data file named test-<fingerprint>.parquet by `build` must still hold the bytes of that fingerprint."""
    from hallubench.builders.folder import FINGERPRINT_CHARS, fingerprint

    for path in files:
        named = path.stem.rpartition("-")[2]
        if len(named) == FINGERPRINT_CHARS and fingerprint(path) != named:
            raise StaleRowsError(
                f"{folder}: {path.relative_to(folder)} was changed after `hallubench build` wrote it (its content no "
                "longer matches the fingerprint in its name), so `datasets` may serve the old rows from its cache. "
                f"Rebuild the folder: `hallubench build ... --output-dir {folder} --overwrite`.")


def check_rows(folder: Path, task: Task, ds, files: list[Path], n: int) -> None:
    """The split's row count and its first `n` rows must be those of the folder's data files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    expected = sum(pq.read_metadata(path).num_rows for path in files)
    fix = (f"The datasets cache ({ds.cache_files[0]['filename'] if ds.cache_files else 'in memory'}) holds another "
           f"dataset under this folder's name: rebuild the folder with `hallubench build ... --output-dir {folder} "
           "--overwrite` (data files named by content), or remove that cache entry.")
    where = f"{folder} config {task.config!r} split {task.split!r}"
    if len(ds) != expected:
        raise StaleRowsError(f"{where}: datasets.load_dataset returned {len(ds)} rows, the folder's data files "
                             f"({', '.join(p.name for p in files)}) hold {expected}. {fix}")
    batches, left = [], n
    for path in files:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=max(1, min(left, 1024))):
            batches.append(batch.slice(0, left))
            left -= len(batches[-1])
            if left <= 0:
                break
        if left <= 0:
            break
    loaded = ds.data.table.slice(0, n)
    on_disk = pa.Table.from_batches(batches, schema=batches[0].schema) if batches else loaded.slice(0, 0)
    try:
        same = on_disk.cast(loaded.schema).equals(loaded)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
        same = False
    if not same:
        raise StaleRowsError(f"{where}: the rows datasets.load_dataset returned differ from those in "
                             f"{', '.join(p.name for p in files)}. {fix}")


def first_rows(ds, n: int) -> list[dict[str, Any]]:
    """The first `n` rows; `datasets.Image` cells as their name, the image's path relative to the folder (the
    harness reads the file there), without decoding or copying the embedded bytes."""
    import datasets
    import pyarrow.compute as pc

    images = [name for name, feature in ds.features.items() if isinstance(feature, datasets.Image)]
    rows = ds.select(range(n)).remove_columns(images).to_list()
    table = ds.data.table.slice(0, n)
    for name in images:
        for row, path in zip(rows, pc.struct_field(table.column(name), "path").to_pylist()):
            row[name] = path
    return rows


def dataset_folder(folder: Path):
    """The folder's DatasetFolder (builders/dataset_reader.py): its card read and its data files confined, once."""
    from hallubench.builders.dataset_reader import DatasetFolder

    return DatasetFolder(folder)


def load_rows(folder: Path, task: Task, limit: int | None = None, dataset=None) -> tuple[list[dict[str, Any]], int]:
    """The first `limit` rows (dataset order) of the task's config and split, and the split's size; `dataset` is
    the folder's DatasetFolder when the caller read it already.

    StaleRowsError naming the folder when the rows `load_dataset` gives are not the folder's.
    """
    dataset = dataset or dataset_folder(folder)
    files = dataset.data_files(task.config, task.split, task.name)
    check_fingerprints(Path(folder), files)
    ds = dataset.load(task.config, task.split)
    if "id" not in ds.column_names:
        raise DatasetRowError(f"{folder} config {task.config!r}: no column 'id' (every row needs its sample id); "
                              "rebuild it with `hallubench build`")
    total = len(ds)
    n = total if limit is None else min(limit, total)
    check_rows(folder, task, ds, files, n)
    rows = first_rows(ds, n)
    ids = [row["id"] for row in rows]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{folder} config {task.config!r}: sample ids are not unique")
    return rows, total
