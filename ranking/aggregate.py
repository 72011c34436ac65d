"""The one aggregation entry point: judgment records -> CrossCheck scores, through the crosscheck metric
module's own `build_table` + `aggregate` (what `evaluate.load("crosscheck").compute` runs)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

WEIGHTINGS = ("uniform", "task", "query")


def score_records(records: Mapping[str, Sequence], weighting: str = "task", temperature: float = 0.1,
                  evidence_models: Sequence[str] | None = None, include_self: bool = True,
                  evidence_modality: Mapping[str, str] | None = None,
                  selfcheck_scores: Mapping[str, float] | None = None) -> dict[str, Any]:
    """CrossCheck results (scores, ranking, eta, selfcheck_scores, document_scores, sentence_scores, and
    evidence_scores: each sentence's mean judgment against each evidence model's passages, what the viewer shows) of
    records {systems, documents, evidence, judgments} (e.g. `CrossCheckRecords.compute_kwargs()`), with an optional
    `num_samples` column (each record's sample count, N_j of eq. 2; equal counts without it).

    With "task"/"query" weighting, evidence models that have no SelfCheck score (no own sentences, and none
    in `selfcheck_scores`) cannot be weighted; they are left out and listed under "unweighted_evidence".
    """
    # The metric module imports evaluate (seconds); importing it here keeps `hallubench rank --help` instant.
    from hallubench.metrics.crosscheck.crosscheck import aggregate, build_counts, build_table

    columns = [records[name] for name in ("systems", "documents", "evidence")]
    table = build_table(*columns, records["judgments"])
    counts = build_counts(*columns, records["num_samples"]) if records.get("num_samples") is not None else None
    unweighted: list[str] = []
    if weighting != "uniform":
        sources = {s for passages in table.values() for available in passages.values() for s in available}
        wanted = sources if evidence_models is None else sources & set(evidence_models)
        own = {system for system, passages in table.items() if any(system in a for a in passages.values())}
        unweighted = sorted(wanted - own - set(selfcheck_scores or {}))
        if unweighted:
            evidence_models = sorted(wanted - set(unweighted))
    results = aggregate(table, weighting=weighting, temperature=temperature, evidence_models=evidence_models,
                        include_self=include_self, evidence_modality=evidence_modality,
                        selfcheck_scores=selfcheck_scores, num_samples=counts)
    results["unweighted_evidence"] = unweighted
    results["evidence_scores"] = {system: {document: {source: values.tolist() for source, values in available.items()}
                                           for document, available in passages.items()}
                                  for system, passages in table.items()}
    return results
