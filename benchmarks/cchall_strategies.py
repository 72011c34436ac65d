"""CCHall's other strategies (Zhang et al. 2025, ACL, arXiv:2505.19108): SRO, VDGD and HalluciMAD, each a multi-step
task (benchmarks/steps.py) over the item's image whose last step ends in the Direct prompt's output format, "Final
Answer: [Option]. [Option Content].", read by the same option parser and scored like `cchall` (accuracy / macro-F1
by `dataset_source`; an answer without a readable option is counted unparsed and scored wrong).

What the sources give. The CCHall paper compares Direct, CoT, SRO, VDGD and HalluciMAD; of its text we could read
the title page and abstract only, not its section or figures on these three baselines, and the authors' repository
(github.com/BRZ911/CCHall @ 7ccb957) publishes the Direct prompt alone. So each strategy follows its own paper and
its authors' code, applied to CCHall's task text (`cchall.task_text`: the Direct prompt without its output format):

- `cchall_sro`, Self-Reflection-Only: the single-model ablation of HalluciMAD (Lin et al. 2024, "Interpreting and
  Mitigating Hallucination in MLLMs through Multi-agent Debate", arXiv:2407.20505; github.com/LZzz2000/HalluciMAD @
  5a0313d `code/sro_eval_pope_gemini.py`, "# Self-Reflection-Only (SRO) approach"). Its reflection questions ask
  about the questioned object: "What color is this ##object## in the picture?", "Where does this ##object## appear in
  the image? Is it in the top-left, top-right, bottom-left, bottom-right, or middle area?", "Is there anything
  beside this ##object##? If so, what is it?", then "After you have answered the previous questions satisfactorily,
  please proceed to consider the following ones:" "Are you sure it is a ##object##? If not, what might it be?".
  Chosen: POPE names one object, a CCHall item's answers name several, so the questions are asked "about each object
  that Answer1 or Answer2 says is in the image"; the authors append them to the question in one prompt, here they
  are a second turn after the model's Direct answer (step `answer`, then `reflect`: one conversation, the image
  with its first turn), so the reflection sees the first answer; one reflection, ending in the output format.
- `cchall_vdgd`, Visual Description Grounded Decoding (Ghosh et al. 2024, arXiv:2405.15683; github.com/Sreyan88/VDGD
  @ 7341048 `LLaVA-Align/experiments/eval/sampling/generate_desc_logits.py` `desc_prompt`, verbatim): step
  `describe` asks for a detailed description of the image with the authors' prompt, its {inst} being the task text;
  step `answer` sends the Direct prompt with the description before it ("we first describe the image and add it as
  a prefix to the instruction", the paper's abstract). Chosen: the prefix is "Image description: <text>" and a blank
  line (the authors' later `vdgd.py` @ f937244 writes "The input image is described as follows: {desc} {question}").
  VDGD's second half, decoding that prefers candidate tokens of low KL divergence to the description's token
  distributions, needs the model's logits at each step: `--task-args decoding=kl_guided` decodes the answer so
  (models/kl_guided.py, after the authors' `vdgd.py`: nucleus candidates, each scored by its least KL to the
  description's distributions; the hf adapter only); the default `decoding=greedy` decodes it greedily, the variant
  for API models (CCHall's GPT-4o and Gemini expose no logits at each step). `--task-args description_tokens`
  (1024, the authors' max_new_tokens).
- `cchall_hallucimad`, multi-agent debate (Lin et al. 2024; `code/multi_eval_pope_gemini.py`, prompts from
  `code/config-prompt.json`): two debaters, affirmative and negative, and a judge, all the same model at
  temperature 0, `max_round` 3. Round 1: the affirmative answers (`affirmative`), then the negative, told "The other
  debater's answer is: ..." (`negative`). While their options differ, a further round (`round_2`, `round_3`, ...)
  asks each debater, with its previous answer and the other's ("Your previous answer is: ... But the other
  debater's answer is: ..."), to reflect and answer again; the debate ends when both give the same option (the
  authors' "consensus") or after `rounds`. The judge (`judge`; "You are judge. ...") decides between the debaters'
  last answers. Chosen: the debate topic is the task text; the debater and judge prompts are the authors' with the
  POPE object questions ("Please answer Yes or No.") asked as "which type of hallucination is it? Please answer with
  one of the options.", the judge shown each debater's answer where the authors show the object each believes in
  and the reason, and the output format appended; their
  object probes (colour, position, neighbours of the one POPE object) are SRO's questions about each object the
  answers name; debaters see each other's whole answers; the judge also answers when the debaters agree (the authors
  then take the common answer: a task's answer is one step's output, so the judge always gives it, seeing the same
  option twice); `--task-args rounds` (3, counting round 1; 1 to 5), and `--helper judge ARGS` gives the judge
  another model.

Generation: greedy throughout; the Direct-format answers of SRO's and VDGD's `answer` steps get the authors' 256 new
tokens, reflections, debate turns and the judge 1024 (they reason before the final answer, as `cchall_cot`).
"""
from __future__ import annotations

from typing import Any, Mapping

from hallubench.benchmarks.cchall import OUTPUT_FORMAT, SOURCE, cchall_option, cchall_task, direct_prompt, \
    metric_inputs, task_text
from hallubench.benchmarks.steps import Done, Program, Prompt, Step
from hallubench.benchmarks.task import Row
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_parser, register_task

DIRECT = GenerationSettings(max_new_tokens=256)
FORMAT = "\n" + OUTPUT_FORMAT  # after a question, as after the Direct prompt's options: a blank line first
REASONING = 1024

# SRO's reflection questions (code/sro_eval_pope_gemini.py), asked of each object the two answers name.
REFLECTION = """Now please answer the following questions one by one, about each object that Answer1 or Answer2 says is in the image:
Question1: What color is this object in the picture?
Question2: Where does this object appear in the image? Is it in the top-left, top-right, bottom-left, bottom-right, or middle area?
Question3: Is there anything beside this object? If so, what is it?
After you have answered the previous questions satisfactorily, please proceed to consider the following ones:
Question4: Are you sure it is this object? If not, what might it be?"""

# VDGD's description prompt (generate_desc_logits.py `desc_prompt`), verbatim.
DESCRIBE = ("I have been given an image to complete the task described as: {inst}.\n\nTo help me complete the task, "
            "describe the given image in detail. In case of real-world scenes, please include all foreground and "
            "background objects in the description, their properties (like color, shape, etc.), their relations with "
            "other objects, their count, and all other components in the image. In case of non-real-world scenes, "
            "like charts, graphs, tables, etc., please describe the table, mention all numbers (if any), mention the "
            "written text, and all other details.")
DESCRIPTION_PREFIX = "Image description: {description}\n\n"
VDGD_DECODINGS = ("greedy", "kl_guided")  # the answer step's rule: plain greedy (any adapter) or VDGD's (hf)

# HalluciMAD's prompts (config-prompt.json): player_meta_prompt verbatim, the others with the task's question.
DEBATER = ("You are a debater. Hello and welcome to the visual question-answering competition, which will be "
           "conducted in a debate format. You can agree or disagree with others' viewpoints, as our objective is to "
           "find the correct answer. The criteria for a good answer are as follows:\n"
           "1. Ensure that your output aligns with the content in the image.\n"
           "2. Only output content that is visible in the image.\n"
           "3. Distinguishing the nuances between synonyms is crucial. For example, if the image only shows a "
           "'plate' and you're asked if there's a 'bowl', the answer should be 'no'. Similarly, distinguishing "
           "between 'motorcycle' and 'bicycle', or 'car' and 'bus', among others, is also essential.\n"
           "The topic of the visual question-answering debate competition is: {topic}\n"
           "Please do not repeat the question.\n")
AFFIRMATIVE = ("Now please answer the following questions one by one:\n"
               "Question1: Which type of hallucination is it? Please answer with one of the options.\n"
               "Question2: Why?")
NEGATIVE = ("The other debater's answer is: {other}\n"
            "Now please answer the following questions one by one:\n"
            "Question1: What do you think, which type of hallucination is it? Please answer with one of the options.\n"
            "Question2: Why?")
REBUTTAL = "Your previous answer is: {own}\nBut the other debater's answer is: {other}\n"
JUDGE = ("You are judge. There will be two debaters involved in a visual question-answering debate competition. They "
         "will present their answers and discuss their perspectives on the following topic: {topic}\n"
         "You will assess the answers and decide which one is correct.\n"
         "One of the debaters' answer is: {first}\n"
         "Another debater's answer is: {second}\n"
         "Now please answer the following questions one by one:\n"
         "Question1: Which side do you favor? Please answer with one of the options.\n"
         "Question2: Why?")
MAX_ROUNDS = 5


@register_parser("cchall_final_answer")
def final_answer(record: Mapping[str, Any]) -> str | None:
    """The option of a strategy's final answer (the record's `outputs`), read as `cchall` reads it; None (counted
    unparsed) when the answer step sent nothing."""
    if not record["outputs"]:
        return None
    return cchall_option(record["outputs"][0], **(record["metric_inputs"] or {}))


def _sro() -> Program:
    def reflect(row: Row, done: Done) -> list[Prompt]:
        return [Prompt(REFLECTION + FORMAT, history=((direct_prompt(row), done.first("answer")),))]

    return Program(steps=(
        Step("answer", lambda row, done: [direct_prompt(row)], generation=DIRECT, media=True),
        Step("reflect", reflect, media=True),
    ))


def _vdgd_decoding(args: Mapping[str, Any]) -> GenerationSettings:
    """The answer's settings (greedy, whichever rule picks the token); ValueError for an unknown `decoding`."""
    if args["decoding"] not in VDGD_DECODINGS:
        raise ValueError(f"decoding must be one of {', '.join(VDGD_DECODINGS)}; got {args['decoding']!r}")
    return DIRECT


def _vdgd() -> Program:
    def answer(row: Row, done: Done) -> list[str]:
        return [DESCRIPTION_PREFIX.format(description=done.first("describe").strip()) + direct_prompt(row)]

    return Program(steps=(
        Step("describe", lambda row, done: [DESCRIBE.format(inst=task_text(row).strip())],
             generation=lambda args: GenerationSettings(max_new_tokens=args["description_tokens"]), media=True),
        Step("answer", answer, generation=_vdgd_decoding, media=True,
             guide=lambda args: "describe" if args["decoding"] == "kl_guided" else None),
    ), args={"description_tokens": 1024, "decoding": "greedy"})


def latest_answers(done: Done) -> list[str]:
    """The two debaters' last answers: those of the last round that ran, else their opening answers."""
    for number in range(MAX_ROUNDS, 1, -1):
        if done.outputs.get(f"round_{number}"):
            return [outputs[0] for outputs in done.outputs[f"round_{number}"]]
    return [done.first("affirmative"), done.first("negative")]


def agree(row: Row, answers: list[str]) -> bool:
    """Whether both answers give the same readable option (the debate's end)."""
    first, second = (cchall_option(answer, metric_inputs(row)["options"]) for answer in answers)
    return first is not None and first == second


def _debate_settings(args: Mapping[str, Any]) -> GenerationSettings:
    if not 1 <= args["rounds"] <= MAX_ROUNDS:
        raise ValueError(f"rounds must be 1 to {MAX_ROUNDS}; got {args['rounds']}")
    return GenerationSettings(max_new_tokens=REASONING)


def _debater(row: Row) -> str:
    return DEBATER.format(topic=task_text(row).strip())


def _round(number: int):
    def prompts(row: Row, done: Done) -> list[str]:
        answers = latest_answers(done)
        if number > done.args["rounds"] or agree(row, answers):
            return []
        return [_debater(row) + REBUTTAL.format(own=own.strip(), other=other.strip()) + REFLECTION + FORMAT
                for own, other in (answers, answers[::-1])]
    return prompts


def _judge(row: Row, done: Done) -> list[str]:
    first, second = latest_answers(done)
    return [JUDGE.format(topic=task_text(row).strip(), first=first.strip(), second=second.strip()) + FORMAT]


def _hallucimad() -> Program:
    def negative(row: Row, done: Done) -> list[str]:
        return [_debater(row) + NEGATIVE.format(other=done.first("affirmative").strip()) + FORMAT]

    debate = {"generation": _debate_settings, "media": True}
    return Program(
        steps=(
            Step("affirmative", lambda row, done: [_debater(row) + AFFIRMATIVE + FORMAT], **debate),
            Step("negative", negative, **debate),
            *(Step(f"round_{number}", _round(number), **debate) for number in range(2, MAX_ROUNDS + 1)),
            Step("judge", _judge, model="judge", **debate),
        ),
        helpers={"judge": "target"},
        args={"rounds": 3},
    )


LIN = "; SRO and HalluciMAD: Lin et al. 2024, arXiv:2407.20505, github.com/LZzz2000/HalluciMAD (code/)"
GHOSH = "; VDGD: Ghosh et al. 2024, arXiv:2405.15683, github.com/Sreyan88/VDGD (desc_prompt; vdgd.py's decoding)"

register_task(cchall_task("cchall_sro", direct_prompt, REASONING, version=1, parser="cchall_final_answer",
                          program=_sro(), source=SOURCE + LIN,
                          description="CCHall, then self-reflection questions on the objects and the answer again"))
register_task(cchall_task("cchall_vdgd", direct_prompt, DIRECT.max_new_tokens, version=1,
                          parser="cchall_final_answer", program=_vdgd(), source=SOURCE + GHOSH,
                          description="CCHall after the model describes the image (VDGD's description first)"))
register_task(cchall_task("cchall_hallucimad", direct_prompt, REASONING, version=1, parser="cchall_final_answer",
                          program=_hallucimad(), source=SOURCE + LIN,
                          description="CCHall by debate: two debaters argue for rounds, a judge decides"))
