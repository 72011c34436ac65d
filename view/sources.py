"""Everything the viewer reads: a ranking folder (crosscheck.json, sentences.jsonl) and run folders (results.json and
samples through the harness's store reader). The one place that opens those folders, so a check that a run folder
is finished and not being written belongs here."""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hallubench import confined
from hallubench.confined import Folder
from hallubench.errors import ConfigError, NotARankingFolderError, OutsideFolderError, RunFolderNotFoundError
from hallubench.harness import run_state, store
from hallubench.harness.data import COMPLETE, MINI, dataset_dir, default_data_dir
from hallubench.ranking.report import FILES, reads_ranking

CROSSCHECK_JSON, SENTENCES = "crosscheck.json", "sentences.jsonl"
RESULTS = "results.json"


@dataclass
class RankingFolder:
    """A ranking folder as written by ranking/report.py: crosscheck.json and, per (board, model, item), the
    sentences in order with their scores (`sentences[board][model][item]` -> sentence rows)."""

    folder: Path
    data: dict[str, Any]
    sentences: dict[str, dict[str, dict[str, list[dict[str, Any]]]]]


@dataclass
class RunFolder:
    """A run folder: its results.json (empty when the run has none yet) and every sample record, errors included."""

    folder: Path
    results: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)

    def by_task(self) -> dict[str, dict[str, dict[str, Any]]]:
        """task -> item id -> record (a successful record wins over an error)."""
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for record in self.records:
            held = out.setdefault(record["task"], {}).get(str(record["id"]))
            if held is None or held.get("error") is not None:
                out[record["task"]][str(record["id"])] = record
        return out


@reads_ranking("view")  # the one lock-taking reader of a ranking folder (ranking/report.py)
def read_ranking(folder: Path) -> RankingFolder:
    folder, door = Path(folder), Folder(folder)
    missing = [name for name in (CROSSCHECK_JSON, SENTENCES) if not door.is_file(name)]
    if missing:
        raise NotARankingFolderError(f"{folder} is not a ranking folder (no {', '.join(missing)}; a ranking folder holds "
                                     f"{', '.join(FILES)}); make it with `hallubench rank` or `hallubench crosscheck`")
    raw = door.read_bytes(CROSSCHECK_JSON)
    try:
        data = json.loads(raw)
        boards = data["boards"]
    except (ValueError, KeyError, TypeError) as err:
        raise NotARankingFolderError(f"{folder / CROSSCHECK_JSON} cannot be read ({err!r}); make the ranking again "
                                     "with `hallubench rank`") from None
    sentences: dict[str, dict[str, dict[str, list[dict[str, Any]]]]] = {name: {} for name in boards}
    raw = door.read_bytes(SENTENCES, confined.RECORDS)
    try:
        lines = raw.decode("utf-8").split("\n")  # not splitlines: U+2028 is text in a sentence
    except ValueError as err:
        raise NotARankingFolderError(f"{folder / SENTENCES} is not UTF-8 text ({err}); make the ranking again with "
                                     "`hallubench rank`") from None
    for number, line in enumerate(lines, start=1):
        if not line:
            continue
        try:
            row = json.loads(line)
            per_item = sentences.setdefault(row["board"], {}).setdefault(row["model"], {})
            per_item.setdefault(str(row["id"]), []).append(row)
        except (ValueError, KeyError, TypeError) as err:
            raise NotARankingFolderError(f"{folder / SENTENCES}:{number}: not a sentence row ({err!r}); make the "
                                         "ranking again with `hallubench rank`") from None
    for per_model in sentences.values():
        for per_item in per_model.values():
            for rows in per_item.values():
                rows.sort(key=lambda row: row.get("index", 0))
    return RankingFolder(folder, data, sentences)


def read_run_folder(folder: Path) -> RunFolder:
    """The run folder's results.json (if written) and every record of its sample store, read through the one
    check every reader uses (harness/run_state.py): a folder being written, interrupted or mixing models or
    settings is refused, naming the command that fixes it."""
    folder = Path(folder)
    if not Folder(folder).is_file(store.MERGED) and not Folder(folder).names(store.RANK_GLOB):
        raise RunFolderNotFoundError(f"{folder} holds no samples.jsonl: not a run folder (make one with `hallubench run "
                                     f"--output-dir {folder} ...`)")
    with run_state.read_run_folder(folder, "view") as run:
        records = sorted(run.records.values(), key=store.sort_key)
        return RunFolder(folder, run.results or {}, records)


def task_dataset_folder(run: RunFolder, task_name: str, data_dir: Path | None = None) -> Path | None:
    """The local dataset folder a run's task read its media from: in the folder the user gave (`data_dir`, view's
    --data-dir), or in hallubench's own mini benchmarks for a run on them; None when it is not on this machine (a Hub
    id, a moved folder, the mini benchmarks not built here). The --data-dir a run recorded is data: a folder there
    that the user did not give is never read, an UnnamedFolderError saying which argument gives it."""
    from hallubench.benchmarks import get_task

    recorded = ((run.results.get("run") or {}).get("options") or {}).get("data_dir")
    given = data_dir or (MINI if recorded == MINI else None)
    if given is None:
        confined.given_folder(recorded, (), f"{run.folder / RESULTS} (the datasets its run read)",
                              f"To show its media, give that folder: add `--data-dir {shlex.quote(str(recorded))}`")
        return None
    root = Path(str(given)).expanduser()
    if str(given) == MINI:  # built on first use into the cache; the viewer reads it only if already there
        if not (default_data_dir() / COMPLETE).is_file():
            return None
        root = default_data_dir() / "datasets"
    if not root.is_dir():
        return None
    try:
        return dataset_dir(root, get_task(task_name))
    except (ConfigError, KeyError):
        return None


def media_file(folder: Path | None, relative: object) -> str | None:
    """The name inside the dataset `folder` of the regular file `relative` names, or None when there is none or it
    would lie outside it (what a record says is data, never a path out of its dataset: the door's rule row media keep,
    a Hub snapshot's links into its blobs included)."""
    if folder is None or not isinstance(relative, str) or not relative:
        return None
    try:
        return relative if Folder(folder, hub_snapshot=True).is_file(relative) else None
    except (OutsideFolderError, OSError):  # out of the folder, a FIFO, a link loop
        return None
