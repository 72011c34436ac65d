"""The ranking folder: leaderboard.md/.csv/.png, documents.csv, sentences.jsonl (each sentence's CrossCheck and
RefCheck scores and its mean judgment per evidence model) and crosscheck.json
(eta, scores, 95% intervals and sign tests, correlations, config, judge id, cache counters).

Written whole (harness/atomic.py `write_files`: a full disk leaves the previous ranking, a kill between the renames
a folder its readers refuse) and read whole by `reading_ranking`, the one way in for every reader and uploader."""
from __future__ import annotations

import csv
import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from hallubench.harness import folder_lock
from hallubench.confined import Folder
from hallubench.errors import NotWholeError
from hallubench.harness.atomic import MANIFEST, check_files, has_manifest, write_files
from hallubench.ranking.board import Ranking

FILES = ("leaderboard.md", "leaderboard.csv", "leaderboard.png", "documents.csv", "sentences.jsonl", "crosscheck.json")
COLUMNS = ("board", "rank", "model", "crosscheck", "ci_low", "ci_high", "p_vs_next", "selfcheck", "refcheck",
           "sentences", "documents")


def _csv(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> str:
    import io

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def document_rows(ranking: Ranking) -> list[dict[str, Any]]:
    rows = []
    for b in ranking.boards:
        for model, docs in b.results["document_scores"].items():
            ref = b.refcheck["document_scores"].get(model, {}) if b.refcheck else {}
            rows += [{"board": b.name, "model": model, "id": doc, "crosscheck": score, "refcheck": ref.get(doc)}
                     for doc, score in docs.items()]
    return rows


def sentence_lines(ranking: Ranking) -> list[str]:
    lines = []
    for b in ranking.boards:
        for model, docs in b.results["sentence_scores"].items():
            ref = b.refcheck["sentence_scores"].get(model, {}) if b.refcheck else {}
            by_evidence = b.results.get("evidence_scores", {}).get(model, {})
            for doc, scores in docs.items():
                texts = b.sentences[model][b.documents.index(doc)]
                for i, (text, score) in enumerate(zip(texts, scores)):
                    refs = ref.get(doc)
                    evidence = {source: values[i] for source, values in by_evidence.get(doc, {}).items()}
                    lines.append(json.dumps({"board": b.name, "model": model, "id": doc, "index": i, "sentence": text,
                                             "crosscheck": score, "refcheck": refs[i] if refs else None,
                                             "evidence": evidence}, ensure_ascii=False))
    return lines


def _text(text: str):
    return lambda tmp: tmp.write_text(text, encoding="utf-8")


def write_ranking(ranking: Ranking, folder: Path) -> Path:
    """Write every file of FILES into `folder`, all replacing the previous ranking together, and return the folder."""
    from hallubench.ranking.plot import plot_ranking

    folder = Path(folder)
    ranking.folder = folder
    title = "# CrossCheck leaderboard" + (" (mini data)" if ranking.mini_data else "")
    write_files(folder, {
        "leaderboard.md": _text(f"{title}\n\n{ranking.table()}"),
        "leaderboard.csv": _text(_csv(ranking.rows(), COLUMNS)),
        "documents.csv": _text(_csv(document_rows(ranking), ("board", "model", "id", "crosscheck", "refcheck"))),
        "sentences.jsonl": _text("".join(line + "\n" for line in sentence_lines(ranking))),
        "crosscheck.json": _text(json.dumps(ranking.to_dict(), indent=2, ensure_ascii=False) + "\n"),
        "leaderboard.png": lambda tmp: plot_ranking(ranking, tmp),
    }, "ranking")
    return folder


@contextmanager
def reading_ranking(folder: Path, purpose: str) -> Iterator[Path]:
    """Hold the ranking folder `folder` for `purpose` (one of folder_lock.READERS) while the caller reads or uploads
    it: FolderBusy while a `rank` writes it or after one was killed half-way, NotWholeError when it holds ranking files
    but no manifest, MixedOutputError when its files are not those of one ranking (each read through the door,
    hallubench/confined.py). The caller refuses a folder lacking the files it needs with its own message."""
    folder = Path(folder)
    remedy = "Make the ranking again with the `hallubench rank` (or `crosscheck`) that wrote it (judgments are cached)"
    with folder_lock.reading(folder, purpose, *FILES):
        if any(Folder(folder).is_file(name) for name in FILES) and not has_manifest(folder):
            raise NotWholeError(f"{folder} holds ranking files but no {MANIFEST} (the list of the files a `rank` "
                                f"writes, written last), so nothing says they are one ranking: it is not whole. "
                                f"{remedy}, then try again")
        check_files(folder, remedy)
        yield folder


def reads_ranking(purpose: str, argument: str = "folder") -> Callable:
    """Decorator: the function runs inside `reading_ranking` of the folder passed as its argument `argument`."""
    return folder_lock.inside(argument, lambda folder: reading_ranking(Path(folder), purpose))
