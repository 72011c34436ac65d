"""MHaluBench from its official release, all parts (Chen et al. 2024, UniHD): Self-Check hallucination detection.

The issue-13 Self-Check tasks of benchmarks/mhalubench.py (same prompts, parser, `mhalubench` metric, generation
settings and left-out demonstrations; read that module's docstring for their sources) on the parts of the official
release (builders/mhalubench_official.py): image captioning and VQA, 0-shot and 2-shot, and text-to-image, 0-shot.
`mhalubench_official_selfcheck` runs on every item (config `all`), each with its part's prompt, and reports each
part as a group (`task_type`), as UniHD's Table 2 reports image-to-text and text-to-image.

Text-to-image: the annotated text is the user's prompt, whose claims the generated image may contradict. The
prompt follows UniHD's text-to-image verification prompt (paper Table 8, EasyDetect `pipeline/prompts/verify.yaml`
`text-to-image`, commit ad519a2): the judged text is "claims from human prompts", a claim is a hallucination when
the image conflicts with it in object, attribute, scene text or fact (does a named real thing look as it really
does), the same answer format; the tool evidence is left out as in the image-to-text Self-Check prompt.
Text-to-image has no 2-shot task: the paper's demonstrations are not published, and the two we use for
image-to-text (released captioning items) show responses, not prompts.
"""
from hallubench.benchmarks.mhalubench import ANSWER_FORMAT, claims_text, claims, detection_task, selfcheck_2shot_prompt, selfcheck_prompt
from hallubench.benchmarks.task import Row
from hallubench.registry import register_task

BENCHMARK = "mhalubench_official"
T2I_INSTRUCTIONS = """You are given an image that a text-to-image model generated from a user's prompt, and that prompt split into numbered claims. Judge each claim against the image: does the image conflict with it?

Check four aspects of every claim:
- Object: the objects it asks for are in the image, as many as it says.
- Attribute: the colours, positions, actions and other properties it gives the objects match the image.
- Scene text: any text it asks to be written in the image matches the text there.
- Fact: any real thing it names (a landmark, a person, a product) looks as it really does.
A claim the image conflicts with in any aspect is a "hallucination"; otherwise it is a "non-hallucination".

""" + ANSWER_FORMAT
SOURCE = ("Chen et al. 2024, arXiv:2402.03190 §5.1 and Table 2 (Self-Check), Tables 7-8; github.com/zjunlp/EasyDetect "
          "pipeline/prompts/verify.yaml @ ad519a2; huggingface.co/datasets/openkg/MHaluBench")


def text_to_image_prompt(row: Row) -> str:
    """The 0-shot Self-Check prompt for a generated image: instructions, the user's prompt and its numbered claims."""
    return f"{T2I_INSTRUCTIONS}\n\n{claims_text(row['response'], [c['claim'] for c in claims(row)], 'Prompt')}\n\nAnswer:"


def any_part_prompt(row: Row) -> str:
    """The 0-shot prompt of the row's part."""
    return text_to_image_prompt(row) if row["task_type"] == "text-to-image" else selfcheck_prompt(row)


def _task(name: str, config: str, prompt, num_fewshot: int = 0):
    return detection_task(f"{BENCHMARK}_{name}", prompt, num_fewshot, benchmark=BENCHMARK, config=config, source=SOURCE)


register_task(_task("selfcheck", "all", any_part_prompt))
for part in ("image_caption", "vqa"):
    register_task(_task(f"{part}_selfcheck", part, selfcheck_prompt))
    register_task(_task(f"{part}_selfcheck_2shot", part, selfcheck_2shot_prompt, num_fewshot=2))
register_task(_task("text_to_image_selfcheck", "text_to_image", text_to_image_prompt))
