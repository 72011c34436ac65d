"""The released CrossCheckGPT WikiBio judgments (shared_data/crosscheck_wikibio) as crosscheck metric records,
shared by the Table 1 reproduction and the ranking pipeline's aggregation test."""
import json

from scipy.stats import rankdata

from hallubench.metrics.crosscheck.crosscheck import records_from_nested

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
