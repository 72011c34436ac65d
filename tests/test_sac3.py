"""SAC3 end to end (benchmarks/sac3.py): the authors' prompts, perturbation parsing and the equivalence filter, exact
scores from a scripted model double (verifier, lambda, threshold, pair_with_original), and the real pipeline on
tiny random checkpoints: sac3_prime (re-scoring, resume after kill -9) and sac3_cmm over the probes' video."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from kill_support import kill_when_journalled

from hallubench import models
from hallubench.benchmarks import get_task
from hallubench.benchmarks import sac3
from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.models.protocol import TextPart

os.environ["HF_HUB_OFFLINE"] = "1"
torch.set_num_threads(1)  # tiny random models' tokens follow the float reductions: one thread, as the launched runs

# The authors' prompts, copied from github.com/intuit/sac3 @ f6bc031 independently of the task module.
AUTHORS_CHECK = ("\n        Are the following two Question-Answer(QA) pairs semantically equivalent? \n        Provide your best "
                 "guess and the probability that it is correct (0.0 to 1.0).\n        Given ONLY the guess (Yes or No) "
                 "and probability, no other words or explanation. \n        For example:\n        Guess: <most likely "
                 "guess, as short as possible; not a complete sentence, just the guess!> \n        Probability: <the "
                 "probability between 0.0 and 1.0 that your guess is correct, without any extra commentary whatsoever; "
                 "\n        just the probability!>\n        ")


def test_prompts_are_the_authors_code():
    task = get_task("sac3_prime")
    assert task.prompt({"question": "Is 3691 a prime number?"}) == \
        "Answer the following question:\n" + "\nQ:" + "Is 3691 a prime number?"  # evaluator.py
    assert sac3.PERTURB.format(k=5, question="Is 3691 a prime number?") == \
        "For question Q, provide 5 semantically equivalent questions." + "\nQ:" + "Is 3691 a prime number?"
    assert sac3.qa_check_prompt("q0", "a0", "q1", "a1") == \
        AUTHORS_CHECK + "\nThe first QA pair is:\n" + "Q:q0\nA:a0" + "\nThe second QA pair is:\n" + "Q:q1\nA:a1"
    # the paper's Table 7 (the code has no question equivalence check)
    assert sac3.input_check_prompt("q0", "q1") == "Are the following two inputs semantically equivalent?\nq0\nq1"
    ours = sac3.input_check_prompt("q0", "q1", "qa_format")
    assert ours.startswith(AUTHORS_CHECK.replace("two Question-Answer(QA) pairs", "two inputs"))
    assert ours.endswith("\nThe queried input is:\nq0\nThe generated input is:\nq1")
    assert get_task("sac3_cmm").prompt({"question": "Did you see a dog?"}) == "Did you see a dog? Answer with yes or no."


@pytest.mark.parametrize("text, k, expected", [
    ("1. Can 3691 only be divided by 1 and itself?\n2. Is 3691 prime?", 5,
     ["Can 3691 only be divided by 1 and itself?", "Is 3691 prime?"]),
    ("Sure:\n\n1) a?\n- b?\n* c?\nQ4: d?\n", 3, ["Sure:", "a?", "b?"]),  # at most k, in order
    ("   \n\n", 10, []),
    ("Is 12 divisible by 3? Is 12 a multiple of 3?", 10, ["Is 12 divisible by 3? Is 12 a multiple of 3?"]),
])
def test_perturbed_questions_are_read_one_per_line(text, k, expected):
    assert sac3.perturbations(text, k) == expected


# A scripted model: perturbs into three questions, judges equivalence and QA pairs by rule, answers by question.
AGREE = "No, it is not a prime number."  # the mini prime items' target answer


class ScriptedSAC3Double:
    accepts = frozenset({"video", "audio", "image"})

    def __init__(self, model: str, answer: str = "script", **_):
        self.answer = answer  # "script", or "disagree": every answer differs from the target (a verifier)
        self.name, self.fingerprint = f"sac3-double:{answer}", f"sac3-double-{answer}"

    def reply(self, text: str, seed: int | None, i: int) -> str:
        if text.startswith("For question Q"):
            question = text.split("\nQ:", 1)[1]
            return f"1. {question} (a)\n2. {question} (b)\n3. Unrelated?"
        if text.startswith("Are the following two inputs"):  # Table 7 asks no format: a bare yes/no is read
            generated = text.rsplit("\n", 1)[1]
            return "No." if "Unrelated" in generated else "I cannot tell." if "(b)" in generated else "Yes, they are."
        if text.startswith(sac3.QA_CHECK):
            first, second = re.findall(r"\nA:(.*)", text)
            return "Guess: Yes\nProbability: 0.9" if first == second else "Guess: No\nProbability: 0.8"
        if self.answer == "disagree":
            return "Yes, it is prime."
        if "(a)" in text:
            return AGREE
        if "(b)" in text:
            return "Yes, it is prime."
        return AGREE if i % 4 == 0 else "Yes, it is prime."  # original question: 1 of 4 samples agree

    def generate(self, conversations, settings, seeds=None):
        seeds = seeds or [None] * len(conversations)
        texts = [conv[-1].content[-1].text for conv in conversations]
        assert all(isinstance(conv[-1].content[-1], TextPart) for conv in conversations)
        return [[self.reply(text, seed, i) for i in range(settings.n)] for text, seed in zip(texts, seeds)]


@pytest.fixture
def scripted(monkeypatch):
    monkeypatch.setitem(models.MODELS, "sac3_double", ScriptedSAC3Double)


def _run(data, out, *extra, model=("sac3_double", "pretrained=x")):
    return main(["run", "--model", model[0], "--model-args", model[1], "--tasks", "sac3_prime", "--data-dir",
                 str(data), "--output-dir", str(out), *extra])


def _records(run_dir):
    records, torn = store.read_jsonl(Path(run_dir) / "samples.jsonl")
    assert not torn
    return {r["id"]: {k: v for k, v in r.items() if k != "time_s"} for r in records}


def _metrics(run_dir, task="sac3_prime"):
    return json.loads((Path(run_dir) / "results.json").read_text())["tasks"][task]["metrics"]


def test_scripted_scores_follow_the_paper_definitions(scripted, mini_datasets, tmp_path):
    out = tmp_path / "run"
    assert _run(mini_datasets, out, "--task-args", "k=3,num_samples=4") == 0
    for record in _records(out).values():
        steps = record["steps"]
        # "Unrelated?" was judged not equivalent and dropped; "(b)" got an unreadable verdict and stays, counted
        assert [p["text"].endswith(("(a)", "(b)")) for p in steps["perturbed_answers"]["prompts"]] == [True, True]
        assert record["parsed"] == {"scores": {"sc2": 0.75, "sac3_q": 0.5}, "hallucinated": True,
                                    "perturbed_questions": 2, "dropped": 1, "unverified": 1,
                                    "unparseable_judgments": 0}
        # the sampled pair holds the perturbed question it answers (paper Eq. 3)
        judged = steps["judge_perturbed"]["prompts"][0]["text"]
        assert judged.endswith("(a)\nA:" + AGREE) and "verifier_samples" not in steps
        assert steps["samples"]["generation"]["temperature"] == 1.0
        assert steps["perturbed_answers"]["generation"]["temperature"] == 0.0
    metrics = _metrics(out)
    # every prime target is hallucinated: SC2 0.75 > 0.5 flags it, SAC3-Q 0.5 does not (strictly above)
    assert metrics["sc2_accuracy"] == 1.0 and metrics["sac3_q_accuracy"] == 0.0 and metrics["sc2_auroc"] is None
    assert metrics["sc2_score"] == 0.75 and metrics["num_unparseable"] == 0
    lowered = tmp_path / "lowered"
    assert _run(mini_datasets, lowered, "--task-args", "k=3,num_samples=4,threshold=0.4") == 0
    assert _metrics(lowered)["sac3_q_accuracy"] == 1.0


def test_a_verifier_adds_sac3_m_qm_and_all_weighted_by_lambda(scripted, mini_datasets, tmp_path):
    out = tmp_path / "run"
    assert _run(mini_datasets, out, "--task-args", "k=3,num_samples=4,lambda_weight=0.25",
                "--helper", "verifier", "adapter=sac3_double,pretrained=x,answer=disagree") == 0
    for record in _records(out).values():
        assert record["parsed"]["scores"] == {"sc2": 0.75, "sac3_q": 0.5, "sac3_m": 1.0, "sac3_qm": 1.0}
        assert record["steps"]["verifier_samples"]["model_fingerprint"] == "sac3-double-disagree"
    metrics = _metrics(out)
    assert metrics["sac3_all_score"] == 0.5 + 0.25 * 2 and metrics["sac3_all_accuracy"] == 1.0
    assert metrics["sac3_m_accuracy"] == metrics["sac3_qm_accuracy"] == 1.0


def test_pairing_with_the_original_question_and_no_equivalence_check(scripted, mini_datasets, tmp_path):
    out = tmp_path / "run"
    assert _run(mini_datasets, out, "--task-args", "k=3,num_samples=4,pair_with_original=true,check_equivalence=false",
                "--limit", "1") == 0
    record = next(iter(_records(out).values()))
    assert record["steps"]["equivalence"]["prompts"] == [] and record["parsed"]["perturbed_questions"] == 3
    question = record["prompt"].split("\nQ:", 1)[1]
    for prompt in record["steps"]["judge_perturbed"]["prompts"]:
        assert f"The second QA pair is:\nQ:{question}\nA:" in prompt["text"]


def test_an_item_without_perturbed_questions_is_unparsed_not_scored(scripted, mini_datasets, tmp_path, monkeypatch):
    monkeypatch.setattr(ScriptedSAC3Double, "reply", lambda self, text, seed, i: "" if text.startswith("For") else
                        "Guess: Yes")
    out = tmp_path / "run"
    assert _run(mini_datasets, out, "--task-args", "k=3,num_samples=2") == 0
    assert all(r["parsed"] is None and r["error"] is None for r in _records(out).values())
    result = json.loads((out / "results.json").read_text())["tasks"]["sac3_prime"]
    assert (result["n_unparsed"], result["n_scored"], result["metrics"]) == (3, 0, {})


def test_the_released_prime_and_senator_sets_run_through_the_pipeline(scripted, shared_data, tmp_path):
    data = tmp_path / "data"
    assert main(["build", "sac3", "--source", str(shared_data / "sac3"), "--out", str(data / "sac3")]) == 0
    out = tmp_path / "run"
    assert main(["run", "--model", "sac3_double", "--model-args", "pretrained=x", "--tasks", "sac3_prime,sac3_senator",
                 "--limit", "2", "--data-dir", str(data), "--output-dir", str(out), "--task-args", "k=3,num_samples=4"]) == 0
    records = _records(out)
    assert sorted(records) == ["prime-0000", "prime-0001", "senator-0000", "senator-0001"]
    assert records["prime-0000"]["prompt"].endswith("Q:Is 7411 a prime number?")
    # the released prime target is the double's agreeing answer; no answer of it agrees with "Yes, there was."
    assert all(r["parsed"]["scores"] == ({"sc2": 0.75, "sac3_q": 0.5} if r["task"] == "sac3_prime" else
                                         {"sc2": 1.0, "sac3_q": 1.0}) for r in records.values())


# The real pipeline on tiny random checkpoints: noise answers, so judge strings are unparseable and counted.
TINY_ARGS = ("--task-args", "k=2,num_samples=2", "--gen-kwargs", "max_new_tokens=6")


@pytest.fixture(scope="module")
def tiny_vl(tiny_checkpoint):
    return ("hf", f"pretrained={tiny_checkpoint('qwen2_vl')},dtype=float32")


@pytest.fixture(scope="module")
def tiny_reference(tiny_vl, mini_datasets, tmp_path_factory):
    out = tmp_path_factory.mktemp("sac3") / "run"
    assert _run(mini_datasets, out, *TINY_ARGS, "--limit", "5", model=tiny_vl) == 0
    return out


def test_tiny_model_run_writes_per_item_scores_and_results_and_rescores_the_same(tiny_reference, tmp_path, capsys):
    records = _records(tiny_reference)
    assert len(records) == 3  # the mini prime set has three items
    for record in records.values():
        assert record["error"] is None and set(record["parsed"]["scores"]) == {"sc2", "sac3_q"}
        assert len(record["steps"]["samples"]["outputs"][0]) == 2
        assert record["parsed"]["unparseable_judgments"] == len(record["steps"]["judge_self"]["outputs"]) + \
            len(record["steps"]["judge_perturbed"]["outputs"])  # a random model never writes "Guess: Yes/No"
    metrics = _metrics(tiny_reference)
    assert {"sc2_accuracy", "sac3_q_accuracy", "sc2_score", "num_unparseable"} <= set(metrics)
    assert metrics["num_unparseable"] == sum(r["parsed"]["unparseable_judgments"] for r in records.values())
    # every item rests on judge strings the rule could not read: all unreadable, none scored, so no score but a reason
    result = json.loads((tiny_reference / "results.json").read_text())["tasks"]["sac3_prime"]
    assert (result["n_unreadable"], result["unreadable_share"], result["mostly_unreadable"]) == (3, 1.0, True)
    assert (result["n_scored"], result["not_scored"]) == (0, "0 of 3 scored: 3 unreadable")
    assert metrics["sc2_accuracy"] is None and metrics["sc2_score"] is None
    assert all(r["verdict"] == {"verdict": None, "reading": None, "counted": "unreadable"} for r in records.values())
    assert main(["run", "--from-outputs", str(tiny_reference), "--output-dir", str(tmp_path / "re")]) == 0
    assert _metrics(tmp_path / "re") == metrics
    assert "| sac3_prime | all | 3 | 0 | 3 (100%) ⚠ | 0 | – (0 of 3 scored: 3 unreadable) |" in capsys.readouterr().out


@pytest.mark.slow
def test_tiny_model_run_killed_mid_item_resumes_its_steps_and_matches(tiny_vl, tiny_reference, mini_datasets, tmp_path):
    out = tmp_path / "run"
    argv = ["run", "--model", tiny_vl[0], "--model-args", tiny_vl[1], "--tasks", "sac3_prime", "--limit", "5",
            "--data-dir", str(mini_datasets), "--output-dir", str(out), *TINY_ARGS]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    # kill once the second item has perturbed its question
    kill_when_journalled(argv, env, store.rank_file(out, 0, store.STEPS), b'"id": "prime-0001", "step": "perturb"')
    steps_done = {(r["id"], r["step"]) for r in store.read_store(out, store.STEPS).records.values()}
    samples_done = {r["id"] for r in store.read_store(out).records.values()}
    assert ("prime-0001", "perturb") in steps_done and "prime-0001" not in samples_done  # killed inside the item
    assert main(argv) == 0
    assert json.loads((out / "results.json").read_text())["run"]["generated"] == 3 - len(samples_done)
    assert _records(out) == _records(tiny_reference)
    assert _metrics(out) == _metrics(tiny_reference)


@pytest.mark.slow
def test_two_processes_give_the_samples_of_one(tiny_vl, tiny_reference, mini_datasets, tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "ACCELERATE_USE_CPU": "true"}
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
              "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "hallubench", "run",
              "--model", tiny_vl[0], "--model-args", tiny_vl[1], "--tasks", "sac3_prime", "--limit", "5",
              "--data-dir", str(mini_datasets), "--output-dir", str(out), *TINY_ARGS]
    proc = subprocess.run(launch, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads((out / "results.json").read_text())["run"]["num_processes"] == 2
    assert _records(out) == _records(tiny_reference)
    merged, _ = store.read_jsonl(out / "steps.jsonl")  # both processes' journals, merged
    assert {r["id"] for r in merged} == set(_records(out)) and not list(out.glob("steps_rank*"))


def test_sac3_cmm_checks_the_models_own_answer_over_the_probes_media(tiny_checkpoint, mini_datasets, tmp_path,
                                                                     capsys):
    from hallubench.metrics.pa_hr.pa_hr import parse_yes_no

    omni = f"pretrained={tiny_checkpoint('qwen2_5_omni')},dtype=float32"
    out = tmp_path / "run"
    argv = ["run", "--model", "hf", "--model-args", omni, "--tasks", "sac3_cmm", "--limit", "2", "--num-frames", "2",
            "--data-dir", str(mini_datasets), "--output-dir", str(out), *TINY_ARGS]
    assert main(argv) == 0
    for record in _records(out).values():
        assert "video" in record["media"] and record["reference"] in ("yes", "no")
        # the checked answer is the model's own: each judge prompt's first pair holds it
        answer = record["outputs"][0]
        assert all(f"\nA:{answer}\nThe second QA pair" in p["text"] for p in record["steps"]["judge_self"]["prompts"])
        assert record["parsed"]["hallucinated"] == (parse_yes_no(answer) != record["reference"])
    assert "sac3_q_accuracy" in _metrics(out, "sac3_cmm")
    # a verifier that cannot watch the probes' video is refused before any sample
    vl = f"pretrained={tiny_checkpoint('qwen2_audio')},dtype=float32"
    assert main([*argv, "--output-dir", str(tmp_path / "refused"), "--helper", "verifier", vl]) == 2
    assert "step 'verifier_samples'" in capsys.readouterr().err
