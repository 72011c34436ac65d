"""Texts -> the crosscheck metric's judgment input: per target, per query, per evidence model, one
score in [0, 1] per sentence of the target's response (mean over that model's evidence passages)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import islice

from hallubench.judges.base import Judge
from hallubench.judges.sentences import split_sentences

Judgments = dict[str, list[dict[str, list[float]]]]


def judge_responses(
    targets: Mapping[str, Sequence[str]],
    evidence: Mapping[str, Sequence[Sequence[str]]],
    judge: Judge | Mapping[str, Judge],
    language: str = "en",
    sentence_splitter: str = "auto",
) -> Judgments:
    """Judge every sentence of every target response against every evidence passage of the same query.

    targets: model -> one response per query. evidence: model -> per query, that model's sampled passages.
    judge: one judge for all evidence models, or one per evidence model (CrossCheck-implicit, where each
    evidence model is itself the judge and its "passages" are the query's subject).
    Returns {target: [ {evidence_model: [score per sentence]} per query ]}; a response with no sentences
    gives empty lists.
    """
    n_queries = _check(targets, evidence)
    judges = _judges_by_model(judge, evidence)
    sentences = {t: [split_sentences(r, language, sentence_splitter) for r in rs] for t, rs in targets.items()}
    out: Judgments = {t: [{} for _ in range(n_queries)] for t in targets}
    for model, passages in evidence.items():
        pairs = [(s, p) for docs in sentences.values() for q, sents in enumerate(docs) for s in sents for p in passages[q]]
        scores = iter(judges[model].score_batch(pairs))
        for target, docs in sentences.items():
            for q, sents in enumerate(docs):
                n = len(passages[q])
                out[target][q][model] = [sum(islice(scores, n)) / n for _ in sents]
    return out


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
