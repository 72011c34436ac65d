"""HallusionBench (Guan et al., CVPR 2024): 1,129 yes/no questions, Visual Dependent (VD) and Visual Supplement (VS).

Prompt: the question as released, nothing added. The authors' inference is `your_function(img_filename, question)`
on the released question (evaluation.py / random_guess.py, github.com/tianyi-lab/HallusionBench @ 744007c), and
lmms-eval's port sends `{pre_prompt}{question}{post_prompt}` with both empty (lmms_eval/tasks/hallusion_bench/
hallusion_bench_image.yaml). A question with `visual_input` 0 has no figure and is asked without one, as the authors
do (utils.py `get_image_file_location` gives no file for it); lmms-eval's task runs only the 951 with a figure.
Generation: greedy, at most 128 new tokens (lmms-eval's yaml; the authors' code leaves it to each model).

Two tasks, one per judge, so their numbers never mix (every metric name ends with its judge):
- `hallusionbench`: the rule-based yes/no matcher of VLMEvalKit and lmms-eval (`*_rule`); no second model.
- `hallusionbench_judge`: the authors' evaluation, a second step asks a judge the authors' GPT-4 prompt
  (utils.py `evaluate_by_chatgpt`, verbatim) about each answer and reads "correct" / "incorrect" / "unclear" as they
  do (`*_judge`). The judge is `--helper judge adapter=openai,model=gpt-4` for the paper's setting; without
  `--helper judge` the run's own model judges. Judge settings: the model's default temperature (the authors send
  none) and at most 16 new tokens (lmms-eval's max_tokens).
Both score qAcc, fAcc and aAcc as the authors' utils.py (metric `hallusionbench`), with easy / hard question-pair
accuracy, overall and per VD / VS and per category/subcategory (the groups).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from hallubench.benchmarks.steps import Done, Program, Step
from hallubench.benchmarks.task import MediaSpec, Row, Task, one_of
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_parser, register_task

ROW_FIELDS = ("category", "subcategory", "set_id", "figure_id", "question_id", "visual_input")
SOURCE = "Guan et al., CVPR 2024, arXiv:2310.14566; github.com/tianyi-lab/HallusionBench (utils.py, evaluation.py)"
ANSWER = GenerationSettings(max_new_tokens=128, temperature=0.0)
JUDGE = GenerationSettings(max_new_tokens=16, temperature=None)


def groups(row: Row) -> tuple[str, str]:
    """The row's category (VD / VS, as the authors report) and category/subcategory."""
    return row["category"], f"{row['category']}/{row['subcategory']}"


def fields(row: Row) -> dict[str, str]:
    """The fields the metric groups answers by."""
    return {name: row[name] for name in ROW_FIELDS}


@register_parser("hallusionbench_rule")
def read_rule(text: str, **_: Any) -> str | None:
    """VLMEvalKit's YOrN_Extraction: "yes" / "no" when exactly one of them is a word of the answer, else None."""
    from hallubench.metrics.hallusionbench.hallusionbench import extract_yes_no

    return extract_yes_no(text)


def judge_prompts(row: Row, done: Done) -> list[str]:
    from hallubench.metrics.hallusionbench.hallusionbench import JUDGE_PROMPT

    return [JUDGE_PROMPT.format(question=row["question"], gt_answer_details=row["gt_answer_details"],
                                prediction=done.first("answer"))]


def judgment(record: Mapping[str, Any]) -> str | None:
    outputs = record["steps"].get("judge", {}).get("outputs") or []
    return outputs[0][0] if outputs and outputs[0] else None


@register_parser("hallusionbench_judge")
def read_judgment(record: Mapping[str, Any]) -> int | None:
    """The authors' reading of the judge's answer: 0 incorrect, 1 correct, 2 unclear; None without a judgment."""
    from hallubench.metrics.hallusionbench.hallusionbench import judge_code

    text = judgment(record)
    return None if text is None else judge_code(text)


def judged_inputs(record: Mapping[str, Any]) -> dict[str, Any]:
    return {"predictions": record["outputs"][0], "references": record["reference"], **record["metric_inputs"],
            "judgments": judgment(record)}


def _higher_is_better(judge: str) -> dict[str, bool | None]:
    better = {f"{name}_{judge}": True for name in ("qacc", "facc", "aacc", "easy_qacc", "hard_qacc", "figure_score")}
    return {**better, f"yes_bias_{judge}": None, f"fp_ratio_{judge}": None}


HALLUSIONBENCH = Task(
    name="hallusionbench",
    description="HallusionBench's yes/no questions on charts, tables, maps and illusions, read by rule",
    benchmark="hallusionbench",
    config="all",
    prompt=lambda row: row["question"],
    media=MediaSpec(image="image", optional=True),
    generation=ANSWER,
    parser="hallusionbench_rule",
    metric="hallusionbench",
    reference=lambda row: one_of(row, "gt_answer", ("0", "1")),
    group=groups,
    metric_inputs=fields,
    higher_is_better=_higher_is_better("rule"),
    # VLMEvalKit's yes/no rule since its commit 928a95b0 (2025-05-13); rule=vlmevalkit-2024 is the one before it
    metric_args={"rule": "vlmevalkit"},
    source=SOURCE + "; rule: VLMEvalKit YOrN_Extraction",
    version=2,  # 2: VLMEvalKit's current period rule by default
)
register_task(HALLUSIONBENCH)

register_task(dataclasses.replace(
    HALLUSIONBENCH,
    name="hallusionbench_judge",
    description="HallusionBench with each answer read by a judge model (the authors' GPT-4 prompt)",
    parser="hallusionbench_judge",
    metric_args={},
    version=1,
    higher_is_better=_higher_is_better("judge"),
    source=SOURCE + "; judge: the authors' GPT-4 prompt",
    program=Program(
        steps=(Step("answer", lambda row, done: [row["question"]], media=True),
               Step("judge", judge_prompts, generation=JUDGE, model="judge")),
        helpers={"judge": "target"},
        answer="answer",
    ),
    score_inputs=judged_inputs,
    unreadable=lambda code: code == 2,
))
