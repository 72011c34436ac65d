"""Whole outputs of several files of run and ranking folders, swapped in together; a single file is written whole
by hallubench/writes.py (a temporary twin, redacted, fsynced, renamed: never through a link), as each file here is.

A reader (or a kill -9) sees the old file or the new one, never a part. A full or read-only disk is a
`FolderWriteError` naming the file, and the temporary files are removed: what the folder held stays, and the same
command run again redoes the write.

Outputs of several files that belong together (a ranking folder's leaderboards, a run's results.json and charts)
go through `write_files`: every file is written beside its place first, then all are renamed in, then their
manifest (MANIFEST: each file's SHA-256) last. A full disk strikes while writing, before anything is renamed,
so the folder keeps its previous files, whole. A kill between the renames leaves files that do not match the
manifest: `check_files`, which every reader of such a folder calls, refuses them (and the killed writer's lock
record refuses readers too, harness/folder_lock.py). A folder with no manifest was written before manifests were.
A folder written whole (the viewer's site) is built in a sibling folder and swapped in by `replace_folder`.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Mapping

from hallubench import confined
from hallubench.confined import Folder
from hallubench.errors import MixedOutputError
from hallubench.writes import fsync_file, redact_file, remove_quietly, temporary_path, write_error

MANIFEST = ".hallubench-files.json"


def _digest(path: Path) -> str:
    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)
    return hasher.hexdigest()


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)  # the renames themselves reach the disk
    finally:
        os.close(fd)


def _manifest(folder: Path) -> dict[str, str] | None:
    """The file name -> SHA-256 table the last whole write of `folder` left, or None where there is none (read
    through the door, hallubench/confined.py: a manifest that is a link out is refused, not followed)."""
    try:
        data = Folder(folder).read_bytes(MANIFEST, confined.MARK)  # a link out or a FIFO: its own error, raised
    except FileNotFoundError:
        return None
    try:
        files = json.loads(data).get("files")
    except (ValueError, AttributeError):
        return {MANIFEST: "unreadable"}
    return files if isinstance(files, dict) else {MANIFEST: "unreadable"}


def has_manifest(folder: Path) -> bool:
    """Whether `folder` holds the manifest of a whole write (a link out of it is refused by the door)."""
    return Folder(folder).is_file(MANIFEST)


def write_files(folder: Path, writers: Mapping[str, Callable[[Path], object]], what: str) -> None:
    """Write the output `what` (e.g. "ranking") of several files into `folder` whole: `writers[name](tmp)` fills
    each file's temporary twin; then all replace the old files at once, followed by the manifest. A writer that
    makes no file (a chart with nothing to show) means the output has none: an older one is removed.

    FolderWriteError, truthfully: when the disk refuses while writing (a full disk), nothing was replaced and
    the folder holds its previous files, unchanged; when a rename fails after others were made, it says the folder
    is now mixed and refused by its readers until the command is run again."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    staged: dict[str, Path] = {}
    try:
        for name, write in writers.items():
            tmp = temporary_path(folder / name)
            staged[name] = tmp
            remove_quietly(tmp)  # a link planted under the twin's name is removed, not followed
            write(tmp)
            if tmp.exists():
                redact_file(tmp)
                fsync_file(tmp)
        made = {name: tmp for name, tmp in staged.items() if tmp.exists()}
        table = {"what": what, "files": {name: _digest(tmp) for name, tmp in made.items()}}
        staged[MANIFEST] = temporary_path(folder / MANIFEST)
        remove_quietly(staged[MANIFEST])
        staged[MANIFEST].write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
        fsync_file(staged[MANIFEST])
    except OSError as err:
        failed = folder / name if MANIFEST not in staged else folder / MANIFEST
        for tmp in staged.values():
            remove_quietly(tmp)
        previous = "its previous files" if _manifest(folder) is not None else "what it held before"
        raise write_error(failed, err, f"nothing of the new {what} was put in place: {folder} still holds "
                                       f"{previous}, unchanged") from err
    except BaseException:
        for tmp in staged.values():
            remove_quietly(tmp)
        raise
    name, changed = MANIFEST, False
    try:
        for name, tmp in made.items():
            os.replace(tmp, folder / name)
            changed = True
        for name in writers:
            if name not in made and (folder / name).exists():
                (folder / name).unlink()
                changed = True
        name = MANIFEST
        os.replace(staged[MANIFEST], folder / MANIFEST)
        _fsync_folder(folder)
    except OSError as err:
        for tmp in staged.values():
            remove_quietly(tmp)
        if not changed:
            raise write_error(folder / name, err, f"nothing of the new {what} was put in place: {folder} still holds "
                                                  "its previous files, unchanged") from err
        raise write_error(folder / name, err, f"the {what} in {folder} was cut off while its files were replaced, "
                                              "so it mixes old and new files: its readers refuse it until that "
                                              "command finishes", changed=True) from err


def check_files(folder: Path, remedy: str) -> None:
    """MixedOutputError when a file of `folder`'s last whole write is missing or differs from what its manifest
    recorded (a writer cut off between its renames, or a file replaced by hand); `remedy` says what makes it whole."""
    folder = Path(folder)
    files = _manifest(folder)
    if files is None:
        return
    door = Folder(folder)
    for name, digest in files.items():
        if name != Path(name).name or name.startswith(".."):
            problem = "is not a file of the folder"
        elif not door.is_file(name):
            problem = "is missing"
        elif digest == "unreadable" or hashlib.sha256(door.read_bytes(name)).hexdigest() != digest:
            problem = "is not the file written with the others"
        else:
            continue
        raise MixedOutputError(f"{folder}: {name} {problem} ({MANIFEST} lists what its last writer put there "
                               f"together): the folder mixes two outputs, as a writer cut off half-way leaves it. "
                               f"{remedy}")


@contextlib.contextmanager
def replace_folder(folder: Path):
    """Yield an empty sibling of `folder` to write a whole output into; on success it replaces `folder` (two
    renames: a crash between them leaves no folder, never a mix); on any error it is removed and `folder` is
    as it was."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.new-", dir=folder.parent))
    except OSError as err:
        raise write_error(folder, err) from err
    old = folder.with_name(f".{folder.name}.old-{staging.name.rsplit('-', 1)[-1]}")
    try:
        yield staging
        for path in staging.rglob("*"):  # every text file of the new output, whatever it holds, masked
            redact_file(path)
        if folder.exists():
            os.replace(folder, old)
        os.replace(staging, folder)
    except BaseException as err:
        shutil.rmtree(staging, ignore_errors=True)
        if old.exists() and not folder.exists():
            os.replace(old, folder)  # the second rename failed: put the old one back
        if isinstance(err, OSError):
            raise write_error(folder, err, f"nothing of the new output was put in place: {folder} is as it "
                                           "was") from err
        raise
    shutil.rmtree(old, ignore_errors=True)
