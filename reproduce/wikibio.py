"""The CrossCheckGPT WikiBio release (BriansIDP/crosscheckgpt, dev branch) as crosscheck metric records: each
target's per-sentence judgments, RefCheck against the Wikipedia reference, and the hallucination-leaderboard ranking
that Tables 1, 2 and 6 correlate with."""
from __future__ import annotations

from typing import Any

from scipy.stats import rankdata

from hallubench.metrics.crosscheck.crosscheck import records_from_nested

FOLDER = "crosscheck_wikibio"
JUDGMENTS = f"{FOLDER}/judgments"
TARGETS = ["vicuna", "llama2lm", "falcon", "mistral", "mistral1", "starling", "openorca", "llama2", "beluga", "zephyr"]
EVIDENCE = ["mistral", "llama2", "vicuna", "zephyr", "beluga", "starling", "openorca", "llama2lm"]
SAMPLES = 20  # the released judgments are sums over 20 sampled evidence passages
# leaderboard metric weights of the reference "overall" ranking (the authors' compare.py)
METRIC_WEIGHTS = {"TruthQA_MC1": 0.5, "TruthQA_MC2": 0.5}
LEADERBOARD = f"{FOLDER}/leaderboard_metrics.json"


def _with_rest(target: str) -> list[str]:
    """`<m>.json` and, where released, `<m>_rest.json` (more evidence models for the same documents)."""
    names = [f"{JUDGMENTS}/crosscheck_prompt_{target}.json"]
    return names + ([f"{JUDGMENTS}/crosscheck_prompt_{target}_rest.json"] if target in REST else [])


REST = ("beluga", "falcon", "llama2lm", "mistral1", "openorca", "starling")
JUDGMENT_FILES = tuple(name for target in TARGETS for name in _with_rest(target))
REFCHECK_FILES = tuple(f"{JUDGMENTS}/crosscheck_prompt_{target}_refcheck.json" for target in TARGETS)
IMPLICIT_FILES = tuple(f"{JUDGMENTS}/crosscheck_prompt_{target}_implicit.json" for target in TARGETS)
GPT3 = f"{JUDGMENTS}/crosscheck_prompt_gpt3.json"
FILES = JUDGMENT_FILES + REFCHECK_FILES + (LEADERBOARD,)


def load_target(references: Any, target: str) -> list[dict[str, list[float]]]:
    """A target's documents, each {evidence model: per-sentence judgment sums}, `_rest` models added (models
    present in both files must agree)."""
    main, *rest = _with_rest(target)
    documents = references.read_json(main)
    for name in rest:
        for i, (document, extra) in enumerate(zip(documents, references.read_json(name))):
            clash = [m for m in extra if m in document and document[m] != extra[m]]
            if clash:
                raise ValueError(f"{name} document {i} disagrees with {main} on {clash}")
            document.update(extra)
    return documents


def records(references: Any) -> dict[str, list]:
    """Records for the crosscheck module, judgments divided by the 20 samples they sum over."""
    nested = {target: [{evidence: [value / SAMPLES for value in sums] for evidence, sums in document.items()}
                       for document in load_target(references, target)]
              for target in TARGETS}
    return records_from_nested(nested)


def implicit_records(references: Any) -> dict[str, list]:
    """The released CrossCheck-implicit judgments (`<m>_implicit.json`), as records (already in [0, 1])."""
    nested = {target: references.read_json(f"{JUDGMENTS}/crosscheck_prompt_{target}_implicit.json")
              for target in TARGETS}
    return records_from_nested(nested)


def refcheck_records(references: Any) -> dict[str, list]:
    """RefCheck: one evidence "model", the Wikipedia reference, judged once per sentence (already in [0, 1])."""
    nested = {target: [{"reference": document["ref"]} for document in
                       references.read_json(f"{JUDGMENTS}/crosscheck_prompt_{target}_refcheck.json")]
              for target in TARGETS}
    return records_from_nested(nested)


def overall_rank_sum(references: Any) -> dict[str, float]:
    """Per model, the weighted sum of its 0-based ranks within each leaderboard metric (higher = better)."""
    metrics = references.read_json(LEADERBOARD)
    names = list(metrics[TARGETS[0]])
    totals = dict.fromkeys(TARGETS, 0.0)
    for name in names:
        ranks = rankdata([metrics[m][name] for m in TARGETS], method="ordinal") - 1
        for model, rank in zip(TARGETS, ranks):
            totals[model] += METRIC_WEIGHTS.get(name, 1.0) * rank
    return totals
