"""The ranking folder: leaderboard.md/.csv/.png, documents.csv, sentences.jsonl (each sentence's CrossCheck and
RefCheck scores and its mean judgment per evidence model) and crosscheck.json
(eta, scores, 95% intervals and sign tests, correlations, config, judge id, cache counters)."""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from hallubench.harness.atomic import write_atomically
from hallubench.ranking.board import Ranking

FILES = ("leaderboard.md", "leaderboard.csv", "leaderboard.png", "documents.csv", "sentences.jsonl", "crosscheck.json")
COLUMNS = ("board", "rank", "model", "crosscheck", "ci_low", "ci_high", "p_vs_next", "selfcheck", "refcheck",
           "sentences", "documents")


def _atomic_write(path: Path, text: str) -> None:
    write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))  # FolderWriteError on a full disk


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


def write_ranking(ranking: Ranking, folder: Path) -> Path:
    """Write every file of FILES into `folder` (each atomically) and return the folder."""
    from hallubench.ranking.plot import plot_ranking

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ranking.folder = folder
    title = "# CrossCheck leaderboard" + (" (mini data)" if ranking.mini_data else "")
    _atomic_write(folder / "leaderboard.md", f"{title}\n\n{ranking.table()}")
    _atomic_write(folder / "leaderboard.csv", _csv(ranking.rows(), COLUMNS))
    _atomic_write(folder / "documents.csv", _csv(document_rows(ranking), ("board", "model", "id", "crosscheck", "refcheck")))
    _atomic_write(folder / "sentences.jsonl", "".join(line + "\n" for line in sentence_lines(ranking)))
    _atomic_write(folder / "crosscheck.json", json.dumps(ranking.to_dict(), indent=2, ensure_ascii=False) + "\n")
    write_atomically(folder / "leaderboard.png", lambda tmp: plot_ranking(ranking, tmp))
    return folder
