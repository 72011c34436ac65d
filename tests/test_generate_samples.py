"""A conversation's stochastic samples are rows of one `generate` call, which samples of other conversations share
(`batch_size` conversations a call), and they do not depend on the batch size.

End to end through `hallubench.harness.runner.run` on the mini avhallubench_visual task with a tiny random
Qwen2.5-Omni thinker (real processor, real `generate`), counting the calls that reach transformers.
"""
import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest
import transformers

from hallubench.harness.options import RunOptions
from hallubench.harness.runner import run
from hallubench.models import GenerationSettings, Message, TextPart, get_model

N = 4
LIMIT = 3
SMALL_VIDEO = {"videos_kwargs": {"size": {"shortest_edge": 56 * 56, "longest_edge": 112 * 112}}}


@pytest.fixture(scope="module")
def setup(mini_datasets, tiny_checkpoint):
    return mini_datasets, tiny_checkpoint("qwen2_5_omni")


@pytest.fixture
def generate_calls(monkeypatch):
    """Every call that reaches transformers' `generate`: (batch rows, num_return_sequences, do_sample)."""
    calls = []
    original = transformers.GenerationMixin.generate

    def counting(self, *args, **kwargs):
        calls.append((kwargs["input_ids"].shape[0], kwargs.get("num_return_sequences", 1), kwargs.get("do_sample")))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(transformers.GenerationMixin, "generate", counting)
    return calls


def _run(setup, tmp_path, batch_size, limit=LIMIT, folder=None):
    data_dir, model_dir = setup
    out = tmp_path / (folder or f"bs{batch_size}")
    options = RunOptions(model="hf", model_args={"model": str(model_dir), "dtype": "float32",
                                                 "processor_kwargs": SMALL_VIDEO},
                         tasks=["avhallubench_visual"], output_dir=out, data_dir=data_dir, limit=limit,
                         batch_size=batch_size, num_samples=N, num_frames=2, modality="visual-only",
                         gen_kwargs={"max_new_tokens": 6})
    run(options)
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    return {r["id"]: (r["outputs"], r["samples"]) for r in records if r["error"] is None}


def test_samples_share_batches_and_are_the_same_for_any_batch_size(setup, tmp_path, generate_calls):
    by_size = {}
    for batch_size in (1, N - 1, N, 2 * N):
        generate_calls.clear()
        by_size[batch_size] = _run(setup, tmp_path, batch_size)
        sampled = [call for call in generate_calls if call[2]]
        greedy = [rows for rows, _, do_sample in generate_calls if not do_sample]
        batches = [min(batch_size, LIMIT - start) for start in range(0, LIMIT, batch_size)]
        # Samples and greedy answers alike: batch_size conversations a call, each conversation's N samples as
        # N return sequences of its one row.
        assert sampled == [(rows, N, True) for rows in batches], batch_size
        assert greedy == batches, batch_size
    reference = by_size[1]
    assert len(reference) == LIMIT and all(len(samples) == N for _, samples in reference.values())
    assert any(len(set(samples)) > 1 for _, samples in reference.values())  # really sampled
    for batch_size, outputs in by_size.items():
        assert {k: s for k, (_, s) in outputs.items()} == {k: s for k, (_, s) in reference.items()}, batch_size
    # Resuming a folder that an earlier run (other batch size) partly filled makes only the missing samples.
    _run(setup, tmp_path, N - 1, limit=LIMIT - 1, folder="resume")
    generate_calls.clear()
    resumed = _run(setup, tmp_path, 2 * N, folder="resume")
    assert [call for call in generate_calls if call[2]] == [(1, N, True)]
    assert resumed == reference


def test_seeds_decide_the_samples_whatever_shares_the_batch(setup, generate_calls):
    model = get_model("hf", model=str(setup[1]), dtype="float32", batch_size=2)
    conversations = [[Message("user", [TextPart(text)])] for text in ("Is there a dog?", "Describe the clip.", "Hi")]
    settings = GenerationSettings(max_new_tokens=6, temperature=1.0, n=N)
    seeded = model.generate(conversations, settings, seeds=[1, 2, 3])
    assert generate_calls == [(2, N, True), (1, N, True)]  # batch_size 2: two calls for three conversations
    assert model.generate(conversations[1:], settings, seeds=[2, 3]) == seeded[1:]
    assert model.generate([conversations[0]], GenerationSettings(max_new_tokens=6, temperature=1.0, n=N, seed=1)) \
        == seeded[:1]
    assert model.generate(conversations, settings, seeds=[9, 2, 3])[0] != seeded[0]


def test_greedy_batches_group_the_shortest_prompts_of_each_task():
    from pathlib import Path

    from hallubench.benchmarks import get_task
    from hallubench.harness.plan import WorkItem
    from hallubench.harness.runner import _batches

    def items(task_name, questions):
        task = get_task(task_name)
        return [WorkItem(task, {"id": f"q{i}", "question": q}, Path("."), f"{task_name}{i}", i,
                         task.generation, None) for i, q in enumerate(questions)]

    cmm = items("cmm", ["a much longer question about the clip?", "short?", "a medium question?", "tiny"])
    batches = list(_batches(cmm + items("cmm", ["x"]), 2))
    assert [[item.row["question"] for item in batch] for batch in batches] == [
        ["x", "tiny"], ["short?", "a medium question?"], ["a much longer question about the clip?"]]
