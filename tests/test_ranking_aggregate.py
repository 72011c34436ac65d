"""The ranking pipeline's aggregation entry point (score_records, what `rank` calls after judging) on the
authors' released WikiBio judgments: the same system scores as the metric reproduction (evaluate's
crosscheck module) and the published Table 1 correlations through the pipeline's correlation code."""
import os

import pytest

from hallubench.ranking.aggregate import score_records
from hallubench.ranking.correlate import correlation
from metric_doctests import METRICS
from hallubench.reproduce import wikibio as released

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# method -> (score_records options, published system-level Spearman, document-level Pearson vs RefCheck)
TABLE1 = {
    "selfcheck": ({"evidence_models": []}, 66.46, 74.06),
    "explicit": ({"evidence_models": released.EVIDENCE, "weighting": "uniform"}, 77.44, 82.28),
    "explicit_weighted": ({"evidence_models": released.EVIDENCE, "weighting": "task", "temperature": 0.1}, 82.32, 81.78),
}


@pytest.fixture(scope="module")
def wikibio(references):
    return released.records(references), released.refcheck_records(references), released.overall_rank_sum(references)


@pytest.fixture(scope="module")
def metric():
    import evaluate

    return evaluate.load(str(METRICS / "crosscheck"))


@pytest.mark.parametrize("method", list(TABLE1))
def test_pipeline_aggregation_matches_metric_reproduction(wikibio, metric, method):
    records, refcheck, rank_sum = wikibio
    options, system_rho, document_r = TABLE1[method]
    ours = score_records(records, **options)
    reproduced = metric.compute(**records, **options)
    assert sorted(ours["scores"]) == sorted(released.TARGETS)
    assert ours["scores"] == pytest.approx(reproduced["scores"], abs=1e-12)
    assert ours["ranking"] == reproduced["ranking"]
    assert ours["unweighted_evidence"] == []
    negated = {model: -score for model, score in ours["scores"].items()}  # higher rank sum = better
    system = correlation(negated, rank_sum, "system")
    assert system["n"] == 10 and round(system["value"] * 100, 2) == system_rho
    ref = score_records(refcheck, weighting="uniform")
    document = correlation(ours["document_scores"], ref["document_scores"], "document")
    assert document["n"] == 2380 and round(document["value"] * 100, 2) == document_r


def test_evidence_without_selfcheck_is_left_out_of_weighting_not_of_uniform():
    # "x" is evidence for a and b but has no own sentences, so eq. 4 has no SelfCheck score for it.
    records = {"systems": ["a", "a", "a", "b", "b", "b"], "documents": ["q"] * 6,
               "evidence": ["a", "b", "x", "a", "b", "x"],
               "judgments": [[0.0], [0.4], [1.0], [0.2], [0.6], [1.0]]}
    weighted = score_records(records, weighting="task")
    assert weighted["unweighted_evidence"] == ["x"]
    assert set(weighted["eta"]["a"]) == {"a", "b"} and weighted["eta"]["a"]["a"] > weighted["eta"]["a"]["b"]
    uniform = score_records(records, weighting="uniform")
    assert uniform["unweighted_evidence"] == [] and uniform["scores"]["a"] == pytest.approx((0.0 + 0.4 + 1.0) / 3)


def test_audio_visual_min_through_evidence_modality():
    records = {"systems": ["a"] * 4, "documents": ["q"] * 4, "evidence": ["v1", "v2", "s1", "s2"],
               "judgments": [[0.2, 0.9], [0.4, 0.7], [0.8, 0.1], [0.6, 0.3]]}
    modality = {"v1": "visual", "v2": "visual", "s1": "audio", "s2": "audio"}
    results = score_records(records, weighting="uniform", evidence_modality=modality)
    # sentence 1: min(visual 0.3, audio 0.7); sentence 2: min(visual 0.8, audio 0.2)
    assert results["sentence_scores"]["a"]["q"] == pytest.approx([0.3, 0.2])


def test_num_samples_column_pools_samples_as_eq2():
    records = {"systems": ["a", "a"], "documents": ["q", "q"], "evidence": ["v", "w"], "judgments": [[1.0], [0.0]]}
    assert score_records(records, weighting="uniform")["scores"]["a"] == pytest.approx(0.5)
    pooled = score_records({**records, "num_samples": [1, 3]}, weighting="uniform")
    assert pooled["scores"]["a"] == pytest.approx(0.25)
