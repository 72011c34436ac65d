"""Generation bookkeeping with test doubles: per-sample seeds, batching, GenerationError isolation."""
import json
from pathlib import Path

import pytest

from hallubench.benchmarks import get_task
from hallubench.cli.main import main
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

    def generate(self, conversations, settings, seeds=None):
        self.calls.append((len(conversations), settings, seeds))
        texts = [conv[0].content[-1].text for conv in conversations]
        for index, text in enumerate(texts):
            if "FAIL" in text:
                raise GenerationError(f"cannot answer {text!r}", index=index)
        return [[f"yes {text}"] * settings.n for text in texts]


class PartialModelDouble(ScriptedModelDouble):
    """Test double: like ScriptedModelDouble, but tries every conversation and reports the others as `partial`."""

    def generate(self, conversations, settings, seeds=None):
        self.calls.append((len(conversations), settings, seeds))
        outputs = [None if "FAIL" in conv[0].content[-1].text else [f"yes {conv[0].content[-1].text}"] * settings.n
                   for conv in conversations]
        if None in outputs:
            raise GenerationError("cannot answer", index=outputs.index(None), partial=outputs)
        return outputs


def _items(task_name, questions, options):
    task = get_task(task_name)
    main, extra = effective_settings(task, options)
    rows = [{"id": f"q{i}", "question": q, "answer": "yes", "sub_category": "audio-language", "granularity": "object-level",
             "video_path": None, "audio_path": None} for i, q in enumerate(questions)]
    return [WorkItem(task, row, Path("."), f"k{i}", sample_seed(options.seed, task.name, row["id"]), main, extra)
            for i, row in enumerate(rows)]


def test_sampled_tasks_are_batched_with_each_samples_own_seed():
    options = RunOptions(modality="audio-only")
    model = ScriptedModelDouble()
    records = run_batch(model, _items("cmm", ["Is it a dog?", "Is it a cat?"], options), options)
    [(count, settings, seeds)] = model.calls
    assert count == 2 and settings.temperature == 0.2
    assert seeds == [r["seed"] for r in records] == [sample_seed(1234, "cmm", "q0"), sample_seed(1234, "cmm", "q1")]
    assert records[0]["outputs"] == ["yes Is it a dog? Answer with yes or no."] and records[0]["parsed"] == "yes"


def test_greedy_batches_and_a_failing_sample_is_isolated_and_recorded():
    options = RunOptions(modality="audio-only", gen_kwargs={"temperature": 0.0})
    model = ScriptedModelDouble()
    records = run_batch(model, _items("cmm", ["Is it a dog?", "FAIL here", "Is it a cat?"], options), options)
    assert model.calls[0][0] == 3  # one batched call, then one call per sample after the error
    assert [(n, seeds) for n, _, seeds in model.calls[1:]] == [(1, [r["seed"]]) for r in records]
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
    (_, greedy, greedy_seeds), (_, sampled, sampled_seeds) = model.calls
    assert greedy.temperature == 0.0 and (sampled.temperature, sampled.top_p, sampled.n) == (1.0, 0.9, 3)
    assert greedy_seeds == [item.seed] and sampled_seeds == [item.seed + 1] and len(record["samples"]) == 3
    assert record["reference"] == "a red ball" and record["media"] == {}


def test_partial_outputs_are_kept_and_only_the_failed_sample_is_asked_again():
    options = RunOptions(modality="audio-only", num_samples=2)
    model = PartialModelDouble()
    items = _items("cmm", ["Is it a dog?", "FAIL here", "Is it a cat?"], options)
    records = run_batch(model, items, options)
    assert [(n, seeds) for n, _, seeds in model.calls] == [(3, [item.seed for item in items]), (1, [items[1].seed])]
    assert records[1]["error"]["type"] == "generation" and records[1]["outputs"] == []
    assert [r["outputs"] for r in (records[0], records[2])] == [["yes Is it a dog? Answer with yes or no."],
                                                                ["yes Is it a cat? Answer with yes or no."]]


def test_failed_extra_samples_make_the_sample_an_error():
    options = RunOptions(num_samples=2)
    task = get_task("avhallubench_visual")
    main_settings, extra = effective_settings(task, options)
    items = [WorkItem(task, {"id": f"v{i}", "video": None, "visual_description": "x"}, Path("."), f"k{i}", seed,
                      main_settings, extra) for i, seed in enumerate((10, 20))]

    class FailingSamplesDouble(ScriptedModelDouble):
        def generate(self, conversations, settings, seeds=None):
            if settings.do_sample and 21 in seeds:
                self.calls.append((len(conversations), settings, seeds))
                raise GenerationError("sampling failed")
            return super().generate(conversations, settings, seeds)

    model = FailingSamplesDouble()
    records = run_batch(model, items, options)
    assert [seeds for _, _, seeds in model.calls] == [[10, 20], [11, 21], [11], [21]]
    assert records[0]["error"] is None and len(records[0]["samples"]) == 2
    assert records[1]["error"]["message"] == "sampling failed" and records[1]["outputs"] == []


def test_batch_time_is_shared_out():
    options = RunOptions(modality="audio-only", gen_kwargs={"temperature": 0.0})
    records = run_batch(ScriptedModelDouble(), _items("cmm", ["a?", "b?"], options), options)
    assert records[0]["time_s"] == records[1]["time_s"] > 0


def test_sample_keys_change_with_the_prompt_and_settings_and_nothing_else(monkeypatch, tmp_path):
    import dataclasses

    from hallubench.harness import plan as plan_module

    rows = [{"id": "q0", "question": "Is it a dog?"}, {"id": "q1", "question": "Is it a cat?"}]
    monkeypatch.setattr(plan_module, "dataset_dir", lambda data_dir, task, given=None: tmp_path)
    monkeypatch.setattr(plan_module, "load_rows", lambda folder, task, limit, dataset: (rows[:limit], len(rows)))
    card = type("Card", (), {"meta": {}, "data_files": lambda self, *names: []})()
    monkeypatch.setattr(plan_module, "dataset_folder", lambda folder: card)  # a folder of no files
    monkeypatch.setattr(plan_module, "check_rows", lambda task, folder, rows: None)  # rows of a prompt, no media
    cmm = get_task("cmm")

    def keys(task, **options):
        items, _ = plan_module.plan([task], plan_module.read_rows([task], tmp_path, RunOptions(**options)),
                                     RunOptions(**options), "fp-1")
        return [item.key for item in items]

    base = keys(cmm)
    assert len(set(base)) == 2 and keys(cmm) == base and keys(cmm, limit=1) == base[:1]
    edited = dataclasses.replace(cmm, prompt=lambda row: row["question"] + " Answer yes or no.")
    assert set(keys(edited)).isdisjoint(base)  # an edited prompt is a different sample
    for changed in ({"seed": 1}, {"gen_kwargs": {"max_new_tokens": 8}}, {"num_frames": 4}):
        assert set(keys(cmm, **changed)).isdisjoint(base)


class SeededModelDouble:
    """Test double for `run`: the answer is a function of the prompt and the sample's seed; counts calls."""

    name, fingerprint, accepts = "seeded-double", "seeded-double-1", frozenset({"image", "video", "audio"})
    calls: list = []

    def __init__(self, model):
        pass

    def generate(self, conversations, settings, seeds=None):
        SeededModelDouble.calls.append(len(conversations))
        texts = [" ".join(p.text for m in conv for p in m.content if hasattr(p, "text")) for conv in conversations]
        return [[f"{'yes' if (seed + k) % 3 else 'no'} ({seed}, {len(text)})" for k in range(settings.n)]
                for text, seed in zip(texts, seeds)]


@pytest.fixture(scope="module")
def cmm_data(tmp_path_factory):
    from hallubench.builders import build
    from hallubench.builders.mini import make_release

    root = tmp_path_factory.mktemp("cmm")
    build("cmm", make_release("cmm", root / "release"), root / "datasets" / "cmm")
    return root / "datasets"


def test_sampled_task_run_makes_one_call_per_batch_with_the_outputs_of_batch_size_1(cmm_data, tmp_path, monkeypatch):
    from hallubench import models

    monkeypatch.setitem(models.MODELS, "seeded_double", SeededModelDouble)

    def run(size):
        SeededModelDouble.calls = []
        out = tmp_path / f"bs{size}"
        assert main(["run", "--model", "seeded_double", "--model-args", "pretrained=none", "--data-dir",
                     str(cmm_data), "--output-dir", str(out), "--tasks", "cmm", "--limit", "10",
                     "--batch-size", str(size)]) == 0
        lines = (out / "samples.jsonl").read_text().splitlines()
        return SeededModelDouble.calls, [{k: v for k, v in json.loads(line).items() if k != "time_s"}
                                         for line in lines]

    single_calls, singles = run(1)
    calls, batched = run(4)
    assert len(singles) == 10 and singles[0]["generation"]["temperature"] > 0
    assert single_calls == [1] * 10 and calls == [4] * (10 // 4) + [10 % 4]  # ceil(10 / 4) calls
    assert batched == singles and len({r["seed"] for r in singles}) == 10


def test_a_loop_stopped_early_leaves_no_look_ahead_thread_behind(tmp_path):
    """Ctrl-C (or any error) in the middle of the loop: its look-ahead threads are stopped before the error leaves
    generate_all, not later by the garbage collector in some other thread."""
    import threading

    from hallubench.harness import store

    class InterruptedModel(ScriptedModelDouble):
        def generate(self, conversations, settings, seeds=None):
            if len(self.calls) == 2:
                raise KeyboardInterrupt("SIGINT")
            return super().generate(conversations, settings, seeds)

    with pytest.raises(KeyboardInterrupt):
        _generate_all(InterruptedModel(), 12, tmp_path)
    assert not [t.name for t in threading.enumerate() if t.name.startswith("hallubench-prefetch")]
    assert len(store.read_store(tmp_path).records) == 2  # the batches answered before the interrupt are kept


def _generate_all(model, n: int, run_dir):
    """The run's generation loop over n one-sample CMM batches into `run_dir`, its writer closed whatever happens."""
    from hallubench.harness import store
    from hallubench.harness.program import StepJournal
    from hallubench.harness.runner import generate_all

    options = RunOptions(modality="audio-only")
    batches = [[item] for item in _items("cmm", [f"question {i}?" for i in range(n)], options)]
    writer = store.SampleWriter(store.rank_file(run_dir, 0))
    try:
        generate_all(model, {}, batches, options, StepJournal(run_dir, 0), writer)
    finally:
        writer.close()


@pytest.mark.parametrize("interrupted", [False, True])
def test_the_gil_is_handed_back_sooner_while_generating_and_the_interval_put_back_after(tmp_path, interrupted):
    import contextlib
    import sys

    from hallubench.harness.prefetch import SWITCH_INTERVAL_S

    seen = []

    class WatchingModel(ScriptedModelDouble):
        def generate(self, conversations, settings, seeds=None):
            seen.append(sys.getswitchinterval())
            if interrupted and len(self.calls) == 1:
                raise KeyboardInterrupt("SIGINT")
            return super().generate(conversations, settings, seeds)

    before = sys.getswitchinterval()
    with pytest.raises(KeyboardInterrupt) if interrupted else contextlib.nullcontext():
        _generate_all(WatchingModel(), 3, tmp_path)
    assert seen and all(interval == pytest.approx(SWITCH_INTERVAL_S) for interval in seen)
    assert sys.getswitchinterval() == before != pytest.approx(SWITCH_INTERVAL_S)


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_paused_for_the_runs_end_and_left_as_it_was(enabled):
    import gc

    from hallubench.harness.runner import cycles_collected_after

    (gc.enable if enabled else gc.disable)()
    try:
        with pytest.raises(ValueError), cycles_collected_after():
            assert not gc.isenabled()
            raise ValueError("scoring failed")
        assert gc.isenabled() == enabled
    finally:
        gc.enable()


def test_loops_on_several_threads_put_the_switch_interval_back_when_the_last_one_leaves():
    import sys
    import threading

    from hallubench.harness.prefetch import SWITCH_INTERVAL_S, quick_gil_handoffs

    before = sys.getswitchinterval()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with quick_gil_handoffs():
            first_in.set()
            second_in.wait()
        first_out.set()

    def second():
        first_in.wait()
        with quick_gil_handoffs():
            second_in.set()
            first_out.wait()
            seen["after the first left"] = sys.getswitchinterval()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen["after the first left"] == pytest.approx(SWITCH_INTERVAL_S)
    assert sys.getswitchinterval() == before
