"""The other published numbers: CCHall's Random row (simulated, no released file), the MHaluBench release's counts,
and the rows that released files cannot recompute (said so, with why). Values in %."""
from __future__ import annotations

from typing import Any

import numpy as np

from hallubench.registry import register_reproduction
from hallubench.reproduce.reproduction import Cell, Reproduction, load_metric

MHALUBENCH = "mhalubench/image_to_text_annotated.json"


def cchall_random(references: Any, items: int = 900, runs: int = 3) -> dict[str, float]:
    """The paper's setting: `items` per source over the four types (balanced, as the paper says), uniform guesses,
    through the `cchall` metric; the AVG over sources, averaged over `runs` seeded runs."""
    from hallubench.metrics.cchall.cchall import LABELS

    cchall, sources = load_metric("cchall"), ["AMBER", "GQA", "XM3600", "xFlickrCO"]
    accuracy, macro_f1 = [], []
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        references_ = [LABELS[k % len(LABELS)] for k in range(items)] * len(sources)
        guesses = [LABELS[k] for k in rng.integers(0, len(LABELS), len(references_))]
        out = cchall.compute(predictions=guesses, references=references_,
                             groups={"dataset_source": [s for s in sources for _ in range(items)]})
        accuracy.append(out["accuracy_avg"])
        macro_f1.append(out["macro_f1_avg"])
    return {"accuracy": 100 * float(np.mean(accuracy)), "macro-F1": 100 * float(np.mean(macro_f1))}


def mhalubench_release(references: Any) -> dict[str, float]:
    """The release's counts, and how many segment labels differ from the one the `mhalubench` metric derives from
    their claims (a segment is hallucinated when any of its claims is)."""
    from hallubench.metrics.mhalubench.mhalubench import segment_label

    items = references.read_json(MHALUBENCH)
    segments = [segment for item in items for segment in item["annotation"]]
    claims = [claim for segment in segments for claim in segment["claims"]]
    derived = sum(segment["segment_label"] != segment_label([claim["claim_label"] for claim in segment["claims"]])
                  for segment in segments)
    return {"responses": len(items), "segments": len(segments), "claims": len(claims),
            "segment labels differing from their claims": derived}


for reproduction in (
    Reproduction(
        "cchall-table1-strategies", "CCHall", "Table 1, five strategies, six models", status="not run",
        published_text="accuracy / macro-F1 per source and AVG (e.g. GPT-4o HalluciMAD 77.5 / 78.8)",
        source="no model outputs released; needs API access (GPT-4o) and GPUs (see "
               "[CCHall's strategies](../methods/cchall-strategies.md))"),
    Reproduction(
        "cchall-table1-random", "CCHall", "Table 1, Random row", (),
        (Cell("accuracy", 25.0, 24.7, decimals=1), Cell("macro-F1", 29.9, 24.7, decimals=1)), cchall_random,
        source="simulated: uniform guesses on balanced labels, 900 items × 4 sources × 3 runs, through the `cchall` "
               "metric's AVG, seeds 0-2 (any unweighted macro definition gives 25.0 ± 0.8 over seeds). With uniform guesses each type's F1 "
               "is 2p/4 / (p + 1/4), so an unweighted macro-F1 cannot pass 25; only `weighted_f1` can, and only on "
               "skewed labels (70/10/10/10 gives 30.08), against the paper's \"balancing\". The labels' real counts "
               "are in the Hub-only release (not checked). `metrics/cchall/README.md`"),
    Reproduction(
        "mhalubench-release", "UniHD", "MHaluBench release (image-to-text)", (MHALUBENCH,),
        (Cell("responses", 200, 200, decimals=0), Cell("segments", 661, 661, decimals=0),
         Cell("claims", 1142, 1142, decimals=0), Cell("segment labels differing from their claims", 0, 0, decimals=0)),
        mhalubench_release,
        source="`mhalubench/`; the released segment labels all equal the ones derived from their claims"),
    Reproduction(
        "unihd-table2-selfcheck", "UniHD", "Table 2, Self-Check rows (GPT-4V, Gemini)", status="not reproduced",
        published_text="claim macro-F1 74.97 (GPT-4V 0-shot), 79.08 (2-shot), ...",
        source="needs the retired GPT-4V and the v0.1 image-to-text set; the pipeline is checked instead: the "
               "annotated labels given as the detector's answers score 1.0 on all 198 scored items at both levels "
               "(tests/test_mhalubench_detection.py)"),
    Reproduction(
        "hallusionbench-leaderboard", "HallusionBench", "leaderboard (qAcc / fAcc / aAcc)", status="rule checked",
        published_text="e.g. GPT-4V 28.79 / 39.88 / 65.28 (GPT-4 judged)",
        source="the 1,129-question set's model outputs and GPT-4 judgments are not in the repository (the repo's "
               "`HallusionBench_result_sample.json` is the older 254-question set, without `gt_answer`); the "
               "`hallusionbench` metric equals the authors' `utils.py` (@ 744007c, GPT-4 replaced by fixed "
               "judgments) and VLMEvalKit's rule on 288 adversarial answers, overall and per VD / VS "
               "(tests/test_metric_hallusionbench.py)"),
    Reproduction(
        "cmm-tables2-5", "CMM", "Tables 2-5", status="rule checked", published_text="model scores",
        source="CMM's outputs are not released, so no published number can be recomputed; results.json equals the "
               "release's `calculate_score.py` on a run's (adversarial) outputs (tests/test_cmm_official_scoring.py)"),
):
    register_reproduction(reproduction)
