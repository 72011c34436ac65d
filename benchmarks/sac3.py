"""SAC3 (Zhang et al. 2023, EMNLP Findings, arXiv:2311.01740): semantic-aware cross-check consistency, run on
any model as a multi-step task (benchmarks/steps.py).

Per item (paper §4.1-4.3): the perturber LM writes k semantically equivalent questions and checks each against
the original (§4.1; questions it judges "No" are dropped); the target model answers the original question n_s
times (temperature 1.0, SelfCheckGPT's setting, §6.1) and each kept perturbed question n_q times; an optional
verifier model (`--helper verifier ARGS`) does the same n_m and n_qm times (SAC3-M, SAC3-QM); the judge LM
checks each sampled QA pair against the checked QA pair (§4.3.1). The `sac3` metric turns the judge strings into
SC2, SAC3-Q, SAC3-M, SAC3-QM and SAC3-all (= Q + lambda (M + QM)) and flags a score above the threshold.
Perturber and judge are the target model unless `--helper perturber|judge ARGS` names others (the paper used
gpt-3.5-turbo for all three roles, at temperature 0 for perturbing and checking).

Prompts, verbatim from the authors' code (github.com/intuit/sac3 @ f6bc031), which the paper's Table 7 prints in
shorter words (the code's are what produced the released judge strings):
- answer: `sac3/evaluator.py` `Evaluate.prompt_temp` + "\\nQ:" + question.
- perturbation: `sac3/paraphraser.py` "For question Q, provide {k} semantically equivalent questions." + "\\nQ:".
- QA-pair check: `sac3/consistency_checker.py` `SemanticConsistnecyCheck.prompt_temp` (indentation and trailing
  spaces kept) + "\\nThe first QA pair is:\\n" + "Q:..\\nA:.." + "\\nThe second QA pair is:\\n" + "Q:..\\nA:..".
- question equivalence check (§4.1; the code has none): the paper's Table 7, "Are the following two inputs
  semantically equivalent? \\n [QUERIED INPUT] \\n [GENERATED INPUT]" (`--task-args equivalence_prompt=table7`, the
  default). Our earlier variant, the QA-pair prompt with "two Question-Answer(QA) pairs" replaced by "two inputs",
  then "The queried input is:" / "The generated input is:", stays available as `equivalence_prompt=qa_format`.
  The verdict is read as a "Guess: Yes/No" string or else by its first yes/no word. A "No" drops the question; an
  unreadable verdict keeps it and is counted (`unverified`), so only a stated non-equivalence removes a question.
Details we chose:
- perturbed questions are read one per line of the perturber's answer, list numbering ("1.", "2)", "-")
  stripped, empty lines dropped, at most k kept (the authors kept each raw line).
- the sampled pair holds the question it answers (paper Eq. 3: (x_j, s_j)); `--task-args pair_with_original=true`
  pairs every answer with the original question as the authors' `score_scc` does.
- answers to perturbed questions are greedy when one per question (the authors' `perb_evaluate` at temperature 0),
  sampled at 1.0 when `perturbed_samples` > 1; the verifier's answers to the original are sampled at 1.0.
- an item left with no perturbed question cannot have SAC3-Q: it is counted as unparsed, not scored.

Tasks: `sac3_prime`, `sac3_senator`, `sac3_hotpotqa`, `sac3_nq_open` check the released target answer of each
item (every prime/senator target is hallucinated: the paper's Table 3; HotpotQA/NQ-open carry labels: Table 4
AUROC). `sac3_cmm` runs it over CMM's yes/no probes with their video and audio: the checked answer is the
model's own greedy answer to the probe, hallucinated when it is not the probe's reference answer (an answer
without a leading yes/no counts as not correct, as CMM scores it).
`--task-args`: k (10), num_samples (n_s, 10), perturbed_samples (n_q = n_qm, 1), verifier_samples (n_m, 1),
check_equivalence (true), pair_with_original (false), equivalence_prompt (table7 | qa_format); the metric's
threshold (0.5) and lambda_weight (1.0).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from hallubench.benchmarks.steps import Done, Program, Step
from hallubench.benchmarks.task import MediaSpec, Row, Task, one_of, yes_no
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_parser, register_task

ANSWER = "Answer the following question:\n\nQ:{question}"
PERTURB = "For question Q, provide {k} semantically equivalent questions.\nQ:{question}"
_INDENT = " " * 8
QA_CHECK = "\n".join((
    "",
    _INDENT + "Are the following two Question-Answer(QA) pairs semantically equivalent? ",
    _INDENT + "Provide your best guess and the probability that it is correct (0.0 to 1.0).",
    _INDENT + "Given ONLY the guess (Yes or No) and probability, no other words or explanation. ",
    _INDENT + "For example:",
    _INDENT + "Guess: <most likely guess, as short as possible; not a complete sentence, just the guess!> ",
    _INDENT + "Probability: <the probability between 0.0 and 1.0 that your guess is correct, without any extra "
              "commentary whatsoever; ",
    _INDENT + "just the probability!>",
    _INDENT,
))
INPUT_CHECK = "Are the following two inputs semantically equivalent?\n{queried}\n{generated}"  # Table 7
QA_FORMAT_INPUT_CHECK = QA_CHECK.replace("two Question-Answer(QA) pairs", "two inputs")  # ours, before Table 7
EQUIVALENCE_PROMPTS = ("table7", "qa_format")
CMM_SUFFIX = " Answer with yes or no."
ARGS = {"k": 10, "num_samples": 10, "perturbed_samples": 1, "verifier_samples": 1, "check_equivalence": True,
        "pair_with_original": False, "equivalence_prompt": "table7"}
CHECK = GenerationSettings(max_new_tokens=32)  # "Guess: Yes\nProbability: 0.9"
SAMPLED = 1.0
ANSWER_TOKENS = 200  # as the authors' open-model verifiers (sac3/llm_models.py: max_new_tokens=200)
_NUMBERING = re.compile(r"^\s*(?:[-*•]|\(?\d+[.):]|Q\d*[.:])\s*")

# judge step -> the sac3 metric argument its judge strings go to, in the metric's order
JUDGMENTS = {"judge_self": "self_judgments", "judge_perturbed": "perturbed_judgments",
             "judge_verifier": "verifier_judgments", "judge_verifier_perturbed": "perturbed_verifier_judgments"}
SCORES = {"self_judgments": "sc2", "perturbed_judgments": "sac3_q", "verifier_judgments": "sac3_m",
          "perturbed_verifier_judgments": "sac3_qm"}


def qa_pair(question: str, answer: str) -> str:
    """A QA pair as the authors' checker writes it."""
    return "Q:" + question + "\nA:" + answer


def qa_check_prompt(question: str, answer: str, other_question: str, other_answer: str) -> str:
    """The authors' QA-pair consistency prompt: is (other_question, other_answer) equivalent to (question, answer)?"""
    return (QA_CHECK + "\nThe first QA pair is:\n" + qa_pair(question, answer)
            + "\nThe second QA pair is:\n" + qa_pair(other_question, other_answer))


def input_check_prompt(question: str, perturbed: str, variant: str = "table7") -> str:
    """§4.1's equivalence check of a perturbed question against the original: Table 7's prompt, or ("qa_format")
    ours in the QA-pair checker's format."""
    if variant not in EQUIVALENCE_PROMPTS:
        raise ValueError(f"equivalence_prompt={variant!r}: choose one of {', '.join(EQUIVALENCE_PROMPTS)}")
    if variant == "table7":
        return INPUT_CHECK.format(queried=question, generated=perturbed)
    return QA_FORMAT_INPUT_CHECK + "\nThe queried input is:\n" + question + "\nThe generated input is:\n" + perturbed


def _equivalence_settings(args: Mapping[str, Any]) -> GenerationSettings:
    """The check's decoding; refuses an unknown `equivalence_prompt` before any item runs."""
    if args["equivalence_prompt"] not in EQUIVALENCE_PROMPTS:
        raise ValueError(f"equivalence_prompt must be one of {', '.join(EQUIVALENCE_PROMPTS)}; "
                         f"got {args['equivalence_prompt']!r}")
    return CHECK


def perturbations(text: str, k: int) -> list[str]:
    """The perturbed questions in the perturber's answer: one per line, numbering stripped, at most k."""
    lines = (_NUMBERING.sub("", line).strip() for line in text.splitlines())
    return [line for line in lines if line][:k]


def _verdict(text: str) -> int | None:
    """0: the judge says equivalent ("Yes"), 1: not ("No"), None: unparseable (the sac3 metric's own reading)."""
    from hallubench.metrics.sac3.sac3 import parse_judgment

    return parse_judgment(text)[0]


def _equivalence_verdict(text: str) -> int | None:
    """The equivalence check's verdict: a "Guess: Yes/No" string as the judge's, else its first yes/no word (Table
    7's prompt asks no format); 0 equivalent, 1 not, None unreadable."""
    from hallubench.metrics.pa_hr.pa_hr import parse_yes_no

    verdict = _verdict(text)
    if verdict is None:
        verdict = {"yes": 0, "no": 1}.get(parse_yes_no(text))
    return verdict


def perturbed_questions(done: Done) -> list[str]:
    """The perturbed questions that go on: all the perturber wrote, less those the equivalence check says "No" to."""
    written = perturbations(done.first("perturb"), done.args["k"]) if done.outputs["perturb"] else []
    verdicts = [outputs[0] for outputs in done.outputs.get("equivalence", [])]
    if not verdicts:
        return written
    return [question for question, verdict in zip(written, verdicts) if _equivalence_verdict(verdict) != 1]


def program(question: Callable[[Row], str], ask: Callable[[str], str], checked: Callable[[Row, Done], str],
            media: bool, answer_tokens: int) -> Program:
    """SAC3's steps for items whose question is `question(row)`, asked as `ask(question)`, whose checked answer is
    `checked(row, done)`; `media`: the answering steps show the item's media."""

    def answers(n_key: str, greedy_when_one: bool) -> Callable[[Mapping[str, Any]], GenerationSettings]:
        def settings(args):
            n = args[n_key]
            sampled = n > 1 or not greedy_when_one
            return GenerationSettings(max_new_tokens=answer_tokens, temperature=SAMPLED if sampled else 0.0, n=n)
        return settings

    def judge(source: str, perturbed: bool) -> Callable[[Row, Done], list[str]]:
        def prompts(row, done):
            original, target = question(row), checked(row, done)
            asked = perturbed_questions(done) if perturbed else [original] * len(done.outputs[source])
            if done.args["pair_with_original"]:
                asked = [original] * len(asked)
            return [qa_check_prompt(original, target, q, out) for q, outputs in zip(asked, done.outputs[source])
                    for out in outputs]
        return prompts

    return Program(
        steps=(
            Step("answer", lambda row, done: [ask(question(row))], media=media),
            Step("perturb", lambda row, done: [PERTURB.format(k=done.args["k"], question=question(row))],
                 generation=lambda args: GenerationSettings(max_new_tokens=48 * args["k"]), model="perturber"),
            Step("equivalence", lambda row, done: [
                input_check_prompt(question(row), q, done.args["equivalence_prompt"])
                for q in perturbations(done.first("perturb"), done.args["k"])]
                if done.args["check_equivalence"] and done.outputs["perturb"] else [],
                generation=_equivalence_settings, model="perturber"),
            Step("samples", lambda row, done: [ask(question(row))], generation=answers("num_samples", False),
                 media=media),
            Step("perturbed_answers", lambda row, done: [ask(q) for q in perturbed_questions(done)],
                 generation=answers("perturbed_samples", True), media=media),
            Step("verifier_samples", lambda row, done: [ask(question(row))],
                 generation=answers("verifier_samples", False), model="verifier", media=media),
            Step("verifier_perturbed_answers", lambda row, done: [ask(q) for q in perturbed_questions(done)],
                 generation=answers("perturbed_samples", True), model="verifier", media=media),
            Step("judge_self", judge("samples", False), generation=CHECK, model="judge"),
            Step("judge_perturbed", judge("perturbed_answers", True), generation=CHECK, model="judge"),
            Step("judge_verifier", judge("verifier_samples", False), generation=CHECK, model="judge"),
            Step("judge_verifier_perturbed", judge("verifier_perturbed_answers", True), generation=CHECK,
                 model="judge"),
        ),
        helpers={"perturber": "target", "judge": "target", "verifier": None},
        args=ARGS,
        answer="answer",
    )


def judgments(record: Mapping[str, Any]) -> dict[str, list[str]]:
    """The judge strings of each sac3 metric argument the record has (verifier ones only when a verifier ran)."""
    steps = record["steps"]
    verifier = "verifier_samples" in steps
    return {argument: [outputs[0] for outputs in steps[step]["outputs"]] for step, argument in JUDGMENTS.items()
            if step in steps and (verifier or "verifier" not in step)}


def read(record: Mapping[str, Any], hallucinated: bool) -> dict[str, Any] | None:
    """Per item: each score (mean inconsistency C over its judge strings, an unparseable one counting as C = 1 as
    in the authors' code), whether the checked answer is hallucinated, the perturbed questions answered, those the
    equivalence check dropped or could not read (`unverified`, kept) and the unparseable judge strings; None when
    the item has no perturbed question or no sample (no SAC3-Q or SC2)."""
    found = judgments(record)
    if not found.get("self_judgments") or not found.get("perturbed_judgments"):
        return None
    values = {argument: [_verdict(text) for text in texts] for argument, texts in found.items()}
    steps = record["steps"]
    verdicts = [outputs[0] for outputs in steps["equivalence"]["outputs"]]
    return {
        "scores": {SCORES[argument]: sum(1 if c is None else c for c in cs) / len(cs) for argument, cs in values.items()},
        "hallucinated": hallucinated,
        "perturbed_questions": len(steps["perturbed_answers"]["prompts"]),
        "dropped": sum(_equivalence_verdict(text) == 1 for text in verdicts),
        "unverified": sum(_equivalence_verdict(text) is None for text in verdicts),
        "unparseable_judgments": sum(c is None for cs in values.values() for c in cs),
    }


@register_parser("sac3")
def read_released_target(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """SAC3 on a released target answer: hallucinated as the set labels it (the record's reference)."""
    return read(record, bool(record["reference"]))


@register_parser("sac3_cmm")
def read_own_answer(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """SAC3 on the model's own answer to a CMM probe: hallucinated unless it begins with the reference yes/no."""
    from hallubench.metrics.pa_hr.pa_hr import parse_yes_no

    return read(record, parse_yes_no(record["outputs"][0]) != record["reference"] if record["outputs"] else True)


def score_inputs(record: Mapping[str, Any]) -> dict[str, Any]:
    """The sac3 metric's per-item arguments: the judge strings and the label."""
    return {**judgments(record), "labels": record["parsed"]["hallucinated"]}


def judged_unread(parsed: Mapping[str, Any]) -> bool:
    """Whether a judge string of the item could not be read (the authors' rule counts it inconsistent)."""
    return parsed["unparseable_judgments"] > 0


def summarize(output: Mapping[str, Any]) -> dict[str, Any]:
    """Per score: accuracy and AUROC against the labels (AUROC null with one class, as in prime/senator) and the
    mean score; the count of unparseable judge strings."""
    out: dict[str, Any] = {}
    for name, scores in output["scores"].items():
        out[f"{name}_accuracy"] = output["accuracy"][name]
        out[f"{name}_auroc"] = output["auroc"][name]
        out[f"{name}_score"] = sum(scores) / len(scores)
    out["num_unparseable"] = output["num_unparseable"]
    return out


HIGHER_IS_BETTER = {f"{name}_{kind}": better for name in (*SCORES.values(), "sac3_all")
                    for kind, better in (("accuracy", True), ("auroc", True), ("score", None))}
# The summary's fractions: accuracy and AUROC of every score, and the mean of the scores in [0, 1] (sac3_all adds
# three such scores: it is not one).
FRACTIONS = tuple(f"{name}_{kind}" for name in (*SCORES.values(), "sac3_all") for kind in ("accuracy", "auroc")) + \
    tuple(f"{name}_score" for name in SCORES.values())
SOURCE = "Zhang et al. 2023, EMNLP Findings, arXiv:2311.01740; github.com/intuit/sac3 (sac3/*.py)"


QA_SETS = {"prime": "prime-number questions", "senator": "senator-search questions",
           "hotpotqa": "HotpotQA questions", "nq_open": "NQ-open questions"}


def _qa_task(config: str) -> Task:
    def ask(question: str) -> str:
        return ANSWER.format(question=question)

    return Task(
        name=f"sac3_{config}", description=f"SAC3 on {QA_SETS[config]}: is the answer a hallucination?",
        benchmark="sac3", config=config, prompt=lambda row: ask(row["question"]),
        media=MediaSpec(), generation=GenerationSettings(max_new_tokens=ANSWER_TOKENS), parser="sac3", metric="sac3",
        reference=lambda row: one_of(row, "hallucinated", (True, False)), metric_args={"threshold": 0.5, "lambda_weight": 1.0},
        higher_is_better=HIGHER_IS_BETTER, fractions=FRACTIONS, source=SOURCE, version=2,  # 2: Table 7's equivalence check
        program=program(lambda row: row["question"], ask, lambda row, done: row["target_answer"], False, ANSWER_TOKENS),
        score_inputs=score_inputs, summarize=summarize, unreadable=judged_unread,
    )


def _cmm_ask(question: str) -> str:
    return question + CMM_SUFFIX


for _config in QA_SETS:
    register_task(_qa_task(_config))

register_task(Task(
    name="sac3_cmm", description="SAC3's consistency check on CMM's audio-visual yes/no probes", benchmark="cmm", config="all", prompt=lambda row: _cmm_ask(row["question"]),
    media=MediaSpec(video="video_path", audio="audio_path"), generation=GenerationSettings(max_new_tokens=32),
    parser="sac3_cmm", metric="sac3", reference=lambda row: one_of(row, "answer", ("yes", "no"), yes_no),
    metric_args={"threshold": 0.5, "lambda_weight": 1.0}, higher_is_better=HIGHER_IS_BETTER, fractions=FRACTIONS,
    source=SOURCE + "; CMM probes: Leng et al. 2024, arXiv:2410.12787", version=2,  # 2: Table 7's equivalence check
    program=program(lambda row: row["question"], _cmm_ask, lambda row, done: done.first("answer"), True, 32),
    score_inputs=score_inputs, summarize=summarize, unreadable=judged_unread,
))
