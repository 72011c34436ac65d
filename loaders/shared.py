"""Arrays handed from the decoding helper to its parent through shared memory instead of the pipe.

The helper decodes straight into files in /dev/shm (RAM), in one of two ways:
- its arena, a file it keeps mapped across requests and grows to the largest request seen: the
  parent copies each array out (one memcpy) before the next request reuses the space. Allocating
  tmpfs pages costs ~2 ms per MB here (5x anonymous memory), so they are allocated once, not per call;
- when the arena is missing or too small (the first requests of a size): a per-request file
  `<prefix>-<n>` that the parent maps as the array itself (no copy) and unlinks at once.
Whatever goes wrong (timeout, crash, exception) the parent removes `<prefix>-*` and, with the helper,
its arena; a helper whose parent exits removes its arena, and a new helper removes files left by
parents that died.
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
    offset: int | None = None  # set for the arena: the parent copies from here


def request_prefix() -> str:
    """A fresh prefix for one request's files, naming the parent's pid (see `remove_orphans`)."""
    return str(ROOT / f"{PREFIX}-{os.getpid()}-{next(_requests)}")


def nbytes(shape: tuple[int, ...], dtype) -> int:
    return int(np.prod(shape)) * np.dtype(dtype).itemsize


def arena_prefix(request: str) -> str:
    """The arenas' common prefix for the parent that named `request` (or this process, the parent)."""
    return request.rsplit("-", 1)[0] + "-arena"


def create(path: str, shape: tuple[int, ...], dtype) -> np.ndarray | None:
    """A new zeroed array backed by the file `path`, or None when shared memory has no room for it
    (the caller then returns an ordinary array through the pipe). The space is reserved up front:
    writing to a mapped file on a full tmpfs kills the process with SIGBUS."""
    size = nbytes(shape, dtype)
    if size == 0:
        return None
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)  # TRUNC: a stale file of a reused pid
    try:
        reserve = getattr(os, "posix_fallocate", None)
        reserve(fd, 0, size) if reserve else os.ftruncate(fd, size)
        mapped = mmap.mmap(fd, size)
    except OSError:  # ENOSPC: /dev/shm is full or small (64 MiB in a default Docker container)
        os.unlink(path)
        return None
    finally:
        os.close(fd)
    return np.frombuffer(mapped, dtype=dtype).reshape(shape)


class Arena:
    """The helper's reusable shared file: hands out aligned slices, starting over each request."""

    def __init__(self, path: str, size: int) -> None:
        buffer = create(path, (size,), np.uint8)
        if buffer is None:
            raise OSError(f"no room in {ROOT} for a {size}-byte media arena")
        self.path, self.buffer, self.used = path, buffer, 0

    def take(self, shape: tuple[int, ...], dtype) -> tuple[np.ndarray, SharedArray] | None:
        size = nbytes(shape, dtype)
        if self.used + size > len(self.buffer):
            return None
        offset, self.used = self.used, self.used + -(-size // 64) * 64
        array = self.buffer[offset:offset + size].view(dtype).reshape(shape)
        return array, SharedArray(self.path, tuple(shape), np.dtype(dtype).str, offset)

    def close(self) -> None:
        unlink(self.path)  # the pages go once the parent drops its mapping too


_parent_arena: tuple[str, mmap.mmap] | None = None  # the parent's mapping of the helper's current arena


def attach(shared: SharedArray) -> np.ndarray:
    """The parent's array: a copy out of the helper's arena, or the helper's per-request file mapped
    as is (no copy), its name removed at once."""
    if shared.offset is not None:
        return _arena_view(shared.path)[shared.offset:shared.offset + nbytes(shared.shape, shared.dtype)] \
            .view(shared.dtype).reshape(shared.shape).copy()
    try:
        return _map(shared.path).view(shared.dtype).reshape(shared.shape)
    finally:
        unlink(shared.path)


def _map(path: str) -> np.ndarray:
    fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    try:
        return np.frombuffer(mmap.mmap(fd, os.fstat(fd).st_size), dtype=np.uint8)
    finally:
        os.close(fd)


def _arena_view(path: str) -> np.ndarray:
    global _parent_arena
    if _parent_arena is None or _parent_arena[0] != path:
        _parent_arena = (path, _map(path))
    return _parent_arena[1]


def forget_arena() -> None:
    """Parent side, when its helper goes: drop the mapping and remove the helper's arena files."""
    global _parent_arena
    _parent_arena = None
    remove(str(ROOT / f"{PREFIX}-{os.getpid()}-arena"))


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
