"""Texts -> the crosscheck metric's "judgments" input: one record per (target system, query, evidence
model) holding one score in [0, 1] per sentence of the target's response, the mean over that evidence
model's passages for the query (metrics/crosscheck, config "judgments")."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice

from hallubench.judges.base import Judge
from hallubench.judges.sentences import split_sentences


@dataclass
class CrossCheckRecords:
    """Parallel columns as `crosscheck.compute` takes them, plus the (system, document) pairs whose
    response had no sentence to judge (they get no records: the metric needs at least one sentence)."""

    systems: list[str] = field(default_factory=list)
    documents: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    judgments: list[list[float]] = field(default_factory=list)
    num_samples: list[int] = field(default_factory=list)
    empty: list[tuple[str, str]] = field(default_factory=list)

    def compute_kwargs(self) -> dict[str, list]:
        """`crosscheck.compute(**records.compute_kwargs(), weighting=...)`; `num_samples` (the passages each
        record averages) makes the metric pool samples as eq. 2 does when evidence models drew different counts."""
        return {"systems": self.systems, "documents": self.documents, "evidence": self.evidence,
                "judgments": self.judgments, "num_samples": self.num_samples}


def judge_responses(
    targets: Mapping[str, Sequence[str]],
    evidence: Mapping[str, Sequence[Sequence[str]]],
    judge: Judge | Mapping[str, Judge],
    documents: Sequence[str] | None = None,
    language: str = "en",
    sentence_splitter: str = "auto",
) -> CrossCheckRecords:
    """Judge every sentence of every target response against every evidence passage of the same query.

    targets: system -> one response per query. evidence: evidence model -> per query, its sampled passages.
    judge: one judge for all evidence models, or one per evidence model (CrossCheck-implicit, where each
    evidence model is itself the judge and its one "passage" per query is the query's subject).
    documents: one id per query (default "0", "1", ...).
    Records come ordered by system, then query, then evidence model.
    """
    n_queries = _check(targets, evidence)
    documents = [str(q) for q in range(n_queries)] if documents is None else [str(d) for d in documents]
    if len(documents) != n_queries or len(set(documents)) != n_queries:
        raise ValueError(f"documents must be {n_queries} distinct ids, one per query; got {documents!r:.200}")
    judges = _judges_by_model(judge, evidence)
    sentences = {t: [split_sentences(r, language, sentence_splitter) for r in rs] for t, rs in targets.items()}
    pairs = {model: [(s, p) for docs in sentences.values() for q, sents in enumerate(docs) for s in sents
                     for p in passages[q]] for model, passages in evidence.items()}
    scored = _score(pairs, judges)
    means: dict[tuple[str, int, str], list[float]] = {}
    for model, passages in evidence.items():
        scores = iter(scored[model])
        for target, docs in sentences.items():
            for q, sents in enumerate(docs):
                n = len(passages[q])
                means[target, q, model] = [sum(islice(scores, n)) / n for _ in sents]
    records = CrossCheckRecords()
    for target, docs in sentences.items():
        for q, sents in enumerate(docs):
            if not sents:
                records.empty.append((target, documents[q]))
                continue
            for model in evidence:
                records.systems.append(target)
                records.documents.append(documents[q])
                records.evidence.append(model)
                records.judgments.append(means[target, q, model])
                records.num_samples.append(len(evidence[model][q]))
    return records


def _score(pairs: dict[str, list[tuple[str, str]]], judges: dict[str, Judge]) -> dict[str, list[float]]:
    """Each evidence model's pair scores, from one `score_batch` call per distinct judge (one progress bar
    and one pass over the texts for all the evidence models it judges)."""
    groups: dict[int, list[str]] = {}
    for model in pairs:
        groups.setdefault(id(judges[model]), []).append(model)
    scored: dict[str, list[float]] = {}
    for models in groups.values():
        scores = iter(judges[models[0]].score_batch([pair for model in models for pair in pairs[model]]))
        for model in models:
            scored[model] = list(islice(scores, len(pairs[model])))
    return scored


def _check(targets: Mapping[str, Sequence[str]], evidence: Mapping[str, Sequence[Sequence[str]]]) -> int:
    if not targets or not evidence:
        raise ValueError("judge_responses needs at least one target model and one evidence model")
    lengths = {f"targets[{m!r}]": len(v) for m, v in targets.items()} | {f"evidence[{m!r}]": len(v) for m, v in evidence.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"every model needs one entry per query; got lengths {lengths}")
    for model, responses in targets.items():
        for q, response in enumerate(responses):
            if not isinstance(response, str):
                raise TypeError(f"targets[{model!r}][{q}] must be a str response, got {type(response).__name__}")
    for model, per_query in evidence.items():
        for q, passages in enumerate(per_query):
            if isinstance(passages, str) or not passages or not all(isinstance(p, str) for p in passages):
                raise ValueError(f"evidence[{model!r}][{q}] must be a non-empty list of passage strings, got {passages!r:.80}")
    return next(iter(lengths.values()))


def _judges_by_model(judge: Judge | Mapping[str, Judge], evidence: Mapping) -> dict[str, Judge]:
    if not isinstance(judge, Mapping):
        return {model: judge for model in evidence}
    missing = [model for model in evidence if model not in judge]
    if missing:
        raise ValueError(f"no judge for evidence models {missing}; judges given for {list(judge)}")
    return dict(judge)
