"""UniHD on CCHall (`cchall_unihd`) as the CCHall paper adapted it (Zhang et al. 2025, arXiv:2505.19108, Appendix B.3,
Table 2's UniHD row with Gemini-1.5-Flash): the answers made declarative English statements, claim extraction, object
and fact queries, Grounding DINO and Serper search, then one judgment that ends in CCHall's answer format, read by
`cchall_final_answer` and scored by the `cchall` metric like the other strategies (benchmarks/cchall_strategies.py).

Steps (journalled like every multi-step task):
1. `statements` (target): each answer with the question as one declarative English statement (B.3's "Input
   Adaptation": "What animal is in the box?" and "A bear" become "The animal in the box is a bear"; a caption stays
   itself; non-English answers are translated). The paper prints no prompt for it: STATEMENT is ours.
2. `claims` (target): UniHD's claim extraction (EasyDetect claim_generate.yaml, verbatim) of each statement.
3. `objects`, `facts` (target): UniHD's object and fact query prompts (query_generate.yaml `image-to-text`, verbatim),
   per answer: B.3 generates "queries focused on object existence and commonsense verification", so the attribute and
   scene-text queries are not asked. Claims with a fact question get no object query (query_generate.py `filter`).
4. `detect` (role `detector`): the objects of both answers' claims in one Grounding DINO call.
5. `search` (role `search`): each fact claim's first two questions.
6. `answer` (target): CCHall's task text (the authors' Direct prompt, benchmarks/cchall.py) with the tool evidence in
   verify.py's wording and each answer's claims, asked to judge each claim against the image and the evidence and
   then answer in the Direct prompt's format (B.3: "Evidence collected from the tools is integrated with the original
   image and its corresponding claims into a comprehensive prompt"; its wording is not published: JUDGE is ours).
Generation: greedy, 1,024 new tokens for the steps that reason (as the other strategies), the tools deterministic.
"""
from __future__ import annotations

from hallubench.benchmarks.cchall import OUTPUT_FORMAT, SOURCE, cchall_task, direct_prompt, task_text
from hallubench.benchmarks.steps import Done, Program, Step
from hallubench.benchmarks.task import Row
from hallubench.benchmarks.unihd import OCR_SETTINGS, evidence, per_claim, read_json, unique, with_system
from hallubench.benchmarks.unihd_prompts import CLAIM_GENERATE, QUERY_GENERATE
from hallubench.registry import register_task

REASONING = 1024
STATEMENT = """Rewrite the answer to the question about an image as one declarative sentence in English that states what the answer says (translate it if it is in another language). For example, the question "What animal is in the box?" and the answer "A bear" become "The animal in the box is a bear". If the answer is already a description of the image, translate it to English if needed and keep it otherwise. Reply with the sentence only.

Question: {question}
Answer: {answer}"""
JUDGE = """Here is the object detection expert model's result:
{object}
Here is the external knowledge:
{fact}
Here are the claims of Answer1:
{claims1}
Here are the claims of Answer2:
{claims2}

Using the image, the detected objects (boxes as [x1, y1, x2, y2] from 0 to 1) and the external knowledge, judge whether each claim of each answer conflicts with the image, then identify the type of hallucination."""
PROMPTS = QUERY_GENERATE["image-to-text"]


def answers(row: Row) -> tuple[str, str]:
    return row["response1"], row["response2"]


def claims_of(done: Done) -> list[list[str]]:
    """Each answer's extracted claims."""
    out = []
    for outputs in (done.outputs.get("claims") or [])[:2]:
        segments = read_json(outputs[0]) if outputs else None
        out.append([str(c["claim"]) for seg in segments or [] if isinstance(seg, dict)
                    for c in seg.get("claims") or [] if isinstance(c, dict) and c.get("claim")])
    return out + [[]] * (2 - len(out))


def listed(claims: list[str]) -> str:
    return "\n".join(f"claim{k}: {claim}" for k, claim in enumerate(claims, 1))


def tool_queries(done: Done, step: str) -> list[list[list[str]]]:
    """Per answer, each claim's queries of the `objects` or `facts` step."""
    counts = [len(claims) for claims in claims_of(done)]
    outputs = (done.outputs.get(step) or []) + [[]] * 2
    return [per_claim(read_json(out[0]) if out else None, count, objects=step == "objects")
            for out, count in zip(outputs, counts)]


def _statements(row: Row, done: Done) -> list[str]:
    return [STATEMENT.format(question=row["question"], answer=answer) for answer in answers(row)]


def _claims(row: Row, done: Done) -> list[str]:
    return [with_system(CLAIM_GENERATE, text=outputs[0]) for outputs in done.outputs["statements"]]


def _objects(row: Row, done: Done) -> list[str]:
    return [with_system(PROMPTS["object"], claims=listed(claims)) for claims in claims_of(done)]


def _facts(row: Row, done: Done) -> list[str]:
    return [with_system(PROMPTS["fact"], claims=listed(claims)) for claims in claims_of(done)]


def _detect(row: Row, done: Done) -> list[str]:
    answers_queries = zip(tool_queries(done, "objects"), tool_queries(done, "facts"))
    objects = [objs if not facts else [] for per_answer in answers_queries for objs, facts in zip(*per_answer)]
    found = unique(objects)
    return [".".join(found)] if found else []


def _search(row: Row, done: Done) -> list[str]:
    return [question for per_answer in tool_queries(done, "facts") for questions in per_answer
            for question in questions[:2]]


def _answer(row: Row, done: Done) -> list[str]:
    claims1, claims2 = (listed(claims) or "none" for claims in claims_of(done))
    tools = JUDGE.format(object=evidence(done, "detect") or "none information", fact=evidence(done, "search"),
                         claims1=claims1, claims2=claims2)
    return [f"{task_text(row)}\n{tools}\n{OUTPUT_FORMAT}"]


PROGRAM = Program(
    steps=(
        Step("statements", _statements),
        Step("claims", _claims),
        Step("objects", _objects),
        Step("facts", _facts),
        Step("detect", _detect, model="detector", media=True, generation=OCR_SETTINGS),
        Step("search", _search, model="search", generation=OCR_SETTINGS),
        Step("answer", _answer, media=True),
    ),
    helpers={"detector": None, "search": None},
)

register_task(cchall_task("cchall_unihd", direct_prompt, REASONING, version=1, parser="cchall_final_answer",
                          program=PROGRAM,
                          source=SOURCE + "; UniHD: Chen et al. 2024, arXiv:2402.03190, github.com/zjunlp/EasyDetect "
                                          "pipeline/prompts @ ad519a2; adapted as CCHall's Appendix B.3",
                          description="CCHall through UniHD's tools: claims checked by detection and search"))
