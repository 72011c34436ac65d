"""VideoHallucer (Wang et al. 2024): basic/hallucinated yes/no question pairs over videos, five subsets.

Prompt: the question, a newline and "Answer the question using 'yes' or 'no'." (evaluations/evaluation_utils.py
`evaluate`, github.com/patrick-tssn/VideoHallucer @ ae4c2f2), each question asked on its own with its video.
The authors keep each baseline's own decoding (e.g. LLaVA-NeXT-Video samples at temperature 0.2); here decoding is
greedy, 64 new tokens (an answer is one word or a sentence).

Scored by the `videohallucer` metric, the authors' `cal_score` (an answer hits when its reference word occurs
in it as a whole word) with the paper's headline pair accuracy ("Overall": both questions of a pair hit) averaged
over the subsets, and evaluation_bias.py's yes/no-bias numbers. Groups: each subset (the paper's Table 2
columns). `videohallucer` runs all five; `videohallucer_<subset>` one each.
"""
import dataclasses

from hallubench.benchmarks.task import MediaSpec, Row, Task, one_of, yes_no
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_parser, register_task

INSTRUCTION = "\nAnswer the question using 'yes' or 'no'."
ABOUT = {"object_relation": "objects and how they relate", "temporal": "the order and timing of events",
         "semantic_detail": "fine details", "external_factual": "true world facts the video does not show",
         "external_nonfactual": "false world claims the video does not show"}
SUBSETS = ("object_relation", "temporal", "semantic_detail", "external_factual", "external_nonfactual")


def prompt(row: Row) -> str:
    """The authors' prompt: f"{question}\\nAnswer the question using 'yes' or 'no'."."""
    return row["question"] + INSTRUCTION


def metric_inputs(row: Row) -> dict:
    return {"pair_ids": row["pair_id"], "roles": row["role"], "subsets": row["subset"]}


@register_parser("videohallucer_yes_no")
def videohallucer_yes_no(text: str, **_metric_inputs) -> str | None:
    """The words the metric's rule finds: "yes", "no", "yes+no" or None (imported on first use: the metric
    module imports evaluate)."""
    from hallubench.metrics.videohallucer.videohallucer import parse_videohallucer

    return parse_videohallucer(text)


VIDEOHALLUCER = Task(
    name="videohallucer",
    description="VideoHallucer's basic/hallucinated yes/no question pairs over all five subsets",
    benchmark="videohallucer",
    config="all",
    prompt=prompt,
    media=MediaSpec(video="video"),
    generation=GenerationSettings(max_new_tokens=64),
    parser="videohallucer_yes_no",
    metric="videohallucer",
    reference=lambda row: one_of(row, "answer", ("yes", "no"), yes_no),
    group=lambda row: row["subset"],
    metric_inputs=metric_inputs,
    # yes_diff / no_diff are best at 0 (no bias either way), so neither direction is better.
    higher_is_better={"basic_accuracy": True, "halluc_accuracy": True, "accuracy": True, "yes_diff": None,
                      "no_diff": None, "false_positive_ratio": False, "hallucination_score": False},
    source="Wang et al. 2024, arXiv:2406.16338; github.com/patrick-tssn/VideoHallucer; Hub bigai-nlco/VideoHallucer",
)
register_task(VIDEOHALLUCER)

for _subset in SUBSETS:
    register_task(dataclasses.replace(VIDEOHALLUCER, name=f"videohallucer_{_subset}", config=_subset,
                                      description=f"VideoHallucer question pairs on {ABOUT[_subset]}"))
