"""MHaluBench image-to-text (Chen et al. 2024, UniHD; used by CrossCheckGPT): captioning, and hallucination detection.

Captioning (`mhalubench`): the model describes each image; the benchmark's annotated responses come from other
systems, so the new captions are ranked by cross-checking across run folders (metrics/crosscheck), not inside
one run. MHaluBench publishes no captioning prompt of its own; this task asks the AVHalluBench question with
"image" for "video" so the visual tasks stay comparable. Items whose image the release lacks are recorded as
media errors.

Detection (`mhalubench_selfcheck`, `mhalubench_selfcheck_2shot`): the model is the hallucination detector, the
paper's Self-Check baselines (UniHD §5.1 and Table 2, 0-shot and 2-shot): it sees the image, the annotated
response and that response's claims from the release, numbered in order, and gives each a verdict with a
reason. The `mhalubench` metric reads the verdicts from its raw answer (`parse_verdicts`: the label right
after each claim's number) and scores claims and segments (a segment is hallucinatory iff one of its claims
is, UniHD §5.1), per `task_type` too. An unreadable verdict is unparsed, never a class: a response with no
verdict at all counts in the task's `n_unparsed`; a partly read one is scored on the verdicts read, its
other claims count as unparsed (wrong) claims (`claim_unparsed`, and `responses_partial` counts such
responses).

Prompt sources. The paper publishes no Self-Check prompt (its appendix, Tables 3-8, and EasyDetect's
`pipeline/prompts/verify.yaml` hold UniHD's own, which feed the detector tool evidence). Ours is written for
this task after UniHD's verification prompt (Table 7, verify.yaml `image-to-text`): the four aspects checked
(object, attribute, scene text, fact), the two labels, a reason per claim and the answer format, a JSON list
`[{"claim1": "hallucination", "reason": ...}, ...]`; the tool evidence (expert detections, search results)
is left out, since Self-Check has none, so facts are judged from the model's own knowledge. The claims are
listed as in verify.yaml ("claim1: ..."), after the response. Generation follows EasyDetect
(`pipeline/openai_wrapper.py`, `config.yaml`): temperature 0.2, up to 1,024 tokens.

The 2-shot demonstrations are not published either (the paper, footnote 5: "two complete demonstrations"
of an image, its response and claims). We took two items of the released image_to_text_annotated.json
(github.com/BriansIDP/crosscheckgpt data/VisualImage, items 25 and 49: an object/attribute case and a
scene-text/object/fact case), with their responses, claims and annotated labels verbatim. Unlike the
paper's they are shown as text only (a task shows the model one image, the item's), and the prompt says so;
their reasons are ours and only restate what the annotated label says (we had no images). Both tasks leave
these two items out (`exclude`), so they are scored on the same 198 of the 200 released items; a release
without them (the mini one) loses nothing.
"""
import json
from typing import Any, Mapping, NamedTuple

from hallubench.benchmarks.task import MediaSpec, Row, Task, one_of
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_parser, register_task

PROMPT = "Describe the image in one paragraph."

HALLU, OK = "hallucination", "non-hallucination"
ANSWER_FORMAT = """Judge every claim, in the order given, and give the reason for each judgment. Answer only with a JSON list holding one object per claim, in this format:
[{"claim1": "hallucination", "reason": "..."}, {"claim2": "non-hallucination", "reason": "..."}, ...]"""
INSTRUCTIONS = """You are given an image and a response that a multimodal model wrote about it, split into numbered claims. Judge each claim against the image: does it conflict with what the image shows?

Check four aspects of every claim:
- Object: the objects it mentions are in the image, as many as it says.
- Attribute: the colours, positions, actions and other properties it gives the objects match the image.
- Scene text: any text it says is written in the image matches the text there.
- Fact: any world knowledge it states is true.
A claim that conflicts with the image or with the facts in any aspect is a "hallucination"; otherwise it is a "non-hallucination".

""" + ANSWER_FORMAT
SHOTS_INTRO = ("Two examples follow. Their images are not shown here; their verdicts are those of human "
               "annotators who saw the images.")
QUERY_INTRO = "Now judge the claims about the image you are given."


class Demonstration(NamedTuple):
    image_name: str
    response: str
    verdicts: tuple[tuple[str, str, str], ...]  # (claim, label, reason)


# Items 25 and 49 of image_to_text_annotated.json: response, claims and labels verbatim; the reasons are ours.
DEMONSTRATIONS = (
    Demonstration(
        "COCO_val2014_000000069535.jpg",
        "The image shows a wooden table with a large orange cut in half. The two halves are positioned on the left "
        "and right sides of the table. Additionally, there is a stainless steel knife and a white ceramic plate on "
        "the table.", (
            ("A wooden table has a large orange cut in half", OK, "A large orange cut in half lies on a wooden table."),
            ("The orange halves are on the left and right sides of the table", OK,
             "One half lies on the left side of the table and the other on the right."),
            ("A stainless steel knife is on the table", HALLU, "There is no stainless steel knife on the table."),
            ("A white ceramic plate is on the table", HALLU, "There is no white ceramic plate on the table."))),
    Demonstration(
        "COCO_val2014_000000003779.jpg",
        "A wine tasting event is taking place at West London Wine School. There are three wine glasses on the "
        "table. The West London Wine School, known for its wine-based educational programs, is actually a "
        "culinary institute located in Paris.", (
            ("A wine tasting event is at West London Wine School", OK,
             "The text in the image names a wine tasting event at West London Wine School."),
            ("Three wine glasses are on the table", HALLU, "The image does not show three wine glasses on the table."),
            ("West London Wine School is a culinary institute", HALLU,
             "West London Wine School is a wine school, not a culinary institute."),
            ("West London Wine School is located in Paris", HALLU, "West London Wine School is in London, not Paris."),
            ("West London Wine School is known for wine-based educational programs", OK,
             "West London Wine School is known for its wine courses."))),
)
_SHOWN = {(demo.image_name, demo.response) for demo in DEMONSTRATIONS}
# The mhalubench metric's flat keys (metrics/mhalubench): every one is a score, higher is better.
_SCORES = ["accuracy", "macro_precision", "macro_recall", "macro_f1"] + [
    f"{label}_{score}" for label in ("hallucination", "non_hallucination") for score in ("precision", "recall", "f1")]
# UniHD reports detection by claim type (Figure 6: object, attribute, scene-text, fact): these scores of the metric's
# by_claim_category are reported flat, as "<category>_claim_<score>".
CATEGORY_SCORES = ("accuracy", "macro_f1", "hallucination_f1", "n")
CATEGORIES = ("object", "attribute", "scene_text", "fact")
HIGHER_IS_BETTER = {f"{level}_{score}": True for level in ("claim", "segment") for score in _SCORES} | {
    f"{category}_claim_{score}": True for category in CATEGORIES for score in CATEGORY_SCORES if score != "n"}


def claims(row: Row) -> list[dict]:
    """The row's claims in response order, across its segments."""
    return [claim for segment in row["segments"] for claim in segment["claims"]]


def claims_text(response: str, claim_texts: list[str], kind: str = "Response") -> str:
    listed = "\n".join(f"claim{k}: {claim}" for k, claim in enumerate(claim_texts, 1))
    return f"{kind}: {response}\n\nClaims:\n{listed}"


def _demonstration(k: int, demo: Demonstration) -> str:
    answer = json.dumps([{f"claim{i}": label, "reason": reason} for i, (_, label, reason) in enumerate(demo.verdicts, 1)])
    return f"Example {k}\n{claims_text(demo.response, [claim for claim, _, _ in demo.verdicts])}\n\nAnswer: {answer}"


def selfcheck_prompt(row: Row) -> str:
    """The 0-shot Self-Check prompt: instructions, the response and its numbered claims."""
    return f"{INSTRUCTIONS}\n\n{claims_text(row['response'], [c['claim'] for c in claims(row)])}\n\nAnswer:"


def selfcheck_2shot_prompt(row: Row) -> str:
    """The 2-shot prompt: the instructions, the two worked demonstrations, then the item as in 0-shot."""
    shots = "\n\n".join(_demonstration(k, demo) for k, demo in enumerate(DEMONSTRATIONS, 1))
    query = claims_text(row["response"], [c["claim"] for c in claims(row)])
    return f"{INSTRUCTIONS}\n\n{SHOTS_INTRO}\n\n{shots}\n\n{QUERY_INTRO}\n\n{query}\n\nAnswer:"


def reference(row: Row) -> list[str]:
    """Each claim's label, one of the two the metric scores (imported here: the metric imports evaluate)."""
    from hallubench.metrics.mhalubench.mhalubench import LABELS

    return [one_of(claim, "claim_label", LABELS) for claim in claims(row)]


def metric_inputs(row: Row) -> dict:
    """Each claim's segment (its index in the response), for segment-level scores and the claim count, and its
    claim_category list, for the scores by claim type."""
    return {"segment_ids": [str(i) for i, segment in enumerate(row["segments"]) for _ in segment["claims"]],
            "claim_categories": [list(claim["claim_category"]) for claim in claims(row)]}


@register_parser("mhalubench_verdicts")
def verdicts(text: str, segment_ids: list[str], claim_categories: list[list[str]] | None = None) -> list[str | None] | None:
    """The metric's own reading (`parse_verdicts`): a label or None per claim, None when no verdict is read
    (imported on first use: the metric module imports evaluate). The categories are the metric's, not the parser's."""
    from hallubench.metrics.mhalubench.mhalubench import parse_verdicts

    return parse_verdicts(text, len(segment_ids))


def _flat(scores: Mapping[str, Any]) -> dict[str, Any]:
    """The metric's scores with its by_claim_category table flattened to "<category>_claim_<score>"."""
    out = {name: value for name, value in scores.items() if name != "by_claim_category"}
    for category, values in scores.get("by_claim_category", {}).items():
        out.update({f"{category.replace('-', '_')}_claim_{score}": values[f"claim_{score}"] for score in CATEGORY_SCORES})
    return out


def summarize(output: Mapping[str, Any]) -> dict[str, Any]:
    """results.json's metrics: the task's and each group's, with their scores by claim type flat."""
    return {**_flat(output), "by_group": {column: {value: _flat(scores) for value, scores in breakdown.items()}
                                          for column, breakdown in output.get("by_group", {}).items()}}


SOURCE = ("Chen et al. 2024, arXiv:2402.03190 §5.1 and Table 2 (Self-Check), Table 7; "
          "github.com/zjunlp/EasyDetect pipeline/prompts/verify.yaml")


# EasyDetect's settings (pipeline/openai_wrapper.py, config.yaml): temperature 0.2, up to 1,024 tokens.
EASYDETECT_GENERATION = GenerationSettings(max_new_tokens=1024, temperature=0.2)


def detection_task(name: str, prompt, num_fewshot: int = 0, benchmark: str = "mhalubench", config: str = "default",
                   source: str = SOURCE, generation: GenerationSettings = EASYDETECT_GENERATION, *,
                   description: str) -> Task:
    """A Self-Check detection task on one config of an MHaluBench dataset (this copy's, or the official release's
    parts in benchmarks/mhalubench_official.py): the verdicts parsed and scored by the `mhalubench` metric."""
    return Task(
        name=name,
        description=description,
        num_fewshot=num_fewshot,
        benchmark=benchmark,
        config=config,
        prompt=prompt,
        media=MediaSpec(image="image"),
        generation=generation,
        parser="mhalubench_verdicts",
        metric="mhalubench",
        reference=reference,
        group=lambda row: row["task_type"],
        metric_inputs=metric_inputs,
        higher_is_better=HIGHER_IS_BETTER,
        fractions=tuple(HIGHER_IS_BETTER),  # every score it reports is a share
        summarize=summarize,
        exclude=lambda row: (row["image_name"], row["response"]) in _SHOWN,
        source=source,
    )


register_task(
    Task(
        name="mhalubench",
        description="Caption MHaluBench's images; models ranked by CrossCheck on the captions",
        benchmark="mhalubench",
        config="default",
        prompt=lambda row: PROMPT,
        media=MediaSpec(image="image"),
        generation=GenerationSettings(max_new_tokens=256),
        samples=GenerationSettings(max_new_tokens=256, temperature=1.0, top_p=0.9, n=10),
        parser="text",
        metric=None,
        scored_by="crosscheck over the run folders of several models (hallubench.metrics.crosscheck)",
        source="Chen et al. 2024, arXiv:2402.03190; github.com/BriansIDP/crosscheckgpt data/VisualImage",
    ),
)
register_task(detection_task("mhalubench_selfcheck", selfcheck_prompt,
                             description="Self-Check: the model marks each claim of a caption hallucinated or not"))
register_task(detection_task("mhalubench_selfcheck_2shot", selfcheck_2shot_prompt, num_fewshot=2,
                             description="Self-Check with two worked examples before each caption (2-shot)"))
