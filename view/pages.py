"""What each page shows, as plain data for its template: the leaderboards, a (board, item) page and a run page."""
from __future__ import annotations

from statistics import fmean
from typing import Any

from hallubench.view.sources import RankingFolder, RunFolder

# CrossCheck sentence scores (0: every evidence model's passages support the sentence, 1: none do) in four bands;
# the colours (blue to orange, told apart with colour-blindness too) come with a border style, so colour is not
# the only cue.
BINS = (
    {"cls": "cc-0", "low": 0.0, "high": 0.25, "label": "supported"},
    {"cls": "cc-1", "low": 0.25, "high": 0.5, "label": "weakly supported"},
    {"cls": "cc-2", "low": 0.5, "high": 0.75, "label": "weakly unsupported"},
    {"cls": "cc-3", "low": 0.75, "high": 1.0, "label": "unsupported"},
)


def score_bin(score: float | None) -> str:
    """The colour class of a sentence score (`cc-na` when it has none)."""
    if score is None:
        return "cc-na"
    return next((b["cls"] for b in BINS if score < b["high"]), BINS[-1]["cls"])


def _interval_bar(low: float, high: float, score: float, lo: float, hi: float) -> dict[str, float]:
    """Percent positions of an interval and its point on an axis from `lo` to `hi`."""
    span = (hi - lo) or 1.0
    return {"left": 100 * (low - lo) / span, "width": max(100 * (high - low) / span, 0.5),
            "point": 100 * (score - lo) / span}


def _board_rows(board: dict[str, Any], sentences: dict[str, dict[str, list]]) -> list[dict[str, Any]]:
    sure = board["uncertainty"]
    tests = {test["better"]: test for test in sure.get("adjacent_sign_tests", [])}
    bounds = [v for pair in sure["intervals"].values() for v in pair] + list(board["scores"].values())
    lo, hi = min(bounds), max(bounds)
    pad = (hi - lo) * 0.05 or 0.01
    rows = []
    for rank, model in enumerate(board["ranking"], start=1):
        low, high = sure["intervals"][model]
        score = board["scores"][model]
        per_item = sentences.get(model, {})
        rows.append({
            "rank": rank, "model": model, "crosscheck": score, "ci_low": low, "ci_high": high,
            "bar": _interval_bar(low, high, score, lo - pad, hi + pad), "sign_test": tests.get(model),
            "selfcheck": (board.get("selfcheck") or {}).get(model),
            "refcheck": (board.get("refcheck") or {}).get(model),
            "sentences": sum(map(len, per_item.values())), "documents": len(per_item),
        })
    return rows


def _eta_table(eta: dict[str, Any]) -> dict[str, Any] | None:
    """Target x evidence weights (task or uniform weighting); None for query weighting (a weight per item)."""
    if not eta or any(not isinstance(w, (int, float)) for weights in eta.values() for w in weights.values()):
        return None
    sources = sorted({source for weights in eta.values() for source in weights})
    return {"sources": sources, "rows": [(target, [weights.get(s) for s in sources]) for target, weights in eta.items()]}


def _correlations(name: str, board: dict[str, Any], sentences: dict[str, dict[str, list]],
                  reference) -> list[tuple[str, dict[str, Any]]]:
    """The correlations the ranking recorded, plus those with a `--reference` given to the viewer (document scores:
    the mean of each document's sentence scores, as the ranking computes them)."""
    out = list((board.get("correlations") or {}).items())
    if reference is not None:
        from hallubench.ranking.correlate import correlation

        systems, documents = reference.for_board(name)
        out.append(("viewer_reference_system_spearman", correlation(board["scores"], systems, "system")))
        if documents:
            scores = {model: {item: fmean(r["crosscheck"] for r in rows) for item, rows in per_item.items()}
                      for model, per_item in sentences.items()}
            out.append(("viewer_reference_document_pearson", correlation(scores, documents, "document")))
    return out


def leaderboard_context(ranking: RankingFolder, reference=None) -> dict[str, Any]:
    data = ranking.data
    boards = []
    for b, (name, board) in enumerate(data["boards"].items()):
        sentences = ranking.sentences.get(name, {})
        boards.append({
            "number": b, "name": name, "rows": _board_rows(board, sentences), "eta": _eta_table(board.get("eta") or {}),
            "method": board["uncertainty"].get("method", ""), "notes": board.get("notes") or [],
            "correlations": _correlations(name, board, sentences, reference), "documents": board.get("documents") or [],
        })
    mini = data.get("mini_data") or {}
    return {"title": "CrossCheck leaderboard", "boards": boards, "judge": data.get("judge") or {},
            "config": data.get("config") or {},
            "mini": "; ".join(f"{name} ({', '.join(tasks)})" for name, tasks in sorted(mini.items()))}


def _sentence(row: dict[str, Any]) -> dict[str, Any]:
    return {"text": row["sentence"], "score": row["crosscheck"], "refcheck": row.get("refcheck"),
            "evidence": row.get("evidence") or {}, "cls": score_bin(row["crosscheck"])}


def _evidence_data(models: list[dict[str, Any]]) -> dict[str, Any]:
    """What a sentence's hover and breakdown show, as compact JSON: the evidence sources once, then per model and
    sentence its CrossCheck and RefCheck scores and one judgment per source (4 decimals)."""
    sources = sorted({source for m in models for s in m["sentences"] for source in s["evidence"]})

    def rounded(value):
        return None if value is None else round(value, 4)

    return {"sources": sources, "models": {m["model"]: [
        [rounded(s["score"]), rounded(s["refcheck"]), [rounded(s["evidence"].get(source)) for source in sources]]
        for s in m["sentences"]] for m in models}}


def document_context(ranking: RankingFolder, name: str, number: int, items: dict[str, dict]):
    """One context per item of board `name` (in the board's order), with its models best first."""
    board = ranking.data["boards"][name]
    documents, per_model = [str(d) for d in board.get("documents") or []], ranking.sentences.get(name, {})
    order = {model: rank for rank, model in enumerate(board["ranking"], start=1)}
    for k, item in enumerate(documents):
        models = []
        for model in sorted(per_model, key=lambda m: order.get(m, len(order) + 1)):
            rows = per_model[model].get(item)
            if rows is None:
                continue
            sentences = [_sentence(row) for row in rows]
            models.append({"model": model, "rank": order.get(model), "sentences": sentences,
                           "score": fmean(s["score"] for s in sentences)})
        info = items.get(item) or {}
        yield {
            "title": f"{item} · {name}", "board": name, "board_number": number, "item": item, "number": k,
            "count": len(documents), "prev": k - 1 if k > 0 else None, "next": k + 1 if k + 1 < len(documents) else None,
            "models": models, "media": info.get("media") or [], "reference": info.get("reference"),
            "prompt": info.get("prompt"),
            "data": _evidence_data(models),
        }


def search_entries(ranking: RankingFolder, items: dict[str, dict[str, dict]]) -> list[dict[str, str]]:
    """What the search box looks through: every (board, item) with its page and human reference."""
    out = []
    for b, (name, board) in enumerate(ranking.data["boards"].items()):
        for k, item in enumerate(board.get("documents") or []):
            reference = (items.get(name, {}).get(str(item)) or {}).get("reference")
            out.append({"board": name, "id": str(item), "href": f"items/{b}/{k}.html",
                        "text": reference if isinstance(reference, str) else ""})
    return out


def _media_used(media: dict[str, Any] | None) -> list[str]:
    out = []
    for kind, seen in (media or {}).items():
        if not isinstance(seen, dict):
            continue
        text = f"{kind}: {seen.get('path')}"
        if seen.get("timestamps"):
            text += " · frames at " + ", ".join(f"{t:.2f}" for t in seen["timestamps"]) + " s"
        if seen.get("start") is not None and seen.get("end") is not None:
            text += f" · {seen['start']:.2f}–{seen['end']:.2f} s" + (" (muted)" if seen.get("muted") else "")
        if seen.get("blank"):
            text += " · blanked"
        out.append(text)
    return out


def _sample(record: dict[str, Any], verdict: dict[str, Any] | None) -> dict[str, Any]:
    """One sample's row; `verdict`: how its task's headline counted it (results.json `verdicts`), None where the
    metric gives none (a description scored across runs has no right answer to match). The record's `parsed` is
    the strict parser's reading, shown as such, never a mark."""
    error = record.get("error")
    outputs = record.get("outputs") or []
    parsed = record.get("parsed")
    unread = parsed is None if verdict is None else verdict["reading"] is None
    status = "error" if error is not None else "unreadable" if unread else "ok"
    counted = (verdict or {}).get("verdict")
    return {"task": record["task"], "id": str(record["id"]), "prompt": record.get("prompt") or "",
            "media": _media_used(record.get("media")), "output": outputs[0] if outputs else "",
            "error": error, "parsed": parsed, "reference": record.get("reference"), "status": status,
            "verdict": counted, "correct": {"correct": True, "wrong": False, "unreadable": False}.get(counted)}


def run_context(run: RunFolder) -> dict[str, Any]:
    """Per task its metrics with standard errors and counts (results.json), then every sample."""
    tasks = (run.results.get("tasks") or {}) if run.results else {}
    summaries = []
    for name, result in tasks.items():
        metrics = result.get("metrics") or {}
        summaries.append({
            "task": name, "counts": {k: result.get(k) for k in ("n_selected", "n_errors", "n_unparsed", "n_scored")},
            "scored_by": result.get("scored_by"),
            "metrics": [(m, v, metrics.get(f"{m}_stderr")) for m, v in metrics.items() if not m.endswith("_stderr")],
        })
    verdicts = {name: result.get("verdicts") or {} for name, result in tasks.items()}
    samples = [_sample(record, verdicts.get(record["task"], {}).get(str(record["id"]))) for record in run.records]
    model = (run.results.get("model") or {}).get("name") if run.results else None
    return {"title": f"run {run.folder.name}", "run": run.folder.name, "model": model, "summaries": summaries,
            "samples": samples, "tasks": sorted({s["task"] for s in samples}),
            "unfinished": not run.results,
            "unreadable": sum(s["status"] != "ok" for s in samples)}
