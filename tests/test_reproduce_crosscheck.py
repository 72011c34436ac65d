"""CrossCheckGPT Tables 1, 3 and 4 (Sun, Manakul et al., 2024) from the authors' released judgments and leaderboard.

Table 1 (WikiBio, 10 text LLMs) re-aggregates the released per-sentence judgments through the crosscheck module.
Tables 3 and 4 correlate the published system scores with rank_correlation.
"""
import csv
import json
import os

import pytest
from scipy.stats import rankdata

from hallubench.metrics.crosscheck.crosscheck import rank_correlation, records_from_nested
from metric_doctests import METRICS

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TARGETS = ["vicuna", "llama2lm", "falcon", "mistral", "mistral1", "starling", "openorca", "llama2", "beluga", "zephyr"]
EVIDENCE = ["mistral", "llama2", "vicuna", "zephyr", "beluga", "starling", "openorca", "llama2lm"]
SAMPLES = 20  # the released judgments are sums over 20 sampled evidence passages
# leaderboard metric weights of the reference "overall" ranking (the authors' compare.py)
METRIC_WEIGHTS = {"TruthQA_MC1": 0.5, "TruthQA_MC2": 0.5}


def load_judgment_file(path):
    """The released list of documents, each {evidence model: [per-sentence judgment]}."""
    return json.loads(path.read_text())


def load_target(folder, target):
    """`<m>.json` plus the evidence models added by `<m>_rest.json` (overlapping models must agree)."""
    documents = load_judgment_file(folder / f"crosscheck_prompt_{target}.json")
    rest = folder / f"crosscheck_prompt_{target}_rest.json"
    if rest.exists():
        for i, (document, extra) in enumerate(zip(documents, load_judgment_file(rest))):
            clash = [m for m in extra if m in document and document[m] != extra[m]]
            assert not clash, f"{rest.name} document {i} disagrees on {clash}"
            document.update(extra)
    return documents


def wikibio_records(shared_data):
    """Records for the crosscheck module, judgments divided by the 20 samples they sum over."""
    folder = shared_data / "crosscheck_wikibio" / "judgments"
    nested = {
        target: [
            {evidence: [value / SAMPLES for value in sums] for evidence, sums in document.items()}
            for document in load_target(folder, target)
        ]
        for target in TARGETS
    }
    return records_from_nested(nested)


def refcheck_records(shared_data):
    """RefCheck: one evidence "model", the Wikipedia reference, judged once per sentence (already in [0, 1])."""
    folder = shared_data / "crosscheck_wikibio" / "judgments"
    nested = {
        target: [
            {"reference": document["ref"]}
            for document in load_judgment_file(folder / f"crosscheck_prompt_{target}_refcheck.json")
        ]
        for target in TARGETS
    }
    return records_from_nested(nested)


def overall_rank_sum(shared_data):
    """Per model, the weighted sum of its 0-based ranks within each leaderboard metric (higher = better)."""
    metrics = json.loads((shared_data / "crosscheck_wikibio" / "leaderboard_metrics.json").read_text())
    names = list(metrics[TARGETS[0]])
    assert len(names) == 10
    totals = dict.fromkeys(TARGETS, 0.0)
    for name in names:
        ranks = rankdata([metrics[m][name] for m in TARGETS], method="ordinal") - 1
        for model, rank in zip(TARGETS, ranks):
            totals[model] += METRIC_WEIGHTS.get(name, 1.0) * rank
    return totals


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
