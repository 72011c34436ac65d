"""On-disk judgment store shared across runs, targets and processes.

One SQLite file (WAL journal so readers never block the single writer, each commit fsynced, a busy timeout so concurrent
writers wait instead of failing, INSERT OR IGNORE so two processes that judged the same pair both
succeed and the first row wins). Rows are keyed by a SHA-256 of (judge id, prompt version, sentence,
evidence); judge id and prompt version are also stored in clear for auditing and pruning. Every SQLite or OS error is
named (`_named`): a full or read-only disk is a FolderWriteError naming the file (the judgments stored before are
kept; the same command run again makes only the missing calls), anything else a JudgmentCacheError.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from hallubench.errors import FolderWriteError, JudgmentCacheError
from hallubench.judges.base import Judgment

CACHE_ENV = "HALLUBENCH_CACHE"
# SQLite's answers that mean the disk refused: full (13), an I/O error (10), read-only (8), cannot open (14).
_DISK_ERRORS = {"SQLITE_FULL", "SQLITE_IOERR", "SQLITE_READONLY", "SQLITE_CANTOPEN"}
CACHE_FILE = "judgments.sqlite"
_BUSY_TIMEOUT_S = 120.0
_CHUNK = 500  # keys per SELECT, under SQLite's bound-parameter limit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    score REAL NOT NULL,
    undecided INTEGER NOT NULL,
    raw TEXT,
    judge_id TEXT NOT NULL,
    prompt_version TEXT NOT NULL
) WITHOUT ROWID
"""


def _initialise(conn: sqlite3.Connection) -> None:
    """Switch to WAL and create the table. SQLite answers "locked" at once, without waiting on the
    busy timeout, when processes race to do this on a new file, so retry until the timeout."""
    # Each commit reaches the disk before the next judge call starts: a judged call is paid for, and a kill -9 or a
    # power cut must not lose it (NORMAL would keep it through a kill but may lose the last commits on a power cut).
    conn.execute("PRAGMA synchronous = FULL")
    deadline = time.monotonic() + _BUSY_TIMEOUT_S
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(_SCHEMA)
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(random.uniform(0.01, 0.05))


def default_cache_path() -> Path:
    """`$HALLUBENCH_CACHE/judgments.sqlite` when the variable names a cache folder, else
    `~/.cache/hallubench/judgments.sqlite`."""
    folder = os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "hallubench"
    return Path(folder).expanduser() / CACHE_FILE


def judgment_key(sentence: str, evidence: str, judge_id: str, prompt_version: str) -> str:
    """Stable hash of one judgment's inputs (JSON-encoded, so no two field splits collide)."""
    blob = json.dumps([judge_id, prompt_version, sentence, evidence], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class JudgmentCache:
    """SQLite judgment store. Use one instance per thread; any number of processes may share the file
    (each process opens its own connection, also after a fork)."""

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else default_cache_path()
        if self.path.is_dir():
            raise JudgmentCacheError(f"judgment cache {self.path} is a folder; pass a file path such as {self.path / CACHE_FILE}")
        with self._named():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None

    @contextlib.contextmanager
    def _named(self) -> Iterator[None]:
        """SQLite's and the OS's errors as hallubench's, naming the cache file and what to do."""
        try:
            yield
        except (sqlite3.Error, OSError) as err:
            primary = "_".join((getattr(err, "sqlite_errorname", None) or "").split("_")[:2])  # SQLITE_IOERR_WRITE
            if isinstance(err, OSError) or primary in _DISK_ERRORS:
                raise FolderWriteError(
                    f"cannot write judgment cache {self.path}: {getattr(err, 'strerror', None) or err}. Free space on "
                    f"that disk (or point --cache or {CACHE_ENV} at another one) and run the same command again: the "
                    f"judgments stored before are kept, and only the missing calls are made") from err
            raise JudgmentCacheError(f"cannot use judgment cache {self.path}: {err} (delete it, or point --cache or "
                                     f"{CACHE_ENV} elsewhere)") from err

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            with self._named():
                conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
                _initialise(conn)
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def get_many(self, keys: Iterable[str]) -> dict[str, Judgment]:
        """The stored judgments among `keys` (missing keys are simply absent)."""
        keys = list(dict.fromkeys(keys))
        conn = self._connection()
        found: dict[str, Judgment] = {}
        with self._named():
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(f"SELECT key, score, undecided, raw FROM judgments WHERE key IN ({marks})", chunk)
                for key, score, undecided, raw in rows:
                    found[key] = Judgment(score=score, undecided=bool(undecided), raw=raw)
        return found

    def put_many(self, rows: Iterable[tuple[str, Judgment]], judge_id: str, prompt_version: str) -> int:
        """Store (key, judgment) rows in one transaction; keys already present are kept. Returns rows added."""
        values = [(key, j.score, int(j.undecided), j.raw, judge_id, prompt_version) for key, j in rows]
        if not values:
            return 0
        conn = self._connection()
        with self._named():
            before = conn.total_changes
            conn.execute("BEGIN IMMEDIATE")  # take the write lock up front: no deadlock-prone lock upgrade
            try:
                conn.executemany("INSERT OR IGNORE INTO judgments VALUES (?, ?, ?, ?, ?, ?)", values)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):  # SQLite may have rolled back itself (a full disk)
                        conn.execute("ROLLBACK")
                raise
            return conn.total_changes - before

    def __len__(self) -> int:
        conn = self._connection()
        with self._named():
            return conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]

    def close(self) -> None:
        """Close this process's connection (reopened on next use)."""
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None
