"""How sure a CrossCheck board is: a bootstrap 95% interval per system and a sign test between neighbours.

The interval resamples documents (queries) with replacement, the same resample for every system, and
recomputes each system score as the metric does (all sentences of the drawn documents pooled); the
sentence scores themselves, eta included, stay as judged on the full board. The paper compares systems
with sign tests (Tables 2 and 14); here each pair of adjacent systems is compared over the documents
both answered: a document counts for the system whose passage scores lower, ties are dropped, and the
two-sided binomial test (scipy) gives p.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

RESAMPLES = 1000
SEED = 0
LEVEL = 0.95
METHOD = (f"bootstrap {LEVEL:.0%} percentile interval over {RESAMPLES} resamples of the documents (seed {SEED}); "
          "sign test over the documents between adjacent systems (two-sided, ties dropped)")


def system_intervals(sentence_scores: Mapping[str, Mapping[str, Sequence[float]]]) -> dict[str, tuple[float, float]]:
    """Per system, the (low, high) bootstrap interval of its pooled sentence score."""
    documents = sorted({doc for docs in sentence_scores.values() for doc in docs})
    rng = np.random.default_rng(SEED)
    draws = rng.integers(0, len(documents), size=(RESAMPLES, len(documents)))
    tail = (1 - LEVEL) / 2 * 100
    out = {}
    for system, docs in sentence_scores.items():
        sums = np.array([float(np.sum(docs[d])) if d in docs else 0.0 for d in documents])
        counts = np.array([len(docs[d]) if d in docs else 0 for d in documents])
        drawn = counts[draws].sum(axis=1)
        # A resample holding none of the system's documents has no score; it is left out.
        scores = sums[draws].sum(axis=1)[drawn > 0] / drawn[drawn > 0]
        low, high = np.percentile(scores, [tail, 100 - tail])
        out[system] = (float(low), float(high))
    return out


def sign_test(better: Mapping[str, float], worse: Mapping[str, float]) -> dict[str, Any]:
    """Sign test of two systems' document scores (lower = less hallucination) over their shared documents:
    `wins` where `better` scores lower, `losses` where higher, `ties`, and the two-sided p."""
    shared = sorted(set(better) & set(worse))
    wins = sum(better[d] < worse[d] for d in shared)
    losses = sum(better[d] > worse[d] for d in shared)
    from scipy.stats import binomtest  # scipy.stats takes ~0.7 s to import; keep `rank --help` instant

    p = binomtest(wins, wins + losses).pvalue if wins + losses else 1.0
    return {"wins": wins, "losses": losses, "ties": len(shared) - wins - losses, "p": float(p)}


def board_uncertainty(results: Mapping[str, Any]) -> dict[str, Any]:
    """Intervals per system and sign tests between adjacent systems of one board's aggregated `results`."""
    ranking, docs = results["ranking"], results["document_scores"]
    tests = [{"better": a, "worse": b, **sign_test(docs[a], docs[b])} for a, b in zip(ranking, ranking[1:])]
    return {"method": METHOD, "intervals": system_intervals(results["sentence_scores"]), "adjacent_sign_tests": tests}
