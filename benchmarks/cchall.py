"""CCHall (Zhang et al. 2025, ACL): classify the hallucination type of a two-language answer pair.

Direct prompt: quoted verbatim from the authors' reproduction code, `get_prompt` in the README of
github.com/BRZ911/CCHall (commit 3637fced, "Evaluation for reproduction on GPT-4o"): the four type
definitions, the question, both answers and the options, ending in the "Final Answer: [Option].
[Option Content]." instruction. The authors used `max_tokens=256` and greedy API defaults.

Step-by-step (CoT) prompt (`cchall_cot`): the paper's Figure 11 (Zhang et al. 2025, arXiv:2505.19108),
the same task text with the trigger "Let's think step by step!" before the output format, and the answer
asked as "[Option]. [Hallucination Type]" behind the Direct prompt's "Final Answer:" (so the same option
parser reads both). The repository publishes only the Direct prompt; the trigger and answer format are
as the paper's figure gives them, the figure's remaining wording could not be read from the sources we
reached, so the rest is the authors' Direct text. It allows a longer answer for the reasoning.
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
COT_TRIGGER = "\nLet's think step by step!\n"
COT_OUTPUT_FORMAT = OUTPUT_FORMAT.replace("[Option Content]", "[Hallucination Type]")
_OPTION = re.compile(r"(?m)^\s*([A-D])[.)]\s*(.+?)\s*$")


def task_text(row: Row) -> str:
    """The authors' task text for one row: the type definitions, question, both answers and options (the Direct
    prompt without its output format)."""
    return HEAD.format(question=row["question"], answer1=row["response1"], answer2=row["response2"],
                       choice=row["choice"])


def direct_prompt(row: Row) -> str:
    """The authors' Direct prompt for one row."""
    return task_text(row) + OUTPUT_FORMAT


def cot_prompt(row: Row) -> str:
    """The paper's CoT prompt (Figure 11): the task, "Let's think step by step!", then the answer format."""
    return task_text(row) + COT_TRIGGER + COT_OUTPUT_FORMAT


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


SOURCE = "Zhang et al. 2025, ACL, arXiv:2505.19108; github.com/BRZ911/CCHall README get_prompt"


def cchall_task(name: str, prompt, max_new_tokens: int, version: int, demo: bool = False, *,
                parser: str = "cchall_option", program: Program | None = None, source: str = SOURCE) -> Task:
    """A CCHall task: `prompt(row)` (a multi-step task's record prompt), the image, the `cchall` metric."""
    return Task(
        name=name,
        benchmark="cchall",
        config="all",
        prompt=prompt,
        media=MediaSpec(image="image"),
        generation=GenerationSettings(max_new_tokens=max_new_tokens),
        parser=parser,
        metric="cchall",
        reference=reference,
        group=lambda row: row["dataset_source"],
        metric_inputs=metric_inputs,
        higher_is_better={"accuracy": True, "macro_f1": True},
        version=version,
        demo=demo,
        source=source,
        program=program,
    )


register_task(cchall_task("cchall", direct_prompt, 256, version=1, demo=True))
register_task(cchall_task("cchall_cot", cot_prompt, 1024, version=2))  # 2: the paper's Figure 11 prompt
