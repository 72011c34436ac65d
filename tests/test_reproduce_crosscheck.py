"""CrossCheckGPT Tables 1, 3 and 4 (Sun, Manakul et al., 2024) from the authors' released judgments and leaderboard.

Table 1 (WikiBio, 10 text LLMs) re-aggregates the released per-sentence judgments through the crosscheck module.
Tables 3 and 4 correlate the published system scores with rank_correlation.
"""
import csv
import os

import pytest
from scipy.stats import rankdata

from hallubench.metrics.crosscheck.crosscheck import rank_correlation
from metric_doctests import METRICS
from wikibio_support import EVIDENCE, TARGETS, overall_rank_sum, refcheck_records, wikibio_records

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def table1(shared_data):
    import evaluate

    crosscheck = evaluate.load(str(METRICS / "crosscheck"))
    records = wikibio_records(shared_data)
    runs = {
        "selfcheck": crosscheck.compute(**records, evidence_models=[]),
        "explicit": crosscheck.compute(**records, evidence_models=EVIDENCE, weighting="uniform"),
        "explicit_weighted": crosscheck.compute(**records, evidence_models=EVIDENCE, weighting="task", temperature=0.1),
    }
    refcheck = crosscheck.compute(**refcheck_records(shared_data), weighting="uniform")
    return runs, refcheck, overall_rank_sum(shared_data)


@pytest.mark.parametrize(
    "method, system_rho, document_r",
    [("selfcheck", 66.46, 74.06), ("explicit", 77.44, 82.28), ("explicit_weighted", 82.32, 81.78)],
)
def test_table1_wikibio(table1, method, system_rho, document_r):
    runs, refcheck, rank_sum = table1
    results = runs[method]
    assert sorted(results["scores"]) == sorted(TARGETS)
    # lower hallucination score is better; a higher overall rank sum is better
    negated = {model: -score for model, score in results["scores"].items()}
    assert round(rank_correlation(negated, rank_sum, level="system") * 100, 2) == system_rho
    pairs = sum(len(documents) for documents in results["document_scores"].values())
    assert pairs == 2380
    document = rank_correlation(results["document_scores"], refcheck["document_scores"], level="document")
    assert round(document * 100, 2) == document_r


def test_table1_weighted_run_uses_selfcheck_softmax(table1):
    runs, _, _ = table1
    selfcheck = runs["selfcheck"]["scores"]
    falcon_eta = runs["explicit_weighted"]["eta"]["falcon"]
    assert sorted(falcon_eta) == sorted(EVIDENCE + ["falcon"])
    assert sum(falcon_eta.values()) == pytest.approx(1.0)
    best = min(falcon_eta, key=lambda model: selfcheck[model])
    assert max(falcon_eta, key=falcon_eta.get) == best
    assert runs["explicit_weighted"]["selfcheck_scores"]["falcon"] == pytest.approx(selfcheck["falcon"])


def read_leaderboard(shared_data, name):
    with open(shared_data / "leaderboard" / name, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def column(rows, prefix):
    """Values of the column whose header starts with `prefix` (headers carry arrows such as "Human ↓")."""
    (header,) = [key for key in rows[0] if key.startswith(prefix)]
    return [float(row[header]) for row in rows]


def test_table3_mhalubench(shared_data):
    rows = read_leaderboard(shared_data, "img2img-hallucination.csv")
    assert len(rows) == 9
    human = column(rows, "Human")
    chair = [[float(value) for value in row["CHAIR (s/i) ↓"].split(",")] for row in rows]
    chair_rank_sum = (rankdata([s for s, _ in chair]) + rankdata([i for _, i in chair])).tolist()
    expected = {"UniHD": (33.33, 36.98), "CrossCheck-explicit": (75.00, 43.70), "CrossCheck-implicit": (98.33, 64.71)}
    for method, (vs_human, vs_chair) in expected.items():
        scores = column(rows, method)
        assert round(rank_correlation(scores, human) * 100, 2) == vs_human, method
        assert round(rank_correlation(scores, chair_rank_sum) * 100, 2) == vs_chair, method


def test_table4_avhallubench_visual(shared_data):
    # All ten rows: the seven visual(-only) descriptions and the three "(audio-only & audio-visual)" rows; no other
    # subset of seven to nine rows gives both published correlations.
    rows = read_leaderboard(shared_data, "avhallu-visual.csv")
    assert len(rows) == 10
    refcheck = column(rows, "RefCheck")
    assert round(rank_correlation(column(rows, "SelfCheckGPT"), refcheck) * 100, 2) == 86.67
    assert round(rank_correlation(column(rows, "CrossCheck-explicit"), refcheck) * 100, 2) == 89.09


def test_table3_overall_reference_is_the_chair_and_pope_rank_sum(shared_data):
    # "Overall": each model's ranks under CHAIR_s, CHAIR_i and POPE summed, all oriented so that a higher rank is
    # more hallucination (POPE is an accuracy, so it is negated).
    rows = read_leaderboard(shared_data, "img2img-hallucination.csv")
    chair = [[float(value) for value in row["CHAIR (s/i) ↓"].split(",")] for row in rows]
    pope = column(rows, "POPE")
    overall = rankdata([s for s, _ in chair]) + rankdata([i for _, i in chair]) + rankdata([-p for p in pope])
    expected = {"UniHD": 42.02, "SelfCheckGPT": 43.70, "CrossCheck-explicit": 42.86, "CrossCheck-implicit": 50.42}
    for method, published in expected.items():
        assert round(rank_correlation(column(rows, method), overall.tolist()) * 100, 2) == published, method
