"""Where the built datasets are, and reading one task's rows with plain `datasets.load_dataset`.

Without `--data-dir` the embedded mini benchmarks are built once into a cache folder
(`$HALLUBENCH_CACHE`, default `~/.cache/hallubench`) by `hallubench.builders.mini.build_all`.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hallubench.benchmarks.task import Task
from hallubench.harness.options import ConfigError

COMPLETE = ".complete"


def default_data_dir() -> Path:
    """The cache folder of the mini benchmarks, keyed by the builders' source so an upgrade rebuilds them."""
    import hallubench.builders as builders

    digest = hashlib.sha256()
    root = Path(builders.__file__).parent
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


def dataset_dir(data_dir: Path, task: Task) -> Path:
    """The built dataset folder of `task`; ConfigError saying how to make it otherwise."""
    folder = Path(data_dir) / task.benchmark
    if not (folder / "README.md").exists():
        raise ConfigError(
            f"no built {task.benchmark!r} dataset at {folder} (task {task.name!r}); run "
            f"`hallubench build {task.benchmark} --source RELEASE --out {folder}` or pass --data-dir with built datasets")
    return folder


def load_rows(folder: Path, task: Task, limit: int | None = None) -> tuple[list[dict[str, Any]], int]:
    """The first `limit` rows (dataset order) of the task's config and split, and the split's size."""
    import datasets

    ds = datasets.load_dataset(str(folder), task.config, split=task.split)
    total = len(ds)
    if limit is not None:
        ds = ds.select(range(min(limit, total)))
    rows = ds.to_list()
    ids = [row["id"] for row in rows]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{folder} config {task.config!r}: sample ids are not unique")
    return rows, total
