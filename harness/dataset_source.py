"""Which data a task's scores came from, recorded in results.json (`tasks.<task>.dataset`) so a published score
can be tied to it: `{"id": the Hub dataset repo or None, "revision": the Hub commit sha, or "sha256:<hex>", the
content fingerprint of a local folder's data files}`.

A local folder's fingerprint covers the task's data files (the rows, media paths and embedded images), each by
the sha256 that `hallubench build` puts in its name (checked against the bytes before every run by
harness/data.py) or, for a file not named so, by its bytes; media files a row names by path are not hashed (a
video set can be many gigabytes) and are tied to the rows by their paths.
"""
from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath
from typing import Any

from hallubench.benchmarks.task import Task
from hallubench.harness.data import MINI, data_files, dataset_dir

LOCAL = "sha256:"


def named_fingerprint(path: str) -> str | None:
    """The content fingerprint `hallubench build` put in a data file's name (`test-<fingerprint>.parquet`), or None."""
    from hallubench.builders.folder import FINGERPRINT_CHARS

    named = PurePosixPath(path).stem.rpartition("-")[2]
    return named if len(named) == FINGERPRINT_CHARS and all(c in "0123456789abcdef" for c in named) else None


def fingerprint_files(files: dict[str, str]) -> str:
    """`sha256:<hex>` over data files given as path in the dataset folder -> content fingerprint."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(f"{path}\0{files[path]}\n".encode())
    return LOCAL + digest.hexdigest()


def data_fingerprint(folder: Path, task: Task, paths: list[Path] | None = None) -> str:
    """`sha256:<hex>` over the task's data files in `folder` (path and content fingerprint); `paths`: those files,
    when the caller has read the folder's card already."""
    from hallubench.builders.folder import fingerprint

    paths = data_files(folder, task) if paths is None else paths
    return fingerprint_files({p.relative_to(folder).as_posix(): named_fingerprint(p.name) or fingerprint(p)
                              for p in paths})


def hub_snapshot(data_dir_arg: str | None, data_dir: Path) -> tuple[str, str] | None:
    """(repo id, commit sha) when `--data-dir` named a Hub repo: its snapshot lies in the huggingface_hub cache
    at `.../snapshots/<commit sha>`."""
    from hallubench.builders.hub import parse_repo

    if not data_dir_arg or data_dir_arg == MINI or Path(data_dir_arg).expanduser().exists():
        return None
    repo = parse_repo(data_dir_arg)
    if repo is None or Path(data_dir).parent.name != "snapshots":
        return None
    return repo[0], Path(data_dir).name


def dataset_source(data_dir_arg: str | None, data_dir: Path, task: Task,
                   paths: list[Path] | None = None) -> dict[str, Any]:
    """`{"id", "revision"}` of the data `task` read under the resolved `data_dir` (`data_dir_arg` as given)."""
    snapshot = hub_snapshot(data_dir_arg, data_dir)
    if snapshot is not None:
        return {"id": snapshot[0], "revision": snapshot[1]}
    return {"id": None, "revision": data_fingerprint(dataset_dir(data_dir, task), task, paths)}
