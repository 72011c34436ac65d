"""The task registry and the prompts exactly as the papers give them."""
import dataclasses

import pytest

from hallubench.benchmarks import all_tasks, get_task, task_names
from hallubench.benchmarks import cchall as cchall_module

ROW = {"id": "x1", "question": "Is there a dog in the image?", "response1": "Yes, a dog.",
       "response2": "Ndiyo, mbwa.", "label": "Non-hallucination",
       "choice": "A. Non-hallucination\nB. Cross-modal, non-cross-lingual hallucination\n"
                 "C. Cross-lingual, non-cross-modal hallucination\nD. Cross-modal, cross-lingual hallucination",
       "dataset_source": "AMBER"}


def test_registry_discovers_every_task_module():
    """Each module of hallubench/benchmarks registers its own tasks (none names another's): every task is found,
    under its own name, and each names a registered parser and (when scored in one run) a registered metric."""
    from hallubench.registry import METRICS, PARSERS

    assert {"avhallubench_visual", "cchall", "cmm", "mhalubench", "sac3_prime"} <= set(task_names())  # the seeds
    assert task_names() == sorted(all_tasks())
    for name, task in all_tasks().items():
        assert task.name == name and task.parser in PARSERS and (task.metric is None or task.metric in METRICS), name


def test_lookup_is_exact_and_unknown_names_suggest_the_closest_and_the_listing():
    assert get_task("cchall").name == "cchall"
    for bad, closest in (("cchal", "cchall"), ("CCHALL", "cchall"), ("avhallubench", "avhallubench_audio"),
                         ("cmm ", "cmm"), ("zzz", None)):
        with pytest.raises(KeyError) as err:
            get_task(bad)
        message = str(err.value)
        assert repr(bad) in message and "listed by `hallubench tasks`" in message
        assert f"{closest!r}" in message.partition(";")[0] if closest else "did you mean" not in message


def test_tasks_are_frozen_data():
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_task("cmm").metric = "other"


def test_cmm_prompt_appends_the_paper_suffix_and_samples_at_0_2():
    task = get_task("cmm")
    assert task.prompt({"question": "Did you hear a dog barking?"}) == "Did you hear a dog barking? Answer with yes or no."
    assert task.generation.temperature == 0.2 and task.generation.do_sample
    assert (task.config, task.metric, task.parser) == ("all", "pa_hr", "yes_no")
    assert task.metric_args == {"mode": "official"}  # the paper's "begins with yes/no" rule
    row = {"sub_category": "overrely_visual_ignore_audio", "granularity": "event-level"}
    assert task.group(row) == ("overrely_visual_ignore_audio", "overrely_visual_ignore_audio / event-level")


@pytest.mark.parametrize("name, prompt", [
    ("avhallubench_visual", "Describe the video in one paragraph."),
    ("avhallubench_audio", "Describe the audio in one paragraph."),
    ("avhallubench_speech", "What does the man/woman say in the video?"),
])
def test_avhallubench_prompts_and_stochastic_samples(name, prompt):
    task = get_task(name)
    assert task.prompt({"id": "v"}) == prompt
    assert task.generation.temperature == 0.0
    assert (task.samples.temperature, task.samples.top_p) == (1.0, 0.9) and task.samples.n > 1
    assert task.metric is None and "crosscheck" in task.scored_by
    assert task.media.video == task.media.audio == "video"


# `get_prompt` of the CCHall README (github.com/BRZ911/CCHall, "Evaluation for reproduction on GPT-4o"),
# copied here character for character, independently of the task module.
AUTHORS_PROMPT = """You are a hallucination detection system tasked with categorizing hallucinations based on images , questions and answers in two different languages. Your job is to analyze the provided image, question, and both language answers to determine the type of hallucination, if any.

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

Output Format
**At the end of the analysis, provide a final, concise, and definitive answer in the following format:**
**Final Answer: [Option]. [Option Content].**"""


def test_cchall_direct_prompt_is_the_authors_text_exactly():
    text = get_task("cchall").prompt(ROW)
    assert text == AUTHORS_PROMPT.format(question=ROW["question"], answer1=ROW["response1"],
                                         answer2=ROW["response2"], choice=ROW["choice"])


def test_cchall_cot_prompt_is_figure_11_verbatim():
    cot = get_task("cchall_cot").prompt(ROW)
    assert cot.startswith("You are a **hallucination detection system** tasked with categorizing hallucinations")
    assert "\n\nHallucination Type Explanation\n\n1. **Non-hallucination**: Both the English" in cot
    assert ("\n\nTask :\n\nBased on the following information, identify the type of hallucination:\n\n"
            "Image: [The provided Image]\n\nQuestion: " + ROW["question"] + "\n\nAnswer1: " + ROW["response1"]) in cot
    assert cot.endswith("Options: " + ROW["choice"] + "\n\nLet's think step by step!\n\nOutput Format :\n\n"
                        "You MUST provide the reasoning steps and conclude with the final answer in the format: "
                        '"Option. Hallucination Type". For example: A. Hallucination Type')


def test_cchall_tasks_keep_the_models_default_decoding():
    # "All top-p and temperature parameters retain the default of MLLMs" (the paper, §4)
    for name in ("cchall", "cchall_cot"):
        assert get_task(name).generation.temperature is None and get_task(name).generation.model_default


@pytest.mark.parametrize("output, expected", [
    ("Answer2 adds a dog, Answer1 does not, so it is not a Cross-modal, cross-lingual hallucination.\n"
     "C. Cross-lingual, non-cross-modal hallucination", "Cross-lingual, non-cross-modal hallucination"),
    ("Step 1: B. Cross-modal, non-cross-lingual hallucination fits?\nNo.\n\n**A. Non-hallucination**\n",
     "Non-hallucination"),  # the concluding line, not an option discussed before it
    ("Both mention a cat the image lacks. Final Answer: B", "Cross-modal, non-cross-lingual hallucination"),
    ("Both mention a cat.\nB. Non-hallucination", None),  # letter and type disagree
    ("Both answers mention a cat; it is Non-hallucination or Cross-modal, cross-lingual hallucination.", None),
])
def test_cchall_cot_answers_are_read_from_the_concluding_line(output, expected):
    from hallubench.benchmarks import get_parser

    task = get_task("cchall_cot")
    assert get_parser(task.parser)(output, **task.metric_inputs(ROW)) == expected


def test_cchall_options_are_read_from_choice_in_letter_order():
    options = cchall_module.metric_inputs(ROW)["options"]
    assert options[0] == "Non-hallucination" and options[3] == "Cross-modal, cross-lingual hallucination"
    assert cchall_module.metric_inputs({**ROW, "choice": "Non-hallucination or not"}) == {"options": None}
