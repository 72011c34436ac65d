"""The run folder's sample store: append-only JSONL files that survive crashes and kill -9.

Each process appends finished samples to its own `samples_rank<k>.jsonl` (flushed and fsynced per
record). At the end the main process merges every record into `samples.jsonl`, sorted by (task, id),
and removes the rank files. A torn last line (a write cut by kill -9 or a full disk, at any byte: inside a
multi-byte UTF-8 character too) is skipped and reported, and its sample runs again; a bad line anywhere else
is an error naming the file and line. A full or read-only disk is a `FolderWriteError` naming the file; a rank
file that is a symbolic link is refused (`LinkedPathError`), never appended through; every line is redacted.

A record is one JSON line, a `SampleRecord` (harness/records.py, with its schema version); reading
checks every line (`check_record`). Multi-step tasks also journal each finished step of each item the same
way, in `steps_rank<k>.jsonl` merged into `steps.jsonl` (`kind=STEPS`), so a rerun resumes at the first
unfinished step (harness/program.py).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from hallubench import confined
from hallubench.confined import Folder
from hallubench.errors import CorruptRecordError
from hallubench.writes import open_append, open_update, refuse_link, write_atomically, write_error
from hallubench.harness.records import check_record
from hallubench.redact import redact

SAMPLES, STEPS = "samples", "steps"  # the two kinds of record files: one record per sample, per finished step
MERGED = f"{SAMPLES}.jsonl"
RANK_GLOB = f"{SAMPLES}_rank*.jsonl"


def rank_file(run_dir: Path, rank: int, kind: str = SAMPLES) -> Path:
    return Path(run_dir) / f"{kind}_rank{rank}.jsonl"


@dataclass
class StoreContents:
    """Records of a run folder by key, plus what reading noticed (torn lines, superseded errors)."""

    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    torn: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # for each torn line: its file and the sample it was (torn_record)

    def finished(self) -> set[str]:
        """Keys of samples that need no more work (errors are retried by a rerun)."""
        return {key for key, rec in self.records.items() if rec.get("error") is None}


def _read(path: Path) -> bytes:
    path = Path(path)
    return Folder(path.parent).read_bytes(path.name, confined.RECORDS)


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], bool]:
    """Records of one JSONL file and whether its last line was torn (cut mid-write); read through the door
    (hallubench/confined.py): a link out of its folder, a FIFO or a file past the bound is refused."""
    data = _read(path)
    lines = data.split(b"\n")
    records, torn = [], False
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as err:  # not JSON, or not UTF-8 (a line cut inside a multi-byte character)
            if number == len(lines):  # no newline after it: the write never finished
                torn = True
                continue
            raise CorruptRecordError(f"{path}:{number}: not a JSON record ({err}); fix or delete that line") from err
        records.append(check_record(data, f"{path}:{number}"))
    return records, torn


# The first fields of every record line (SampleRecord's order, json.dumps' separators): enough to name its sample.
_TASK_AND_ID = re.compile(r'"task": ("(?:[^"\\]|\\.)*"), "id": ("(?:[^"\\]|\\.)*")')


def torn_record(path: Path) -> str:
    """What the torn last line of `path` recorded: its sample's task and id, or that they were cut off too."""
    tail = _read(path).rpartition(b"\n")[2]
    match = _TASK_AND_ID.search(tail.decode("utf-8", errors="replace"))
    if match is None:
        return f"{path}: an unreadable record (cut after {len(tail)} bytes, too early to tell its sample)"
    return f"{path}: the record of task {json.loads(match.group(1))!r} item {json.loads(match.group(2))!r}"


def _prefer(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """A success beats an error; otherwise the later record wins."""
    if old is not None and old.get("error") is None and new.get("error") is not None:
        return old
    return new


def read_store(run_dir: Path, kind: str = SAMPLES) -> StoreContents:
    """Every record of `kind` in the run folder (merged file first, then rank files), one per key."""
    contents = StoreContents()
    run_dir = Path(run_dir)
    door = Folder(run_dir)
    names = [f"{kind}.jsonl"] if door.is_file(f"{kind}.jsonl") else []
    paths = [run_dir / name for name in names + door.names(f"{kind}_rank*.jsonl")]
    for path in paths:
        records, torn = read_jsonl(path)
        if torn:
            contents.torn.append(str(path))
            contents.dropped.append(torn_record(path))
        for record in records:
            contents.records[record["key"]] = _prefer(contents.records.get(record["key"]), record)
    return contents


class SampleWriter:
    """Appends records to one process's own file; each record is on disk when `append` returns."""

    def __init__(self, path: Path):
        self.path = refuse_link(Path(path))  # a link here would take the records into a file elsewhere
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._drop_torn_tail()
        self._file = open_append(self.path)

    def _drop_torn_tail(self) -> None:
        # Only this process writes this file, so cutting a torn tail cannot race another writer.
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end == len(data):
            return
        with open_update(self.path) as handle:
            try:  # cut just before its newline: the record is whole, and the reader already counted it done
                json.loads(data[end:])
            except ValueError:  # cut anywhere else, inside a UTF-8 character too
                handle.truncate(end)
            else:
                handle.seek(0, os.SEEK_END)
                handle.write(b"\n")

    def append(self, record: dict[str, Any]) -> None:
        self.append_all([record])

    def append_all(self, records: list[dict[str, Any]]) -> None:
        """Append `records` (one line each) with one fsync: all are on disk when it returns."""
        try:
            self._file.write(b"".join(record_line(r) for r in records))
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as err:  # full or read-only disk: what is already on disk stays, a rerun resumes from it
            raise write_error(self.path, err, "the finished samples are kept (a cut last line is skipped when "
                                              "the run resumes)") from err

    def close(self) -> None:
        self._file.close()


def record_line(record: dict[str, Any]) -> bytes:
    """`record` as its JSON line, every credential in it masked (hallubench/redact.py)."""
    return redact(json.dumps(record, ensure_ascii=False)).encode() + b"\n"


def sort_key(record: dict[str, Any]) -> tuple[str, str, str]:
    return record["task"], str(record["id"]), record["key"]


def merge(run_dir: Path, kind: str = SAMPLES, replace: Mapping[str, dict[str, Any] | None] | None = None) -> StoreContents:
    """Write all records of `kind` into `<kind>.jsonl` sorted by (task, id) atomically, then drop its rank files;
    `replace` puts a record in place of the one of its key (None: drops it) in the same write."""
    run_dir = Path(run_dir)
    contents = read_store(run_dir, kind)
    for key, record in (replace or {}).items():
        if record is None:
            contents.records.pop(key, None)
        else:
            contents.records[key] = record

    lines = {key: record_line(record) for key, record in contents.records.items()}
    contents.records = {key: json.loads(line) for key, line in lines.items()}  # as the file holds them, masked

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as handle:
            for record in sorted(contents.records.values(), key=sort_key):
                handle.write(lines[record["key"]])

    write_atomically(run_dir / f"{kind}.jsonl", write)  # the rank files stay until the merged file is whole
    for path in run_dir.glob(f"{kind}_rank*.jsonl"):
        path.unlink()
    return contents
