"""Every file hallubench writes goes through here: whole files replaced by rename, appends, and folders it may replace.

- A write never follows a link: a whole file is written to a temporary twin beside it (a link planted under the
  twin's name is removed first, not followed) and renamed over its place (a rename replaces a link, never its
  target); an append opens with O_NOFOLLOW, so a `samples_rank0.jsonl` that is a link is a `LinkedPathError`
  naming the link and where it points, and nothing is written.
- Every text file written whole is redacted before it is put in place (hallubench/redact.py): whatever its fields,
  a credential never reaches the disk.
- A full or read-only disk is a `FolderWriteError` naming the file (`write_error`), and the temporary twin is
  removed: the file holds what it held, and the same command run again redoes the write.
- A folder is replaced (`--overwrite`, `view --output-dir`) only when hallubench made it: the maker marks it
  (`mark_folder`), and `check_replaceable` refuses a folder holding anything else.

Hand-written because `atomicwrites`, the library for this, is archived (unmaintained since 2022) and the rest is
one rename and one open flag.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import BinaryIO, Callable

from hallubench.errors import FolderWriteError, LinkedPathError, UnmarkedFolderError
from hallubench.redact import redact

# The files of records, cards, sites and logs: redacted whole before they are put in place. Others are not
# redacted: data (parquet, png, sqlite) and code copied byte for byte (a metric script in evaluate's cache).
TEXT_SUFFIXES = {".json", ".jsonl", ".md", ".html", ".htm", ".js", ".txt", ".csv", ".tsv", ".yaml", ".yml", ".log"}
# The mark of a folder hallubench made whole (a dataset folder, a site); older sites carry the second name.
MARK, OLD_MARKS = ".hallubench-made", (".hallubench-site",)


def write_error(path: Path, err: OSError, kept: str | None = None, *, changed: bool = False) -> FolderWriteError:
    """The error for a write of `path` the disk refused; `kept` says truthfully what is on disk now (default: `path`
    as it was before), `changed` whether the folder was changed half-way (its readers then refuse it)."""
    error = FolderWriteError(f"cannot write {path}: {err.strerror or err}. Free space on that disk (or make the folder "
                             f"writable) and run the same command again; {kept or f'{path.name} and the rest of the folder are unchanged'}")
    error.folder_changed = changed
    return error


def link_error(path: Path) -> LinkedPathError:
    try:
        target = os.readlink(path)
    except OSError:
        target = "elsewhere"
    return LinkedPathError(f"refusing to write {path}: it is a symbolic link (to {target}), and writing through it "
                           f"would change that file. hallubench writes only files it makes: remove the link, then run "
                           f"the same command again")


def refuse_link(path: Path) -> Path:
    """`path`, after LinkedPathError when it is a symbolic link."""
    if os.path.islink(path):
        raise link_error(Path(path))
    return Path(path)


def open_append(path: Path) -> BinaryIO:
    """`path` opened to append bytes, created if missing; LinkedPathError when it is a link (O_NOFOLLOW)."""
    return _open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, "ab")


def open_update(path: Path) -> BinaryIO:
    """An existing `path` opened to read and rewrite in place (cut a torn tail); LinkedPathError when it is a link."""
    return _open(path, os.O_RDWR, "r+b")


def _open(path: Path, flags: int, mode: str) -> BinaryIO:
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as err:
        if os.path.islink(path):  # ELOOP, as O_NOFOLLOW reports a link
            raise link_error(Path(path)) from None
        raise write_error(Path(path), err) from err
    return os.fdopen(fd, mode)


def temporary_path(path: Path) -> Path:
    """Where `path` is written before the rename: a hidden name beside it, keeping its suffix (matplotlib
    picks the image format from it)."""
    return path.with_name(f".{path.stem}.tmp{path.suffix}")


def remove_quietly(path: Path) -> None:
    """Remove `path` (a link itself, never its target); nothing when it is not there or cannot be removed."""
    with contextlib.suppress(OSError):  # on a read-only disk it was never made
        Path(path).unlink(missing_ok=True)


def redacted_bytes(name: str, data: bytes) -> bytes:
    """The bytes of a file named `name`, every credential masked when it is text (by its suffix, and UTF-8)."""
    if Path(name).suffix.lower() not in TEXT_SUFFIXES:
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data  # not text after all
    return redact(text).encode("utf-8")


def redact_file(path: Path) -> None:
    """Mask every credential in the text file `path` in place (before it is renamed in); other files are left."""
    path = Path(path)
    if path.suffix.lower() not in TEXT_SUFFIXES or path.is_symlink() or not path.is_file():
        return
    data = path.read_bytes()
    masked = redacted_bytes(path.name, data)
    if masked != data:
        path.write_bytes(masked)


def fsync_file(path: Path) -> None:
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


def write_atomically(path: Path, write: Callable[[Path], object]) -> Path:
    """`write(tmp)` fills a temporary file, which (redacted, fsynced) then replaces `path`; FolderWriteError (nothing
    left behind) when the disk refuses. A `write` that makes no file (a chart with nothing to show) leaves `path` as
    it was. A link at `path` is replaced by the file, never written through."""
    path = Path(path)
    tmp = temporary_path(path)
    try:
        remove_quietly(tmp)  # a link planted under the twin's name is removed, not followed
        write(tmp)
        if not tmp.exists():
            return path
        redact_file(tmp)
        fsync_file(tmp)
        os.replace(tmp, path)
    except OSError as err:
        remove_quietly(tmp)
        raise write_error(path, err) from err
    except BaseException:  # Ctrl-C or a bug while writing: no half file beside the old one either
        remove_quietly(tmp)
        raise
    return path


def write_bytes_atomically(path: Path, data: bytes) -> Path:
    return write_atomically(path, lambda tmp: tmp.write_bytes(data))


def write_text_atomically(path: Path, text: str) -> Path:
    return write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def mark_folder(folder: Path, command: str) -> None:
    """Mark `folder` (being built) as made by hallubench, so `command` may replace it later."""
    (Path(folder) / MARK).write_text(f"made by `{command}`; `{command}` may replace this folder whole\n",
                                     encoding="utf-8")


def is_marked(folder: Path) -> bool:
    return any((Path(folder) / name).is_file() and not (Path(folder) / name).is_symlink()
               for name in (MARK, *OLD_MARKS))


def check_replaceable(folder: Path, flag: str, what: str) -> None:
    """UnmarkedFolderError unless `folder` is absent, an empty folder, or a folder hallubench made (its mark):
    `flag` (e.g. "--output-dir DIR --overwrite") never deletes anything else. `what` names what would go there."""
    folder = Path(folder)
    if os.path.islink(folder):
        raise UnmarkedFolderError(f"{flag} {folder}: it is a symbolic link; give the folder itself for the {what}")
    if not folder.exists():
        return
    if not folder.is_dir():
        raise UnmarkedFolderError(f"{flag} {folder}: a file is there, not a folder hallubench made; give a new or "
                                  f"empty folder for the {what}")
    if any(folder.iterdir()) and not is_marked(folder):
        raise UnmarkedFolderError(f"{flag} {folder}: the folder holds files that hallubench did not write (it has "
                                  f"no {MARK}), so it is not replaced; give a new or empty folder for the {what}, or "
                                  f"remove that folder yourself")
