"""Generation bookkeeping with test doubles: per-sample seeds, batching, GenerationError isolation."""
from pathlib import Path

from hallubench.benchmarks import get_task
from hallubench.harness.generate import run_batch
from hallubench.harness.options import RunOptions
from hallubench.harness.plan import WorkItem, effective_settings
from hallubench.harness.sharding import sample_seed
from hallubench.models.protocol import GenerationError


class ScriptedModelDouble:
    """Test double: answers "yes <question>" and fails on questions containing "FAIL"; logs its calls."""

    name, fingerprint = "double", "double-1"

    def __init__(self):
        self.calls = []

    def generate(self, conversations, settings):
        self.calls.append((len(conversations), settings))
        texts = [conv[0].content[-1].text for conv in conversations]
        for index, text in enumerate(texts):
            if "FAIL" in text:
                raise GenerationError(f"cannot answer {text!r}", index=index)
        return [[f"yes {text}"] * settings.n for text in texts]


def _items(task_name, questions, options):
    task = get_task(task_name)
    main, extra = effective_settings(task, options)
    rows = [{"id": f"q{i}", "question": q, "answer": "yes", "sub_category": "audio-language",
             "video_path": None, "audio_path": None} for i, q in enumerate(questions)]
    return [WorkItem(task, row, Path("."), f"k{i}", sample_seed(options.seed, task.name, row["id"]), main, extra)
            for i, row in enumerate(rows)]


def test_sampled_tasks_generate_one_conversation_per_call_with_its_own_seed():
    options = RunOptions(modality="audio-only")
    model = ScriptedModelDouble()
    records = run_batch(model, _items("cmm", ["Is it a dog?", "Is it a cat?"], options), options)
    assert [n for n, _ in model.calls] == [1, 1]
    assert [s.seed for _, s in model.calls] == [r["seed"] for r in records] == [sample_seed(1234, "cmm", "q0"),
                                                                                 sample_seed(1234, "cmm", "q1")]
    assert records[0]["outputs"] == ["yes Is it a dog? Answer with yes or no."] and records[0]["parsed"] == "yes"


def test_greedy_batches_and_a_failing_sample_is_isolated_and_recorded():
    options = RunOptions(modality="audio-only", gen_kwargs={"temperature": 0.0})
    model = ScriptedModelDouble()
    records = run_batch(model, _items("cmm", ["Is it a dog?", "FAIL here", "Is it a cat?"], options), options)
    assert model.calls[0][0] == 3  # one batched call, then one call per sample after the error
    assert [n for n, _ in model.calls[1:]] == [1, 1, 1]
    assert records[1]["error"]["type"] == "generation" and "FAIL here" in records[1]["error"]["message"]
    assert records[1]["outputs"] == [] and records[1]["parsed"] is None
    assert [r["error"] for r in (records[0], records[2])] == [None, None]
    assert records[2]["outputs"] == ["yes Is it a cat? Answer with yes or no."]


def test_stochastic_samples_use_a_different_seed_and_the_sample_settings():
    options = RunOptions(num_samples=3)
    task = get_task("avhallubench_visual")
    main, extra = effective_settings(task, options)
    item = WorkItem(task, {"id": "v1", "video": None, "visual_description": "a red ball"}, Path("."), "k",
                    sample_seed(1234, task.name, "v1"), main, extra)
    model = ScriptedModelDouble()
    record = run_batch(model, [item], options)[0]
    (_, greedy), (_, sampled) = model.calls
    assert greedy.temperature == 0.0 and (sampled.temperature, sampled.top_p, sampled.n) == (1.0, 0.9, 3)
    assert sampled.seed != greedy.seed and len(record["samples"]) == 3
    assert record["reference"] == "a red ball" and record["media"] == {}


def test_batch_time_is_shared_out():
    options = RunOptions(modality="audio-only", gen_kwargs={"temperature": 0.0})
    records = run_batch(ScriptedModelDouble(), _items("cmm", ["a?", "b?"], options), options)
    assert records[0]["time_s"] == records[1]["time_s"] > 0


def test_sample_keys_change_with_the_prompt_and_settings_and_nothing_else(monkeypatch, tmp_path):
    import dataclasses

    from hallubench.harness import plan as plan_module

    rows = [{"id": "q0", "question": "Is it a dog?"}, {"id": "q1", "question": "Is it a cat?"}]
    monkeypatch.setattr(plan_module, "dataset_dir", lambda data_dir, task: tmp_path)
    monkeypatch.setattr(plan_module, "load_rows", lambda folder, task, limit: (rows[:limit], len(rows)))
    cmm = get_task("cmm")

    def keys(task, **options):
        items, _ = plan_module.plan([task], tmp_path, RunOptions(**options), "fp-1")
        return [item.key for item in items]

    base = keys(cmm)
    assert len(set(base)) == 2 and keys(cmm) == base and keys(cmm, limit=1) == base[:1]
    edited = dataclasses.replace(cmm, prompt=lambda row: row["question"] + " Answer yes or no.")
    assert set(keys(edited)).isdisjoint(base)  # an edited prompt is a different sample
    for changed in ({"seed": 1}, {"gen_kwargs": {"max_new_tokens": 8}}, {"num_frames": 4}):
        assert set(keys(cmm, **changed)).isdisjoint(base)
