"""Arrays handed from the decoding helper to its parent through shared memory instead of the pipe.

The parent names a per-request prefix; the helper creates files `<prefix>-<n>` in /dev/shm (RAM), maps
them and decodes straight into them; the parent maps the same pages and unlinks the names at once, so
the array lives exactly as long as the parent holds it. Whatever goes wrong (timeout, crash, exception)
the parent removes `<prefix>-*`, and a new helper removes files left by parents that died.
"""
from __future__ import annotations

import glob
import itertools
import mmap
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
PREFIX = "hallubench-media"
_requests = itertools.count()


@dataclass(frozen=True)
class SharedArray:
    """What crosses the pipe instead of the array: where it is and how to read it."""

    path: str
    shape: tuple[int, ...]
    dtype: str


def request_prefix() -> str:
    """A fresh prefix for one request's files, naming the parent's pid (see `remove_orphans`)."""
    return str(ROOT / f"{PREFIX}-{os.getpid()}-{next(_requests)}")


def create(path: str, shape: tuple[int, ...], dtype) -> np.ndarray | None:
    """A new zeroed array backed by the file `path`, or None when shared memory has no room for it
    (the caller then returns an ordinary array through the pipe). The space is reserved up front:
    writing to a mapped file on a full tmpfs kills the process with SIGBUS."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if nbytes == 0:
        return None
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        reserve = getattr(os, "posix_fallocate", None)
        reserve(fd, 0, nbytes) if reserve else os.ftruncate(fd, nbytes)
        mapped = mmap.mmap(fd, nbytes)
    except OSError:  # ENOSPC: /dev/shm is full or small (64 MiB in a default Docker container)
        os.unlink(path)
        return None
    finally:
        os.close(fd)
    return np.frombuffer(mapped, dtype=dtype).reshape(shape)


def attach(shared: SharedArray) -> np.ndarray:
    """The parent's view of a helper's array (no copy); the file's name is removed at once."""
    try:
        fd = os.open(shared.path, os.O_RDWR)
        try:
            mapped = mmap.mmap(fd, int(np.prod(shared.shape)) * np.dtype(shared.dtype).itemsize)
        finally:
            os.close(fd)
    finally:
        unlink(shared.path)
    return np.frombuffer(mapped, dtype=shared.dtype).reshape(shared.shape)


def unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def remove(prefix: str) -> None:
    """Remove every file of one request (after a timeout, crash or error)."""
    for path in glob.glob(glob.escape(prefix) + "-*"):
        unlink(path)


def remove_orphans() -> None:
    """Remove files of requests whose parent process no longer exists (it was killed mid-request)."""
    for path in glob.glob(str(ROOT / f"{PREFIX}-*-*-*")):
        pid = Path(path).name.split("-")[2]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            unlink(path)
        except PermissionError:  # alive, another user's
            pass
