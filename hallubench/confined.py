"""The one door for folders hallubench did not write itself in this process: run folders, ranking folders, dataset
folders, sites, caches. What such a folder holds is data: a name in it never makes us read elsewhere.

Every read names a file RELATIVE to its folder (`Folder(root).read_bytes("results.json")`): an absolute name, a `..`
or a link whose target lies outside the folder is an `OutsideFolderError`, and so is anything that is not a regular
file (a FIFO that would block, a device). A link that stays inside is followed. Reads are bounded: a file over its
bound is a `FileTooLargeError`, found from its size before a byte is read (and the read stops one byte past it, for
a file that grows meanwhile). The final open is `O_NOFOLLOW` on the resolved path, so a link swapped in after the
check is refused by the kernel rather than followed.

A dataset folder fetched from the Hub is a snapshot of huggingface_hub's cache, whose files are links into its repo's
blob store (`<cache>/datasets--owner--name/snapshots/<revision>/file -> ../../blobs/<hash>`). `Folder(root,
hub_snapshot=True)` admits exactly that link too: when the folder lies in such a snapshot, a file that is ONE link
straight to a plain file directly in that same repo's `blobs/` (not a chain through anywhere else, not another
repo's blobs) is inside. Nothing else about the folder changes.

A record that names another folder (a ranking's `runs`) is data too: `given_folder` accepts it only when the user
named the same folder (on the command line), and otherwise says which argument to add.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath
from typing import Iterable, Iterator

from hallubench.errors import FileTooLargeError, OutsideFolderError, UnnamedFolderError
from hallubench.markup import escape_terminal

MiB = 1 << 20
MARK = 1 * MiB  # a small state file: the unfinished mark, a manifest
DOCUMENT = 256 * MiB  # one JSON or CSV document: results.json, crosscheck.json, a leaderboard
RECORDS = 1024 * MiB  # a JSON-lines file of records (samples.jsonl); read whole, so bounded by what memory holds
MEDIA = 16384 * MiB  # a media file, copied in blocks, never held whole
_BLOCK = MiB


def _size(size: int) -> str:
    return f"{size / MiB:,.1f} MiB" if size >= MiB else f"{size:,} bytes"


class Folder:
    """A folder we did not write, read only through its relative file names."""

    def __init__(self, root: Path | str, *, hub_snapshot: bool = False):
        self.given = Path(root)
        self.root = Path(os.path.realpath(self.given))
        self.blobs = hub_blobs(self.root) if hub_snapshot else None

    def _inside(self, real: Path) -> bool:
        return real == self.root or self.root in real.parents

    def _blob(self, link: Path) -> Path | None:
        """The blob `link` (a path under the folder) is a link straight to, when the folder is a Hub cache snapshot
        (`hub_snapshot`) and that blob is a plain file directly in the snapshot's own repo's blobs/; else None."""
        if self.blobs is None or not link.is_symlink():
            return None
        parent = Path(os.path.realpath(link.parent))  # a link is relative to the folder it is in
        if not self._inside(parent):
            return None
        target = Path(os.path.normpath(parent / os.readlink(link)))
        return target if target.parent == self.blobs and os.path.realpath(target) == str(target) else None

    def name_of(self, path: str | os.PathLike) -> str:
        """The name inside the folder of the absolute `path` (under the folder as given, or as resolved: one reached
        through a linked folder), for a caller that holds full paths; OutsideFolderError when it is under neither."""
        written = os.path.normpath(path)
        for root in (os.path.abspath(self.given), str(self.root)):
            relative = Path(os.path.relpath(written, root)).as_posix()
            if os.path.isabs(written) and ".." not in PurePosixPath(relative).parts:
                return relative
        raise OutsideFolderError(f"{path} is not inside {self.given}; a folder's files are read only inside it")

    def path(self, name: str | os.PathLike) -> Path:
        """The real path of the file `name` (relative to the folder) names; OutsideFolderError if it is not inside."""
        text = os.fspath(name)
        relative = PurePosixPath(text)
        if not text or "\0" in text or relative.is_absolute() or ".." in relative.parts:
            raise OutsideFolderError(f"{self.given}: {text!r} is not the name of a file inside the folder (an absolute "
                                     "path or `..`); a folder's files are read only by their names inside it")
        real = Path(os.path.realpath(self.root / relative))
        if not self._inside(real) and real != self._blob(self.root / relative):
            raise OutsideFolderError(f"{self.given / relative} leads outside {self.given} (a link to {real}); a "
                                     "folder's files are read only inside it: replace the link by the file itself")
        return real

    def _kind(self, name: str | os.PathLike) -> int | None:
        """The stat mode of `name` (None if it is not there); OutsideFolderError for a link out or a special file."""
        try:
            mode = os.stat(self.path(name)).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise OutsideFolderError(f"{self.given / os.fspath(name)} is not a regular file (a FIFO, socket or "
                                     "device); a folder's files are read only when they are plain files")
        return mode

    def is_file(self, name: str | os.PathLike) -> bool:
        """Whether `name` is a regular file inside the folder (False when missing; refused when it leads out)."""
        mode = self._kind(name)
        return mode is not None and stat.S_ISREG(mode)

    def is_dir(self, name: str | os.PathLike) -> bool:
        mode = self._kind(name)
        return mode is not None and stat.S_ISDIR(mode)

    def _open(self, name: str | os.PathLike, limit: int) -> tuple[int, int]:
        """An open descriptor of the regular file `name` and its size; FileNotFoundError when it is not there."""
        fd = os.open(self.path(name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OutsideFolderError(f"{self.given / os.fspath(name)} is not a regular file (a FIFO, socket, "
                                         "device or folder); a folder's files are read only when they are plain files")
            if info.st_size > limit:
                raise FileTooLargeError(f"{self.given / os.fspath(name)} holds {_size(info.st_size)}, over the "
                                        f"{_size(limit)} such a file may hold: it is not one hallubench wrote; replace "
                                        "it by the file the command that makes it writes")
        except BaseException:
            os.close(fd)
            raise
        return fd, info.st_size

    def read_bytes(self, name: str | os.PathLike, limit: int = DOCUMENT) -> bytes:
        """The bytes of the file `name`, at most `limit` of them (FileTooLargeError past that)."""
        fd, _ = self._open(name, limit)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise FileTooLargeError(f"{self.given / os.fspath(name)} grew past the {_size(limit)} such a file may "
                                    "hold while it was read; try again once nothing writes it")
        return data

    def read_text(self, name: str | os.PathLike, limit: int = DOCUMENT) -> str:
        """The file `name` as UTF-8 text (UnicodeDecodeError, a ValueError, when it is not)."""
        return self.read_bytes(name, limit).decode("utf-8")

    def copy(self, name: str | os.PathLike, target: Path, limit: int = MEDIA) -> None:
        """Copy the file `name` to `target` (a path we write) in blocks, at most `limit` bytes."""
        fd, _ = self._open(name, limit)
        copied = 0
        with os.fdopen(fd, "rb") as source, open(target, "wb") as out:
            for block in iter(lambda: source.read(_BLOCK), b""):
                copied += len(block)
                if copied > limit:
                    raise FileTooLargeError(f"{self.given / os.fspath(name)} grew past {_size(limit)} while copied")
                out.write(block)

    def names(self, pattern: str) -> list[str]:
        """The names (relative to the folder) of the entries matching the glob `pattern`, sorted; not yet checked:
        each is checked when read."""
        return sorted(path.relative_to(self.root).as_posix() for path in self.root.glob(pattern))

    def files(self) -> list[str]:
        """Every regular file under the folder, by its name relative to it, sorted; OutsideFolderError for any link
        out of it or special file in it (a folder uploaded whole holds nothing else)."""
        return sorted(self._walk(self.root))

    def _walk(self, folder: Path) -> Iterator[str]:
        for entry in os.scandir(folder):
            name = Path(entry.path).relative_to(self.root).as_posix()
            if self.is_dir(name):
                if not entry.is_symlink():  # a link to a folder inside: its files are listed under their own names
                    yield from self._walk(Path(entry.path))
            elif self.is_file(name):
                yield name


def hub_blobs(root: Path) -> Path | None:
    """The blobs/ folder of the huggingface_hub cache dataset repo in whose snapshot the real path `root` lies
    (`.../datasets--owner--name/snapshots/<revision>/...`, as `huggingface_hub.constants` and `file_download` lay out
    the cache); None when it lies in none."""
    for folder in (root, *root.parents):
        if folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("datasets--"):
            return folder.parent.parent / "blobs"
    return None


def given_folder(recorded: object, given: Iterable[Path | str], what: str, remedy: str) -> Path | None:
    """The folder the user gave that `recorded` (a path a record names, e.g. a ranking's run folder) is; None when
    nothing is there; UnnamedFolderError when a folder is there that the user did not name (`what` says who names
    it, `remedy` which argument names it too)."""
    if not isinstance(recorded, str) or not recorded or "\0" in recorded:
        return None
    real = os.path.realpath(recorded)
    for folder in given:
        if os.path.realpath(folder) == real:
            return Path(folder)
    if not os.path.exists(real):
        return None
    raise UnnamedFolderError(f"{what} names the folder {escape_terminal(recorded)}, which you did not give: a record is data, and "
                             f"never makes hallubench read a folder you did not name. {remedy}")
