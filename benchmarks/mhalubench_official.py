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

HalDet-LLaVA (`mhalubench_official_haldet`, every part, each reported as a group): the authors' detector, LLaVA-1.5
fine-tuned on MHaluBench_train.json (zjunlp/HalDet-llava-7b / -13b), run as EasyDetect's HalDet-LLaVA/inference.py
runs it (commit ad519a2): its query verbatim, the instruction the model was trained on, then "Here is the claim
list: claim1: ... " and "Supplementary information:" with the three tool results (object detection, scene text,
external knowledge); the tools of UniHD are not implemented, so all three say "none information", the value
inference.py uses for a tool with nothing to report. Several claims are listed one per line in the same form (the
example has one). Sampling as inference.py's defaults: temperature 0.8, up to 2,048 new tokens; its conversation
template (llava_v1) is the chat template of a LLaVA-1.5 checkpoint in transformers' format, which the hf adapter
applies. Its answer is the dictionary list of the training data, [{"claim1": "hallucination", "reason": ...}],
read by the same parser; an unreadable one is counted as unparsed. The released weights are in the original LLaVA
format: convert them with transformers' `convert_llava_weights_to_hf.py` to run them with `--model hf`.
"""
from hallubench.benchmarks.mhalubench import ANSWER_FORMAT, claims_text, claims, detection_task, selfcheck_2shot_prompt, selfcheck_prompt
from hallubench.benchmarks.task import Row
from hallubench.models.protocol import GenerationSettings
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


# EasyDetect HalDet-LLaVA/inference.py @ ad519a2, the query's instruction verbatim (its spacing included).
HALDET_INSTRUCTION = ("Given an image, a list of claims from Multimodal Large Language Models and some supplementary "
                      "information by external tools, you are required to judge whether each claim in the list conflicts "
                      "with the image, following these rules: \n1. You must carefully judge from four aspects, including "
                      "the object, attributes, scene text and fact.        \n2. You must carefully utilize supplementary "
                      "information.  \n3. You must carefully judge whether the visual information in the image conflicts "
                      "with each claim. If there is a conflict, the result for that claim is labeled as \"hallucination\"; "
                      "otherwise, it is labeled as \"non-hallucination\".   \n4. Finally, You MUST only respond in a "
                      "dictionary format. DO NOT RESPOND WITH ANYTHING ELSE.\n")
HALDET_NO_TOOLS = ("Supplementary information:\nHere is the object detection expert model's result: none information \n"
                   "Here is the scene text recognition expert model's result: none information \n"
                   "Here is the external knowledge: none information")


def haldet_prompt(row: Row) -> str:
    """HalDet-LLaVA's query: the trained instruction, the numbered claims, the (empty) tool results."""
    listed = "".join(f"claim{k}: {c['claim']} \n" for k, c in enumerate(claims(row), 1))
    return f"{HALDET_INSTRUCTION}Here is the claim list: {listed}{HALDET_NO_TOOLS}"


def text_to_image_prompt(row: Row) -> str:
    """The 0-shot Self-Check prompt for a generated image: instructions, the user's prompt and its numbered claims."""
    return f"{T2I_INSTRUCTIONS}\n\n{claims_text(row['response'], [c['claim'] for c in claims(row)], 'Prompt')}\n\nAnswer:"


def any_part_prompt(row: Row) -> str:
    """The 0-shot prompt of the row's part."""
    return text_to_image_prompt(row) if row["task_type"] == "text-to-image" else selfcheck_prompt(row)


def _task(name: str, config: str, prompt, num_fewshot: int = 0, *, description: str):
    return detection_task(f"{BENCHMARK}_{name}", prompt, num_fewshot, benchmark=BENCHMARK, config=config, source=SOURCE,
                          description=description)


PART_NAMES = {"image_caption": "image captions", "vqa": "visual question answers"}


register_task(_task("selfcheck", "all", any_part_prompt,
                    description="Self-Check on every part of the official MHaluBench: each claim hallucinated or not"))
for part in ("image_caption", "vqa"):
    register_task(_task(f"{part}_selfcheck", part, selfcheck_prompt,
                        description=f"Self-Check on the official MHaluBench's {PART_NAMES[part]}"))
    register_task(_task(f"{part}_selfcheck_2shot", part, selfcheck_2shot_prompt, num_fewshot=2,
                        description=f"Self-Check on the official MHaluBench's {PART_NAMES[part]}, two examples first"))
register_task(_task("text_to_image_selfcheck", "text_to_image", text_to_image_prompt,
                    description="Self-Check on generated images: does the image show what its prompt's claims say?"))
register_task(detection_task(f"{BENCHMARK}_haldet", haldet_prompt, benchmark=BENCHMARK, config="all",
                             source="github.com/zjunlp/EasyDetect HalDet-LLaVA/inference.py and README.md @ ad519a2; "
                                    "huggingface.co/zjunlp/HalDet-llava-7b",
                             generation=GenerationSettings(max_new_tokens=2048, temperature=0.8),
                             description="The official MHaluBench with HalDet-LLaVA's detection prompt (for zjunlp/HalDet-llava-7b)"))
