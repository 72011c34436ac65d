"""What each page shows, as plain data for its template: the leaderboards, a (board, item) page and a run page."""
from __future__ import annotations

from math import ceil, floor
from statistics import fmean
from typing import Any

from hallubench.view.names import SiteModel
from hallubench.view.sources import RankingFolder, RunFolder
from hallubench.view.status import RunStatus, group_rows, ranking_banners

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


def _scale(boards: dict[str, Any]) -> tuple[float, float]:
    """One axis for every board's interval bars: the span of all intervals and scores, padded, out to 0.05 steps."""
    bounds = [v for board in boards.values() for pair in board["uncertainty"]["intervals"].values() for v in pair]
    bounds += [v for board in boards.values() for v in board["scores"].values()]
    lo, hi = (min(bounds), max(bounds)) if bounds else (0.0, 1.0)
    low = max(0.0, floor(lo * 20) / 20)
    return low, max(ceil(hi * 20) / 20, low + 0.05)


def axis_ticks(lo: float, hi: float, count: int = 4) -> list[dict[str, float]]:
    """`count` + 1 labelled ticks from lo to hi, as percent positions."""
    return [{"value": lo + (hi - lo) * k / count, "left": 100 * k / count} for k in range(count + 1)]


def _board_rows(board: dict[str, Any], sentences: dict[str, dict[str, list]], scale: tuple[float, float],
                links: dict[str, dict[str, str | None]]) -> list[dict[str, Any]]:
    sure = board["uncertainty"]
    tests = {test["better"]: test for test in sure.get("adjacent_sign_tests", [])}
    rows = []
    for rank, model in enumerate(board["ranking"], start=1):
        low, high = sure["intervals"][model]
        score = board["scores"][model]
        per_item = sentences.get(model, {})
        rows.append({
            "rank": rank, "model": model, "crosscheck": score, "ci_low": low, "ci_high": high,
            "bar": _interval_bar(low, high, score, *scale), "sign_test": tests.get(model),
            "selfcheck": (board.get("selfcheck") or {}).get(model),
            "refcheck": (board.get("refcheck") or {}).get(model),
            "sentences": sum(map(len, per_item.values())), "documents": len(per_item),
            "href": (links.get(model) or {}).get("href"), "hub_id": (links.get(model) or {}).get("hub_id"),
            "full": (links.get(model) or {}).get("full") or model,
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


def leaderboard_context(ranking: RankingFolder, reference=None,
                        links: dict[str, dict[str, str | None]] | None = None) -> dict[str, Any]:
    """The CrossCheck boards; `links`: model -> its run page (`href`) and Hub id (`hub_id`), where known."""
    data = ranking.data
    scale = _scale(data["boards"])
    boards = []
    for b, (name, board) in enumerate(data["boards"].items()):
        sentences = ranking.sentences.get(name, {})
        boards.append({
            "number": b, "name": name, "rows": _board_rows(board, sentences, scale, links or {}),
            "eta": _eta_table(board.get("eta") or {}),
            "method": board["uncertainty"].get("method", ""), "notes": board.get("notes") or [],
            "correlations": _correlations(name, board, sentences, reference), "documents": board.get("documents") or [],
        })
    return {"boards": boards, "axis": axis_ticks(*scale), "judge": data.get("judge") or {},
            "config": data.get("config") or {}, "banners": ranking_banners(data)}


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
            "prompt": info.get("prompt"), "withheld": info.get("withheld"), "banners": ranking_banners(ranking.data),
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


def _sample(record: dict[str, Any], verdicts: dict[str, Any] | None, unverified: bool) -> dict[str, Any]:
    """One sample's row. `verdicts`: its task's per-sample verdicts from results.json (harness/scoring.py), None
    where the results carry none (no mark is shown then: the strict parser's reading is no verdict); `unverified`:
    they fail `verify`, so each is shown as what results.json claims."""
    error = record.get("error")
    outputs = record.get("outputs") or []
    judged = (verdicts or {}).get(str(record["id"]))
    judged = judged if isinstance(judged, dict) else {}
    verdict = judged.get("verdict")
    # unreadable as the headline counted it where results.json says so, else as the strict parser read it
    unread = verdict == "unreadable" if verdict else record.get("parsed") is None
    status = "error" if error is not None else "unreadable" if unread else "ok"
    return {"task": record["task"], "id": str(record["id"]), "prompt": record.get("prompt") or "",
            "media": _media_used(record.get("media")), "output": outputs[0] if outputs else "",
            "error": error, "parsed": record.get("parsed"), "reference": record.get("reference"), "status": status,
            "verdict": verdict, "reading": judged.get("reading"), "unverified": unverified}


def table_of(value: Any) -> dict[str, Any] | None:
    """A nested score (per-class results: label -> {score: value}) as a table: its rows and columns; None for any
    other shape (shown as JSON)."""
    if not isinstance(value, dict) or not value or not all(isinstance(v, dict) for v in value.values()):
        return None
    columns = list(dict.fromkeys(k for v in value.values() for k in v))
    return {"columns": columns, "rows": [(label, [scores.get(c) for c in columns]) for label, scores in value.items()]}


def run_context(run: RunFolder, state: RunStatus, model: SiteModel) -> dict[str, Any]:
    """The run's status banners, per task the terminal's table (whole task and each group, counts, unreadable share
    with its flag, metrics with standard errors, "–" and why where nothing was scored) and nested scores as tables,
    then every sample with its verdict (marked unverified where results.json fails `verify`)."""
    raw_tasks = (run.results.get("tasks") or {}) if run.results else {}
    summaries = []
    for name, result in sorted(state.results.tasks.items() if state.results else ()):
        summaries.append({
            "task": name, "metric": result.metric, "scored_by": result.scored_by, "groups": group_rows(name, result),
            "nested": [(m, table_of(v), v) for m, v in result.metrics.items() if not isinstance(v, (int, float, str))
                       and v is not None],
            "marks": state.marks(name)})
    verdicts = {name: task.get("verdicts") for name, task in raw_tasks.items() if "verdicts" in task}
    samples = [_sample(record, verdicts.get(record["task"]), record["task"] in state.differing)
               for record in run.records]
    tasks = sorted({s["task"] for s in samples})
    return {"title": f"{model.name} · {', '.join(tasks) or 'no samples'}", "label": model.name, "full": model.full,
            "run": run.folder.name, "folder": str(run.folder), "model": model.recorded, "hub_id": model.hub_id,
            "banners": state.banners, "summaries": summaries, "samples": samples, "tasks": tasks,
            "has_verdicts": any(verdicts.get(t) for t in tasks),
            "flagged": sum(s["status"] != "ok" or s["verdict"] == "wrong" for s in samples)}
