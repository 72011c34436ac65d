"""CCHall's SRO, VDGD and HalluciMAD strategies (benchmarks/cchall_strategies.py) end to end on the mini CCHall
(`hallubench run --data-dir mini`) with a scripted model, their step structure (the reflection sees the first
answer, the answer prompt holds the description, debaters see each other's last answers, the debate stops at
agreement or after `rounds`), the authors' prompts, resume after a kill in the judge step, and the real pipeline on a
tiny random checkpoint."""
import json
import re
from pathlib import Path

import pytest

from hallubench import models
from hallubench.benchmarks import cchall_strategies as strategies
from hallubench.benchmarks import get_task
from hallubench.builders.mini import cchall as mini_cchall
from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.models.protocol import ImagePart, TextPart

TASKS = ("cchall_sro", "cchall_vdgd", "cchall_hallucimad")
NON = mini_cchall.NON
LETTER = dict(zip(mini_cchall.TYPES, "ABCD"))
TRUTH = {row[5]: row[7] for row in mini_cchall.ROWS}  # the English answer (response1) -> the item's label
UNSURE = mini_cchall.ROWS[-1][5]  # the item whose final answers the scripted model leaves unreadable
CONCEDING = {mini_cchall.ROWS[3][5], mini_cchall.ROWS[5][5]}  # items where a debater gives up "Non-hallucination"
CALLS: list[str] = []  # the last user text of every conversation sent
REBUTTAL = r"Your previous answer is: (.*?)\nBut the other debater's answer is: (.*?)\nNow please"


class Killed(BaseException):
    """Stands in for kill -9: nothing in the harness catches it."""


def final(label: str) -> str:
    return f"Both answers checked.\n**Final Answer: {LETTER[label]}. {label}.**"


def _option(text: str) -> str | None:
    found = re.search(r"Final Answer: ([A-D])\.", text)
    return found and found.group(1)


class ScriptedCCHallDouble:
    """Answers like a detector that says "Non-hallucination" at first sight and gets the type right once it has
    reflected, described the image, argued or judged (except on the UNSURE item, where it cannot tell). Debaters
    keep their answer, except that on CONCEDING items one who said "Non-hallucination" takes the other's answer.
    Every conversation must carry the image with its first user turn."""

    accepts = frozenset({"image"})

    def __init__(self, model: str, kill_on: str = "", **_):
        self.name, self.fingerprint, self.kill_on = "cchall-double", "cchall-double-1", kill_on

    def reply(self, texts: list[str]) -> str:
        last = texts[-1]
        answer1 = re.search(r"Answer1: (.*)", texts[0]).group(1)
        decisive = "I cannot tell." if answer1 == UNSURE else final(TRUTH[answer1])
        if last.startswith("I have been given an image"):
            return f"DESC[{answer1}]"
        if last.startswith(("Image description: DESC[", strategies.REFLECTION, "You are judge")):
            return decisive
        if last.startswith("You are a debater"):
            rebuttal = re.search(REBUTTAL, last, re.S)
            if rebuttal:
                own, other = rebuttal.groups()
                conceding = answer1 in CONCEDING and _option(own) == "A" and _option(other) != "A"
                return other if conceding else own
            return decisive if "The other debater's answer is:" in last else final(NON)
        assert last.startswith("You are a hallucination detection system"), last[:80]
        return final(NON)

    def generate(self, conversations, settings, seeds=None):
        out = []
        for conv in conversations:
            assert isinstance(conv[0].content[0], ImagePart)
            texts = [part.text for message in conv for part in message.content if isinstance(part, TextPart)]
            CALLS.append(texts[-1])
            if self.kill_on and texts[-1].startswith(self.kill_on):
                raise Killed()
            out.append([self.reply(texts)] * settings.n)
        return out


def _register(patch):
    patch.setitem(models.MODELS, "cchall_double", ScriptedCCHallDouble)


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    _register(monkeypatch)
    CALLS.clear()


def _run(data, out, *extra, tasks=TASKS, model=("cchall_double", "pretrained=x")):
    return main(["run", "--model", model[0], "--model-args", model[1], "--tasks", ",".join(tasks),
                 "--data-dir", str(data), "--output-dir", str(out), *extra])


def _records(run_dir, task=None):
    records, torn = store.read_jsonl(Path(run_dir) / "samples.jsonl")
    assert not torn
    return {r["id"]: {k: v for k, v in r.items() if k != "time_s"} for r in records if task in (None, r["task"])}


def _result(run_dir, task):
    return json.loads((Path(run_dir) / "results.json").read_text())["tasks"][task]


@pytest.fixture(scope="module")
def mini_run(tmp_path_factory):
    """All three strategies in one `run --data-dir mini` (the mini benchmarks built into a cache of this module);
    returns (run folder, the built datasets folder)."""
    from hallubench.harness.data import resolve_data_dir

    with pytest.MonkeyPatch.context() as patch:
        _register(patch)
        patch.setenv("HALLUBENCH_CACHE", str(tmp_path_factory.mktemp("cache")))
        out = tmp_path_factory.mktemp("cchall") / "run"
        assert _run("mini", out) == 0
        return out, resolve_data_dir("mini")


@pytest.mark.parametrize("task", TASKS)
def test_each_strategy_runs_end_to_end_on_the_mini_cchall_and_scores_its_final_answer(mini_run, task):
    out, _ = mini_run
    results = json.loads((out / "results.json").read_text())
    assert task in results["run"]["mini_data"]
    result = _result(out, task)
    assert (result["n_total"], result["n_scored"], result["n_unparsed"], result["n_errors"]) == (9, 8, 1, 0)
    # the final answers are right but for the unreadable one (a type D item); the first answers, all "A", would
    # score 3/9: the metric reads each strategy's last step
    assert result["metrics"]["accuracy"] == pytest.approx(8 / 9)
    assert result["metrics"]["macro_f1"] == pytest.approx((3 + 2 / 3) / 4)  # type D: recall 1/2, precision 1
    assert result["groups"]["AMBER"]["n_unparsed"] == 1 and result["version"] == 1
    records = _records(out, task)
    assert all(r["parsed"] == (None if r["outputs"][0] == "I cannot tell." else r["reference"])
               for r in records.values())


def test_strategies_rescore_from_their_records_alone(mini_run, tmp_path):
    out, _ = mini_run
    assert main(["run", "--from-outputs", str(out), "--output-dir", str(tmp_path / "re")]) == 0
    for task in TASKS:
        assert _result(tmp_path / "re", task)["metrics"] == _result(out, task)["metrics"]


def test_sro_reflects_on_its_first_answer_in_the_same_conversation(mini_run):
    for record in _records(mini_run[0], "cchall_sro").values():
        steps = record["steps"]
        first = steps["answer"]["outputs"][0][0]
        assert steps["answer"]["prompts"] == [{"text": record["prompt"], "history": []}]
        assert first == final(NON)
        assert steps["reflect"]["prompts"] == [{"text": strategies.REFLECTION + "\n" + strategies.OUTPUT_FORMAT,
                                                "history": [[record["prompt"], first]]}]
        assert record["outputs"] == steps["reflect"]["outputs"][0]
        assert (steps["answer"]["generation"]["max_new_tokens"], steps["reflect"]["generation"]["max_new_tokens"]) \
            == (256, 1024)


def test_vdgd_answers_with_its_description_before_the_direct_prompt(mini_run):
    for record in _records(mini_run[0], "cchall_vdgd").values():
        steps = record["steps"]
        describe = steps["describe"]["prompts"][0]["text"]
        assert describe.startswith("I have been given an image to complete the task described as: You are a "
                                   "hallucination detection system") and describe.endswith(AUTHORS_DESCRIBE_TAIL)
        assert "Output Format" not in describe  # the task, not the answer format
        description = steps["describe"]["outputs"][0][0]
        assert steps["answer"]["prompts"][0]["text"] == f"Image description: {description}\n\n" + record["prompt"]
        assert steps["describe"]["generation"]["max_new_tokens"] == 1024


# The tail of VDGD's `desc_prompt` (github.com/Sreyan88/VDGD generate_desc_logits.py), copied independently.
AUTHORS_DESCRIBE_TAIL = (".\n\nTo help me complete the task, describe the given image in detail. In case of real-world "
                         "scenes, please include all foreground and background objects in the description, their "
                         "properties (like color, shape, etc.), their relations with other objects, their count, and "
                         "all other components in the image. In case of non-real-world scenes, like charts, graphs, "
                         "tables, etc., please describe the table, mention all numbers (if any), mention the written "
                         "text, and all other details.")
ROUNDS = ("round_2", "round_3", "round_4", "round_5")


def _debate(record):
    """(rounds that ran, the debaters' answers after each stage: the opening and every round that ran)."""
    steps = record["steps"]
    stages = [[steps["affirmative"]["outputs"][0][0], steps["negative"]["outputs"][0][0]]]
    ran = [name for name in ROUNDS if steps[name]["prompts"]]
    stages += [[outputs[0] for outputs in steps[name]["outputs"]] for name in ran]
    return ran, stages


def test_hallucimad_debaters_see_each_others_answers_and_stop_at_agreement_or_after_rounds(mini_run):
    for record in _records(mini_run[0], "cchall_hallucimad").values():
        steps = record["steps"]
        answer1 = re.search(r"Answer1: (.*)", record["prompt"]).group(1)
        ran, stages = _debate(record)
        # agreeing openings (type A items) end the debate; a conceding debater ends it after round 2; else 3 rounds
        expected = [] if TRUTH[answer1] == NON else ["round_2"] if answer1 in CONCEDING else ["round_2", "round_3"]
        assert ran == expected
        assert f"The other debater's answer is: {stages[0][0]}\n" in steps["negative"]["prompts"][0]["text"]
        for name, before in zip(ran, stages):  # each debater: its own last answer, then the other's
            seen = [re.search(REBUTTAL, p["text"], re.S).groups() for p in steps[name]["prompts"]]
            assert seen == [tuple(before), tuple(before[::-1])]
        judged = steps["judge"]["prompts"][0]["text"]
        assert judged.startswith("You are judge.") and steps["judge"]["model"] == "judge"
        assert f"One of the debaters' answer is: {stages[-1][0]}\nAnother debater's answer is: {stages[-1][1]}\n" \
            in judged
        assert record["outputs"] == steps["judge"]["outputs"][0]


def test_hallucimad_rounds_is_a_task_arg_checked_before_the_model_loads(mini_run, tmp_path, capsys):
    data = mini_run[1]
    assert _run(data, tmp_path / "one", "--task-args", "rounds=1", tasks=["cchall_hallucimad"]) == 0
    records = _records(tmp_path / "one")
    assert all(not _debate(r)[0] for r in records.values())  # opening, then the judge
    assert _result(tmp_path / "one", "cchall_hallucimad")["task_args"] == {"rounds": 1}
    assert not any(text.startswith("Your previous answer") for text in CALLS)
    for bad in ("rounds=0", "rounds=6"):
        assert _run(data, tmp_path / "bad", "--task-args", bad, tasks=["cchall_hallucimad"]) == 2
        assert f"task cchall_hallucimad step 'affirmative': rounds must be 1 to 5; got {bad[-1]}" \
            in capsys.readouterr().err
    assert _run(data, tmp_path / "bad", "--task-args", "description_tokens=0", tasks=["cchall_vdgd"]) == 2
    assert "step 'describe': max_new_tokens must be >= 1; got 0" in capsys.readouterr().err


def test_a_run_killed_in_the_judge_step_resumes_there_and_matches_an_unbroken_run(mini_run, tmp_path):
    reference, data = mini_run
    out = tmp_path / "run"
    with pytest.raises(Killed):
        _run(data, out, "--batch-size", "3", "--model-args", "pretrained=x,kill_on=You are judge",
             tasks=["cchall_hallucimad"])
    journal = store.read_store(out, store.STEPS).records.values()
    assert "judge" not in {r["step"] for r in journal} and not (out / "samples.jsonl").exists()
    CALLS.clear()
    assert _run(data, out, "--batch-size", "3", tasks=["cchall_hallucimad"]) == 0
    # every judge is asked; of the debate, only the conversations not journalled before the kill
    debated = sum(len(step["prompts"]) for r in _records(reference, "cchall_hallucimad").values()
                  for name, step in r["steps"].items() if name != "judge")
    assert sum(text.startswith("You are judge") for text in CALLS) == 9
    assert 0 < sum(text.startswith("You are a debater") for text in CALLS) == \
        debated - sum(len(r["prompts"]) for r in journal) < debated
    assert _records(out) == _records(reference, "cchall_hallucimad")
    assert _result(out, "cchall_hallucimad")["metrics"] == _result(reference, "cchall_hallucimad")["metrics"]


def test_strategy_prompts_keep_the_authors_wording():
    row = dict(zip(("question", "response1", "response2", "choice"),
                   ("What is there?", "A dog.", "Un chat.", mini_cchall.CHOICE)))
    from hallubench.benchmarks.cchall import direct_prompt

    assert get_task("cchall_sro").prompt(row) == direct_prompt(row)
    # HalluciMAD's player_meta_prompt (code/config-prompt.json), copied independently, with the task as its topic
    assert strategies.DEBATER.startswith(
        "You are a debater. Hello and welcome to the visual question-answering competition, which will be conducted "
        "in a debate format. You can agree or disagree with others' viewpoints, as our objective is to find the "
        "correct answer. The criteria for a good answer are as follows:\n1. Ensure that your output aligns with the "
        "content in the image.\n2. Only output content that is visible in the image.\n")
    assert strategies.DEBATER.endswith("debate competition is: {topic}\nPlease do not repeat the question.\n")
    # SRO's closing instruction (code/sro_eval_pope_gemini.py), verbatim
    assert "?\nAfter you have answered the previous questions satisfactorily, please proceed to consider the " \
           "following ones:\n" in strategies.REFLECTION
    assert all(get_task(name).parser == "cchall_final_answer" and get_task(name).metric == "cchall" for name in TASKS)


# The real pipeline on a tiny random checkpoint: noise answers, unparsed and counted, every step of every item run.
def test_each_strategy_runs_on_a_tiny_random_checkpoint(tiny_checkpoint, mini_run, tmp_path):
    model = ("hf", f"pretrained={tiny_checkpoint('qwen2_vl')},dtype=float32")
    out = tmp_path / "run"
    assert _run(mini_run[1], out, "--limit", "2", "--gen-kwargs", "max_new_tokens=4", "--task-args", "rounds=2",
                model=model) == 0
    for task in TASKS:
        records = _records(out, task)
        assert len(records) == 2 and all(r["error"] is None and r["outputs"] for r in records.values())
        result = _result(out, task)
        assert {"accuracy", "macro_f1"} <= set(result["metrics"])
        assert result["n_unparsed"] == sum(r["parsed"] is None for r in records.values())
        assert result["n_unparsed"] + result["n_scored"] == 2
    for record in _records(out, "cchall_sro").values():
        assert record["steps"]["reflect"]["prompts"][0]["history"][0][1] == record["steps"]["answer"]["outputs"][0][0]
