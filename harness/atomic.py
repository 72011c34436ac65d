"""Whole files of run and ranking folders (merged samples, results.json, charts, leaderboards, the run state),
written to a temporary file beside them, fsynced, then renamed over the old one.

A reader (or a kill -9) sees the old file or the new one, never a part. A full or read-only disk is a
`FolderWriteError` naming the file, and the temporary file is removed: what the folder held stays, and the same
command run again redoes the write. Hand-written because `atomicwrites`, the library for this, is archived
(unmaintained since 2022) and the rest is one rename.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Callable

from hallubench.errors import FolderWriteError


def temporary_path(path: Path) -> Path:
    """Where `path` is written before the rename: a hidden name beside it, keeping its suffix (matplotlib
    picks the image format from it)."""
    return path.with_name(f".{path.stem}.tmp{path.suffix}")


def write_error(path: Path, err: OSError) -> FolderWriteError:
    return FolderWriteError(f"cannot write {path}: {err.strerror or err}. Free space on that disk (or make the folder "
                            "writable) and run the same command again: what the folder held is unchanged, and "
                            "finished samples are kept")


def _remove(tmp: Path) -> None:
    with contextlib.suppress(OSError):  # on a read-only disk it was never made
        tmp.unlink(missing_ok=True)


def write_atomically(path: Path, write: Callable[[Path], object]) -> Path:
    """`write(tmp)` fills a temporary file, which then replaces `path`; FolderWriteError (nothing left behind)
    when the disk refuses. A `write` that makes no file (a chart with nothing to show) leaves `path` as it was."""
    path = Path(path)
    tmp = temporary_path(path)
    try:
        write(tmp)
        if not tmp.exists():
            return path
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as err:
        _remove(tmp)
        raise write_error(path, err) from err
    except BaseException:  # Ctrl-C or a bug while writing: no half file beside the old one either
        _remove(tmp)
        raise
    return path


def write_bytes_atomically(path: Path, data: bytes) -> Path:
    return write_atomically(path, lambda tmp: tmp.write_bytes(data))
