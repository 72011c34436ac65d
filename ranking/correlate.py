"""Agreement with a reference: Spearman between system scores, Pearson between document scores
(the CrossCheckGPT paper's system- and document-level correlations), via the metric's rank_correlation."""
from __future__ import annotations

import csv
import io
import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from hallubench.config import read_text
from hallubench.errors import ConfigError
from hallubench.redact import shown
from hallubench.metrics.crosscheck.crosscheck import rank_correlation


@dataclass
class Reference:
    """Reference scores oriented like CrossCheck's (lower = less hallucination): per model, optionally per
    task (key "" = any task) and per (model, document id)."""

    systems: dict[str, dict[str, float]] = field(default_factory=dict)    # task -> model -> score
    documents: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # task -> model -> id -> score
    source: str = ""

    def for_board(self, board: str) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
        return (self.systems.get(board) or self.systems.get("", {}),
                self.documents.get(board) or self.documents.get("", {}))


def _number(value: Any, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise ConfigError(f"{where}: score {shown(value)} is not a finite number")
    return number


def load_reference(path: Path, higher_is_better: bool = False) -> Reference:
    """A reference from CSV (columns model, score; optional task, id: per-document scores) or JSON
    ({model: score}, or a list of model names ranked best first).

    `higher_is_better` negates the scores so they point the way CrossCheck's do."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"--reference {path}: no such file")
    sign = -1.0 if higher_is_better else 1.0
    ref = Reference(source=str(path))
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(read_text(path, "--reference"))
        except json.JSONDecodeError as err:
            raise ConfigError(f"--reference {path}: not JSON ({err})") from None
        if isinstance(data, list) and all(isinstance(m, str) for m in data):
            ref.systems[""] = {m: float(i) for i, m in enumerate(data)}  # a ranking: position, best first
        elif isinstance(data, dict):
            ref.systems[""] = {str(m): sign * _number(v, f"{path} key {m!r}") for m, v in data.items()}
        else:
            raise ConfigError(f"--reference {path}: expected {{model: score}} or a list of model names, best first")
        return ref
    rows = list(csv.DictReader(io.StringIO(read_text(path, "--reference"), newline="")))
    if not rows or not {"model", "score"} <= set(rows[0]):
        raise ConfigError(f"--reference {path}: expected a CSV with a header holding model and score "
                          "(optional task and id columns)")
    for line, row in enumerate(rows, start=2):
        task, score = row.get("task") or "", sign * _number(row["score"], f"{path}:{line}")
        if row.get("id"):
            ref.documents.setdefault(task, {}).setdefault(row["model"], {})[str(row["id"])] = score
        else:
            ref.systems.setdefault(task, {})[row["model"]] = score
    for task, models in ref.documents.items():  # per-document rows also give system scores (their mean)
        for model, docs in models.items():
            ref.systems.setdefault(task, {}).setdefault(model, sum(docs.values()) / len(docs))
    return ref


def correlation(scores: dict, reference: dict, level: str) -> dict[str, Any]:
    """{"value": r or None, "n": pairs, "note": why None} over the keys both sides have."""
    if level == "system":
        common = sorted(set(scores) & set(reference))
        x, y = {k: scores[k] for k in common}, {k: reference[k] for k in common}
    else:
        x = {m: {d: v for d, v in docs.items() if d in reference.get(m, {})} for m, docs in scores.items()}
        x = {m: docs for m, docs in x.items() if docs}
        y = {m: {d: reference[m][d] for d in docs} for m, docs in x.items()}
    n = sum(len(v) for v in x.values()) if level == "document" else len(x)
    if n < 2:
        return {"value": None, "n": n, "note": "fewer than two paired values"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant input: scipy warns and returns nan, reported below
        value = rank_correlation(x, y, level=level)
    if math.isnan(value):
        return {"value": None, "n": n, "note": "a side is constant"}
    return {"value": value, "n": n, "note": None}
