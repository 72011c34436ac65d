"""Multi-step tasks (benchmarks/steps.py, harness/program.py) with a deterministic model double: steps run in order
and are recorded, a run killed in a middle step resumes at that step and ends with the samples of an unbroken run
(batch sizes 1 and 3), helper roles, --task-args, and a failing step."""
import hashlib
import json
from pathlib import Path

import pytest

from hallubench import models
from hallubench.benchmarks import MediaSpec, Task
from hallubench.benchmarks.steps import Program, Prompt, Step
from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.harness.program import conversation
from hallubench.models.protocol import GenerationError, GenerationSettings, ImagePart, TextPart
from hallubench.registry import PARSERS, TASKS

CALLS: list[tuple[str, list[str]]] = []  # (tag, last user text of each conversation) per generate call


class Killed(BaseException):
    """Stands in for kill -9: nothing in the harness catches it."""


class StepModelDouble:
    """Answers every conversation with a hash of all its turns (and its seed when sampling), so outputs depend on
    exactly what the harness sends. `kill_on` / `fail_on`: raise Killed, or a GenerationError for that
    conversation, when a last user text starts with it."""

    accepts = frozenset()

    def __init__(self, model: str, tag: str = "T", kill_on: str = "", fail_on: str = "", **_):
        self.name, self.fingerprint, self.tag = f"double:{tag}", f"double-{tag}", tag
        self.kill_on, self.fail_on = kill_on, fail_on

    def generate(self, conversations, settings, seeds=None):
        seeds = seeds or [settings.seed] * len(conversations)
        lasts = [conv[-1].content[-1].text for conv in conversations]
        CALLS.append((self.tag, lasts))
        if self.kill_on and any(text.startswith(self.kill_on) for text in lasts):
            raise Killed()
        out = []
        for index, (conv, seed, last) in enumerate(zip(conversations, seeds, lasts)):
            if self.fail_on and last.startswith(self.fail_on):
                raise GenerationError(f"cannot answer {last!r}", index=index)
            turns = [(m.role, p.text) for m in conv for p in m.content if isinstance(p, TextPart)]
            base = hashlib.sha256(json.dumps([turns, seed if settings.do_sample else None]).encode()).hexdigest()[:8]
            out.append([f"{self.tag}{base}-{i}" for i in range(settings.n)])
        return out


def _answers(row, done):
    return [f"Answer {i}: {done.first('restate')}" for i in range(done.args["k"])]


def _checks(row, done):
    # one check per answer, each a second turn after the restatement
    return [Prompt(f"Check: {out}", history=((row["question"], done.first("restate")),))
            for outputs in done.outputs["answers"] for out in outputs]


TOY = Task(
    name="toy_program", benchmark="sac3", config="prime", prompt=lambda row: f"Restate: {row['question']}",
    media=MediaSpec(), generation=GenerationSettings(max_new_tokens=8), parser="toy_program", metric=None,
    scored_by="nothing: a test",
    program=Program(steps=(
        Step("restate", lambda row, done: [f"Restate: {row['question']}"]),
        Step("answers", _answers, generation=lambda args: GenerationSettings(temperature=1.0, n=args["n"])),
        Step("check", _checks, model="checker"),
        Step("verify", lambda row, done: [f"Verify: {done.first('restate')}"], model="verifier"),
    ), helpers={"checker": "target", "verifier": None}, args={"k": 2, "n": 2}, answer="restate"),
)


def _register(patch):
    patch.setitem(TASKS, TOY.name, TOY)
    patch.setitem(PARSERS, "toy_program", lambda record: len(record["steps"]["check"]["outputs"]) or None)
    patch.setitem(models.MODELS, "step_double", StepModelDouble)


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    _register(monkeypatch)
    CALLS.clear()


def _run(data, out, *extra):
    return main(["run", "--model", "step_double", "--model-args", "pretrained=x", "--tasks", "toy_program",
                 "--data-dir", str(data), "--output-dir", str(out), *extra])


def _samples(run_dir):
    records, torn = store.read_jsonl(Path(run_dir) / "samples.jsonl")
    assert not torn
    return {r["id"]: {k: v for k, v in r.items() if k != "time_s"} for r in records}


@pytest.fixture(scope="module")
def reference(mini_datasets, tmp_path_factory):
    """An unbroken run at batch size 1 (the double's outputs do not depend on the batch)."""
    with pytest.MonkeyPatch.context() as patch:
        _register(patch)
        out = tmp_path_factory.mktemp("program") / "run"
        assert _run(mini_datasets, out) == 0
    return out


def test_steps_run_in_order_and_every_item_records_them(reference):
    samples = _samples(reference)
    assert len(samples) == 3
    for record in samples.values():
        steps = record["steps"]
        assert list(steps) == ["restate", "answers", "check"]  # the verifier step has no model: left out
        assert record["outputs"] == steps["restate"]["outputs"][0] and record["parsed"] == 4
        assert [len(o) for o in steps["answers"]["outputs"]] == [2, 2]
        assert len(set(sum(steps["answers"]["outputs"], []))) == 4  # each conversation and sample its own seed
        check = steps["check"]["prompts"][0]
        assert check["history"] == [[record["prompt"].removeprefix("Restate: "), record["outputs"][0]]]
        assert steps["check"]["model"] == "checker" and steps["check"]["model_fingerprint"] == "double-T"
        assert steps["answers"]["generation"]["temperature"] == 1.0
    steps, _ = store.read_jsonl(reference / "steps.jsonl")
    assert len(steps) == 9 and not list(reference.glob("steps_rank*"))


@pytest.mark.parametrize("batch", ["1", "3"])
def test_a_run_killed_in_a_middle_step_resumes_there_and_matches_an_unbroken_run(mini_datasets, reference, tmp_path,
                                                                                  batch):
    out = tmp_path / "run"
    with pytest.raises(Killed):
        _run(mini_datasets, out, "--batch-size", batch, "--model-args", "pretrained=x,kill_on=Check:")
    journal = store.read_store(out, store.STEPS).records
    assert {r["step"] for r in journal.values()} == {"restate", "answers"} and not (out / "samples.jsonl").exists()
    done_before = {(r["id"], r["step"]) for r in journal.values()}
    CALLS.clear()
    assert _run(mini_datasets, out, "--batch-size", batch) == 0
    asked = [text for _, texts in CALLS for text in texts]
    # nothing journalled is asked again: with batch 3 all three items had restated and answered before the kill
    assert sum(text.startswith("Restate:") for text in asked) == 3 - sum(s == "restate" for _, s in done_before)
    assert sum(text.startswith("Check:") for text in asked) == 12
    assert _samples(out) == _samples(reference)


def test_a_helper_role_gets_its_model_and_the_target_steps_are_reused(mini_datasets, reference, tmp_path):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(reference, out)
    assert _run(mini_datasets, out, "--helper", "verifier", "adapter=step_double,pretrained=x,tag=V") == 0
    # only the verify step ran (one conversation per item); every step of the target came from the journal
    assert [text.split(":")[0] for tag, texts in CALLS for text in texts] == ["Verify"] * 3
    assert {tag for tag, _ in CALLS} == {"V"}
    records, _ = store.read_jsonl(out / "samples.jsonl")
    new = [r for r in records if "verify" in r["steps"]]
    assert len(new) == 3 and all(r["steps"]["verify"]["outputs"][0][0].startswith("V") for r in new)
    old = _samples(reference)
    assert all(r["steps"]["check"] == old[r["id"]]["steps"]["check"] for r in new)


def test_task_args_are_checked_and_change_the_program(mini_datasets, tmp_path, capsys):
    assert _run(mini_datasets, tmp_path / "a", "--task-args", "k=3") == 0
    assert all(len(r["steps"]["check"]["outputs"]) == 6 for r in _samples(tmp_path / "a").values())
    result = json.loads((tmp_path / "a" / "results.json").read_text())["tasks"]["toy_program"]
    assert result["task_args"] == {"k": 3, "n": 2}
    for bad, message in [("k=two", "--task-args k (task toy_program): expected int like the default 2; got 'two'"),
                         ("kk=2", "--task-args: kk is not an option of the selected tasks (toy_program: k, n)"),
                         ("n=0", "--task-args: task toy_program step 'answers': n must be >= 1; got 0")]:
        assert _run(mini_datasets, tmp_path / "b", "--task-args", bad) == 2
        assert message in capsys.readouterr().err
    assert _run(mini_datasets, tmp_path / "b", "--helper", "judge", "pretrained=x") == 2
    assert "--helper judge: no selected task has a step for that role (they use: checker, verifier)" \
        in capsys.readouterr().err


def test_a_failing_step_is_an_error_record_and_a_rerun_retries_from_that_step(mini_datasets, tmp_path):
    out = tmp_path / "run"
    assert _run(mini_datasets, out, "--model-args", "pretrained=x,fail_on=Check:") == 1  # every sample failed
    records = _samples(out)
    assert all(r["error"]["type"] == "generation" and "step 'check'" in r["error"]["message"] for r in records.values())
    CALLS.clear()
    assert _run(mini_datasets, out) == 0
    asked = [text for _, texts in CALLS for text in texts]
    assert asked and all(text.startswith("Check:") for text in asked)
    assert all(r["error"] is None and r["parsed"] == 4 for r in _samples(out).values())


def test_a_conversation_puts_the_media_before_the_first_user_turn():
    from PIL import Image

    image = ImagePart(Image.new("RGB", (4, 4)))
    messages = conversation(Prompt("now?", history=(("first?", "yes"),)), [image])
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert messages[0].content == [image, TextPart("first?")] and messages[2].content == [TextPart("now?")]


def test_score_inputs_feed_the_metric_what_the_parser_read_and_summarize_shapes_the_metrics():
    from dataclasses import replace

    from hallubench.harness.scoring import score_task

    def record(i, parsed):
        return {"key": f"k{i}", "task": "toy_program", "id": f"i{i}", "error": None, "parsed": parsed,
                "outputs": ["x"], "generation": {}, "reference": True}

    judged = {"self_judgments": ["Guess: Yes"], "perturbed_judgments": ["Guess: No", "Guess: No"]}
    task = replace(TOY, metric="sac3", metric_args={"threshold": 0.5},
                   score_inputs=lambda r: {**r["parsed"], "labels": r["reference"]},
                   summarize=lambda out: {f"{name}_accuracy": value for name, value in out["accuracy"].items()},
                   fractions=("sc2_accuracy", "sac3_q_accuracy"))  # a task that summarizes declares its fractions
    records = [record(0, judged), record(1, None), record(2, {**judged, "self_judgments": ["Guess: No"]})]
    result = score_task(task, records, 3)
    assert (result.n_selected, result.n_unparsed, result.n_scored) == (3, 1, 2)
    assert result.metrics["sc2_accuracy"] == 0.5 and result.metrics["sac3_q_accuracy"] == 1.0
    assert "sc2_accuracy_stderr" in result.metrics and result.task_args == {"k": 2, "n": 2, "threshold": 0.5}
    raised = score_task(task, records, 3, {"threshold": 1.0})  # a --task-args metric arg replaces the task's
    assert raised.metrics["sac3_q_accuracy"] == 0.0 and raised.task_args["threshold"] == 1.0
