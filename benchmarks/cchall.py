"""CCHall (Zhang et al. 2025, ACL): classify the hallucination type of a two-language answer pair.

Direct prompt: quoted verbatim from the authors' reproduction code, `get_prompt` in the README of
github.com/BRZ911/CCHall (commit 3637fced, "Evaluation for reproduction on GPT-4o"): the four type
definitions, the question, both answers and the options, ending in the "Final Answer: [Option].
[Option Content]." instruction. The authors used `max_tokens=256` and otherwise the API's defaults (no
temperature sent).

Step-by-step (CoT) prompt (`cchall_cot`): the paper's Figure 11 (Zhang et al. 2025, arXiv:2505.19108, Appendix
A.4), verbatim: the intention description, the "Hallucination Type Explanation" (numbered, bold as printed),
"Task :" with the image, question, both answers and options, "Let's think step by step!", and "Output Format :"
asking for the reasoning and the final answer as "Option. Hallucination Type". The figure's label "Intention
Description:" names a component (A.4 lists the four), as the authors' Direct prompt starts without it, so it is not
sent; "[The provided Image]" stays as printed, the image itself goes with the prompt. Its answer is read from the
last non-empty line (the format's "conclude with"), or after a "Final Answer:" if the model writes one
(`cchall_conclusion`). Decoding: the paper's "All top-p and temperature parameters retain the default of MLLMs", so
`cchall` and `cchall_cot` send no temperature or top-p (GenerationSettings(temperature=None)).
Scored by the `cchall` metric (accuracy / macro-F1) with a per-`dataset_source` breakdown. The paper's other
strategies (SRO, VDGD, HalluciMAD) are multi-step tasks built on this module: benchmarks/cchall_strategies.py.
"""
import re

from hallubench.benchmarks.steps import Program
from hallubench.benchmarks.task import MediaSpec, Row, Task, one_of
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_parser, register_task

HEAD = """You are a hallucination detection system tasked with categorizing hallucinations based on images , questions and answers in two different languages. Your job is to analyze the provided image, question, and both language answers to determine the type of hallucination, if any.

Explanation of Hallucination Types
Non-hallucination: Both the English and the other language answers are consistent with the content of the image, and they correctly describe what is present in the image.
Cross-modal, non-cross-lingual hallucination: Both the English and the other language answers are inconsistent with the image content, specifically regarding the existence of objects. The key point is that the both languages make the same error, mentioning the existence of the same object(s) that do not appear in the image.
Cross-lingual, non-cross-modal hallucination: The English answer is consistent with the image, but the answer in the other language contains an error regarding the existence of objects.
Cross-modal, cross-lingual hallucination: Both the English and the other language answers are inconsistent with the image, and they differ in the objects they describe as being present. In other words, both languages make errors, but they reference different nonexistent objects.

Task
Based on the following information, identify the type of hallucination:
Image: [The provided image]
Question: {question}
Answer1: {answer1}
Answer2: {answer2}
Options: {choice}
"""
OUTPUT_FORMAT = """
Output Format
**At the end of the analysis, provide a final, concise, and definitive answer in the following format:**
**Final Answer: [Option]. [Option Content].**"""
FIGURE11 = """You are a **hallucination detection system** tasked with categorizing hallucinations based on images , questions and answers in two different languages. Your job is to analyze the provided image, question, and both language answers to determine the type of hallucination, if any.

Hallucination Type Explanation

1. **Non-hallucination**: Both the English and the other language answers are consistent with the content of the image, and they correctly describe what is present in the image.

2. **Cross-modal, non-cross-lingual hallucination**: Both the English and the other language answers are inconsistent with the image content, specifically regarding the existence of objects. The key point is that the both languages make the same error, mentioning the existence of the same object(s) that do not appear in the image.

3. **Cross-lingual, non-cross-modal hallucination**: The English answer is consistent with the image, but the answer in the other language contains an error regarding the existence of objects.

4. **Cross-modal, cross-lingual hallucination**: Both the English and the other language answers are inconsistent with the image, and they differ in the objects they describe as being present. In other words, both languages make errors, but they reference different nonexistent objects.

Task :

Based on the following information, identify the type of hallucination:

Image: [The provided Image]

Question: {question}

Answer1: {answer1}

Answer2: {answer2}

Options: {choice}

Let's think step by step!

Output Format :

You MUST provide the reasoning steps and conclude with the final answer in the format: "Option. Hallucination Type". For example: A. Hallucination Type"""
_OPTION = re.compile(r"(?m)^\s*([A-D])[.)]\s*(.+?)\s*$")
_FINAL_ANSWER = re.compile(r"final answer", re.IGNORECASE)


def task_text(row: Row) -> str:
    """The authors' task text for one row: the type definitions, question, both answers and options (the Direct
    prompt without its output format)."""
    return HEAD.format(question=row["question"], answer1=row["response1"], answer2=row["response2"],
                       choice=row["choice"])


def direct_prompt(row: Row) -> str:
    """The authors' Direct prompt for one row."""
    return task_text(row) + OUTPUT_FORMAT


def cot_prompt(row: Row) -> str:
    """The paper's CoT prompt (Figure 11) for one row."""
    return FIGURE11.format(question=row["question"], answer1=row["response1"], answer2=row["response2"],
                           choice=row["choice"])


def reference(row: Row) -> str:
    """The row's hallucination type, one of the four the metric scores (imported here: the metric imports evaluate)."""
    from hallubench.metrics.cchall.cchall import LABELS

    return one_of(row, "label", LABELS)


def metric_inputs(row: Row) -> dict:
    """The four type names in letter order, read from `choice` ("A. <type>" per line), so "Final
    Answer: B" can be scored; without four lettered lines only the type text is read."""
    found = dict(_OPTION.findall(row["choice"]))
    return {"options": [found[letter] for letter in "ABCD"] if sorted(found) == list("ABCD") else None}


@register_parser("cchall_option")
def cchall_option(text: str, options: list[str] | None = None) -> str | None:
    """The metric's own parse (`parse_cchall`), so the stored answer is the one it scores (imported on first
    use: the metric module imports evaluate)."""
    from hallubench.metrics.cchall.cchall import parse_cchall

    return parse_cchall(text, options)


@register_parser("cchall_conclusion")
def cchall_conclusion(text: str, options: list[str] | None = None) -> str | None:
    """Figure 11's answer, "Option. Hallucination Type" concluding the reasoning: what follows a "Final Answer:"
    when the model writes one, else its last non-empty line (the reasoning before it names other types)."""
    from hallubench.metrics.cchall.cchall import parse_cchall

    if _FINAL_ANSWER.search(text):
        return parse_cchall(text, options)
    lines = [line for line in text.splitlines() if line.strip()]
    return parse_cchall(lines[-1], options) if lines else None


SOURCE = "Zhang et al. 2025, ACL, arXiv:2505.19108; github.com/BRZ911/CCHall README get_prompt"


def cchall_task(name: str, prompt, max_new_tokens: int, version: int, demo: bool = False, *,
                parser: str = "cchall_option", program: Program | None = None, source: str = SOURCE,
                temperature: float | None = 0.0, description: str) -> Task:
    """A CCHall task: `prompt(row)` (a multi-step task's record prompt), the image, the `cchall` metric."""
    return Task(
        name=name,
        description=description,
        benchmark="cchall",
        config="all",
        prompt=prompt,
        media=MediaSpec(image="image"),
        generation=GenerationSettings(max_new_tokens=max_new_tokens, temperature=temperature),
        parser=parser,
        metric="cchall",
        reference=reference,
        group=lambda row: row["dataset_source"],
        metric_inputs=metric_inputs,
        higher_is_better={"accuracy": True, "macro_f1": True, "weighted_f1": True, "accuracy_avg": True,
                          "macro_f1_avg": True},
        version=version,
        demo=demo,
        source=source,
        program=program,
    )


# the paper keeps each model's default decoding (temperature=None): version 2 of cchall, 3 of cchall_cot (Figure 11)
register_task(cchall_task("cchall", direct_prompt, 256, version=2, demo=True, temperature=None,
                          description="Which hallucination type does a two-language answer pair show? Asked directly"))
register_task(cchall_task("cchall_cot", cot_prompt, 1024, version=3, parser="cchall_conclusion", temperature=None,
                          description="CCHall asked step by step (chain of thought, the paper's Figure 11)"))
