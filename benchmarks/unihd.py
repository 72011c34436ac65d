"""UniHD (Chen et al. 2024, "Unified Hallucination Detection for Multimodal Large Language Models", arXiv:2402.03190,
§4) as a multi-step task on every part of MHaluBench (`mhalubench_unihd`, the official release's config `all`, each
part reported as a group like Table 2): the detector model formulates tool queries for the item's claims, the tools
run, and the detector judges each claim with the tool evidence. Every prompt is the authors', verbatim from EasyDetect
(github.com/zjunlp/EasyDetect @ ad519a2, benchmarks/unihd_prompts.py; the paper's Appendix A prints the same), and the
glue between the steps follows EasyDetect's pipeline/*.py; its settings (config.yaml: temperature 0.2, 1,024 tokens)
are the model steps' generation. Scored by the `mhalubench` metric at claim and segment level, as Self-Check is.

Steps (journalled like every multi-step task, so a killed run resumes at the first unfinished step):
1. `claims` (target): claim extraction (claim_generate.yaml). On MHaluBench it sends nothing: the paper's footnote 2,
   "our framework builds upon the pre-annotated claims available in MHaluBench, and the claim extraction is only
   necessary in the open-domain setting"; the release's claims are used and scored.
2. `objects` (target): query_generate.yaml `object`, the claims listed "claim1: ..." one a line.
3. `queries` (target): the `attribute` (with the objects of step 2, period-joined), `scene-text` and `fact` prompts.
   For image-to-text, claims with a fact question get no object or attribute query (query_generate.py `filter`); its
   wordnet hypernym pruning of the objects is left out (nltk is not a dependency).
4. `detect` (role `detector`, `--helper detector adapter=grounding_dino,pretrained=...`): one call with the remaining
   objects period-joined (first-seen order; EasyDetect's is a set's).
5. `attribute` (role `attribute`, default the target model, as the paper's GPT-4V answers its own attribute questions):
   the questions numbered "1.question" a line, with the image (tool_execute.py `get_attribute_res`).
6. `ocr` (role `ocr`, `adapter=scene_text`): with the image, when some claim has a scene-text question (a text-to-image
   answer "none" given as a string counts as none; EasyDetect tests its first character there and always runs OCR).
7. `search` (role `search`, `adapter=search`): each fact claim's first two questions, one search each
   (google_serper.py `execute` takes two); the snippets numbered "1.snippet" a line across the item.
8. `verify` (target): verify.yaml's system and user text, its two worked examples, then verify.py's input template with
   the evidence ("none information" where a tool found or was given nothing, EasyDetect's words; the detections'
   lines, empty when none). Its answer, [{"claim1": "hallucination", "reason": ...}, ...], is read by the
   `mhalubench_verdicts` parser; an unreadable one is counted unparsed.

Chosen where the harness differs from EasyDetect: a step's system prompt is the first paragraph of its user text (the
harness sends user and assistant turns only); the verification's two examples go as text without their images
(pipeline/examples/*.jpg are not in the repository); a tool role no `--helper` plays is skipped and its evidence is
"none information" (its step is absent from the record, so a run says which tools it had); an intermediate answer
that is not the JSON asked for (read with json, then as a Python literal) gives no query for that tool. Like the
Self-Check tasks it leaves out the two released items the 2-shot prompt shows, so all score the same items.
"""
from __future__ import annotations

import ast
import dataclasses
import json
import re
from typing import Any

from hallubench.benchmarks.mhalubench import claims, detection_task, verdicts
from hallubench.benchmarks.steps import Done, Program, Step
from hallubench.benchmarks.task import Row
from hallubench.benchmarks.unihd_prompts import CLAIM_GENERATE, QUERY_GENERATE, VERIFY, VERIFY_INPUT
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_parser, register_task

NONE = "none information"
SOURCE = ("Chen et al. 2024, arXiv:2402.03190 §4, Appendix A (Tables 3-8), Table 2 (UniHD); "
          "github.com/zjunlp/EasyDetect pipeline/ (prompts/*.yaml, claim_generate.py, query_generate.py, "
          "tool_execute.py, tool/, verify.py) @ ad519a2")
OCR_SETTINGS = GenerationSettings(max_new_tokens=32)  # a tool call: the tools ignore sampling


def kind(row: Row) -> str:
    """UniHD's prompt set of the row: "text-to-image" or "image-to-text"."""
    return "text-to-image" if row.get("task_type") == "text-to-image" else "image-to-text"


def with_system(prompt: dict[str, str], **fields: str) -> str:
    """A prompt's system text, a blank line, then its user text filled in."""
    return f"{prompt['system']}\n\n{prompt['user'].format(**fields)}"


def read_json(text: str) -> Any:
    """The first JSON list or dict in a model's answer (as JSON, else as a Python literal), or None."""
    match = re.search(r"[\[{].*[\]}]", text or "", re.DOTALL)
    if not match:
        return None
    for read in (json.loads, ast.literal_eval):
        try:
            return read(match.group(0))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def claim_texts(row: Row, done: Done) -> list[str]:
    """The item's claims: the release's, else those the `claims` step extracted."""
    if row.get("segments"):
        return [claim["claim"] for claim in claims(row)]
    extracted = read_json(done.first("claims")) if done.outputs.get("claims") else None
    return [str(c.get("claim")) for seg in extracted or [] if isinstance(seg, dict)
            for c in seg.get("claims") or [] if isinstance(c, dict) and c.get("claim")]


def claim_list(row: Row, done: Done) -> str:
    return "\n".join(f"claim{k}: {claim}" for k, claim in enumerate(claim_texts(row, done), 1))


def per_claim(answer: Any, count: int, objects: bool = False) -> list[list[str]]:
    """A query answer {"claim1": [...], ...} as each claim's queries ("none" dropped); a string is one query, or with
    `objects` the period-separated objects ("man.motorcycle")."""
    answer = answer if isinstance(answer, dict) else {}
    out = []
    for k in range(1, count + 1):
        value = answer.get(f"claim{k}", [])
        items = value if isinstance(value, list) else str(value).split(".") if objects else [value]
        out.append([str(q).strip() for q in items if str(q).strip() and str(q).strip().lower() != "none"])
    return out


def queries(row: Row, done: Done) -> dict[str, list[list[str]]]:
    """Each tool's queries per claim, after EasyDetect's filter for image-to-text."""
    count = len(claim_texts(row, done))
    asked = done.outputs.get("queries") or []
    answers = [read_json(outputs[0]) if outputs else None for outputs in asked] + [None] * (3 - len(asked))
    asked_objects = read_json(done.first("objects")) if done.outputs.get("objects") else None
    objects = per_claim(asked_objects, count, objects=True)
    found = {"object": objects, **{name: per_claim(answer, count)
                                   for name, answer in zip(("attribute", "scene-text", "fact"), answers)}}
    if kind(row) == "image-to-text":
        for k, facts in enumerate(found["fact"]):
            if facts:
                found["object"][k], found["attribute"][k], found["scene-text"][k] = [], [], []
    return found


def unique(values: list[list[str]]) -> list[str]:
    return list(dict.fromkeys(v for vs in values for v in vs))


def _claims(row: Row, done: Done) -> list[str]:
    if row.get("segments"):
        return []
    return [with_system(CLAIM_GENERATE, text=row["response"])]


def _objects(row: Row, done: Done) -> list[str]:
    return [with_system(QUERY_GENERATE[kind(row)]["object"], claims=claim_list(row, done))]


def _queries(row: Row, done: Done) -> list[str]:
    prompts = QUERY_GENERATE[kind(row)]
    count = len(claim_texts(row, done))
    objects = ".".join(unique(per_claim(read_json(done.first("objects")), count, objects=True)))
    listed = claim_list(row, done)
    return [with_system(prompts["attribute"], objects=objects, claims=listed),
            with_system(prompts["scene-text"], claims=listed), with_system(prompts["fact"], claims=listed)]


def _detect(row: Row, done: Done) -> list[str]:
    objects = unique(queries(row, done)["object"])
    return [".".join(objects)] if objects else []


def _attribute(row: Row, done: Done) -> list[str]:
    asked = unique(queries(row, done)["attribute"])
    return ["".join(f"{k}.{question}\n" for k, question in enumerate(asked, 1))] if asked else []


def _ocr(row: Row, done: Done) -> list[str]:
    return ["word.number"] if any(queries(row, done)["scene-text"]) else []


def _search(row: Row, done: Done) -> list[str]:
    return [question for questions in queries(row, done)["fact"] for question in questions[:2]]


def evidence(done: Done, step: str) -> str:
    """A tool step's outputs as verify.py shows them; "none information" where it gave nothing."""
    outputs = [out[0] for out in done.outputs.get(step) or [] if out and out[0].strip()]
    if step == "detect":  # verify.py lists the detections, nothing when there are none
        return "".join(f"{line} \n" for out in outputs for line in out.splitlines())
    if step == "search":
        snippets = [line for out in outputs for line in out.splitlines() if line.strip()]
        return "".join(f"{k}.{snippet}\n" for k, snippet in enumerate(snippets, 1)) or NONE
    if step == "ocr":
        return "".join(f"{line}\n" for out in outputs for line in out.splitlines()) or NONE
    return outputs[0] if outputs else NONE


def _verify(row: Row, done: Done) -> list[str]:
    prompt = VERIFY[kind(row)]
    tools = VERIFY_INPUT.format(object=evidence(done, "detect"), text=evidence(done, "ocr"),
                                attribute=evidence(done, "attribute"), fact=evidence(done, "search"),
                                claims=claim_list(row, done))
    return ["\n\n".join((prompt["system"], prompt["user"], prompt["example1"], prompt["example2"])) + "\n" + tools]


@register_parser("unihd_verdicts")
def unihd_verdicts(record: dict[str, Any]) -> list[str | None] | None:
    """The verification's verdicts per claim, read as Self-Check's (`mhalubench_verdicts`); None (unparsed) when the
    verification sent nothing."""
    if not record["outputs"]:
        return None
    return verdicts(record["outputs"][0], **(record["metric_inputs"] or {}))


def record_prompt(row: Row) -> str:
    """The record's prompt: the text whose claims are judged."""
    return row["response"]


PROGRAM = Program(
    steps=(
        Step("claims", _claims),
        Step("objects", _objects),
        Step("queries", _queries),
        Step("detect", _detect, model="detector", media=True, generation=OCR_SETTINGS),
        Step("attribute", _attribute, model="attribute", media=True),
        Step("ocr", _ocr, model="ocr", media=True, generation=OCR_SETTINGS),
        Step("search", _search, model="search", generation=OCR_SETTINGS),
        Step("verify", _verify, media=True),
    ),
    helpers={"detector": None, "attribute": "target", "ocr": None, "search": None},
)

register_task(dataclasses.replace(
    detection_task("mhalubench_unihd", record_prompt, benchmark="mhalubench_official", config="all", source=SOURCE,
                   description="UniHD: claims checked with tools (detector, OCR, search), then judged"),
    program=PROGRAM, parser="unihd_verdicts"))
