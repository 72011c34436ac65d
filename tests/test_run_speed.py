"""CI guard on the run path's speed: the harness's generation loop (runner.generate_all: media decoded and the processor run ahead, records
built, parsed and written in the background) against direct generation with media on the same items (media.prepare,
then the adapter's processor call and model.generate, as tests/perf/bench_harness.py measures it), at batch sizes
1 and 8 on 8 samples of the mini CMM with a tiny random Qwen2.5-Omni thinker. Both run in this process,
interleaved, best of 5 (the machine is shared: ratios within one process are steadier than times); the outputs
are asserted equal, so both did the same decoding. It fails when the harness costs more than BOUND times direct,
a generous bound (bench_harness.py measures the whole run(), with its fixed costs, and README figures)."""
import dataclasses
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "perf"))
from direct_generation import direct_once  # noqa: E402

BOUND = 1.3
ROUNDS = 5  # best of 5: the suite runs beside other tests (xdist), and a busy core makes single rounds slow
MAX_NEW_TOKENS = 16


@pytest.fixture(scope="module")
def workload(tiny_checkpoint, mini_datasets, tmp_path_factory):
    import torch

    from hallubench.harness.options import RunOptions
    from hallubench.harness.preflight import make_plan
    from hallubench.harness.runner import load_model

    # One torch thread, as the bench: the loop's background work must not hide behind spare torch threads.
    options = RunOptions(model="hf", model_args={"model": str(tiny_checkpoint("qwen2_5_omni")), "dtype": "float32"},
                         tasks=["cmm"], data_dir=str(mini_datasets), limit=8, num_samples=0, num_frames=4,
                         gen_kwargs={"max_new_tokens": MAX_NEW_TOKENS, "temperature": 0.0},
                         output_dir=tmp_path_factory.mktemp("speed") / "unused")
    checked = make_plan(options, resume=False)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)

    def loaded(batch_size: int):
        """The options, the model (the adapter batches as the harness asks) and the work items, at `batch_size`."""
        at = dataclasses.replace(options, batch_size=batch_size)
        model = load_model(at, "cpu")
        return at, model, checked.work(model.fingerprint)[0]

    yield loaded
    torch.set_num_threads(threads)


def _harness(options, model, items, batch_size: int, folder: Path) -> tuple[float, dict]:
    from hallubench.harness import store
    from hallubench.harness.program import StepJournal
    from hallubench.harness.runner import _batches, generate_all

    writer = store.SampleWriter(store.rank_file(folder, 0))
    start = time.perf_counter()
    generate_all(model, {}, list(_batches(items, batch_size)), options, StepJournal(folder, 0), writer)
    seconds = time.perf_counter() - start
    writer.close()
    records = store.read_store(folder).records.values()
    assert not [r["error"] for r in records if r["error"]]
    return seconds, {(r["task"], r["id"]): r["outputs"][0] for r in records}


def _direct(options, model, items, batch_size: int) -> tuple[float, dict]:
    from hallubench.harness.media import prepare

    start = time.perf_counter()
    convs = {item.key: prepare(item.task, item.row, item.dataset_dir, options)[0] for item in items}
    media = time.perf_counter() - start
    steps, outputs = direct_once(model, items, convs, batch_size, MAX_NEW_TOKENS)
    return media + sum(steps.values()), outputs


@pytest.mark.parametrize("batch_size", [1, 8])
def test_the_generation_loop_costs_about_what_direct_generation_with_media_does(workload, batch_size, tmp_path):
    options, model, items = workload(batch_size)
    _direct(options, model, items, batch_size)  # warm-up: the decode helper, first forward passes
    best_harness = best_direct = float("inf")
    for round_ in range(ROUNDS):
        seconds, harness_out = _harness(options, model, items, batch_size, tmp_path / f"run{round_}")
        best_harness = min(best_harness, seconds)
        seconds, direct_out = _direct(options, model, items, batch_size)
        best_direct = min(best_direct, seconds)
        assert harness_out == direct_out  # the same work: equal greedy outputs, sample by sample
    ratio = best_harness / best_direct
    print(f"batch size {batch_size}: harness loop {best_harness:.2f} s, direct + media {best_direct:.2f} s: {ratio:.2f}x")
    assert ratio <= BOUND, (f"batch size {batch_size}: the harness's generation loop took {best_harness:.2f} s, "
                            f"direct generation with media {best_direct:.2f} s ({ratio:.2f}x > {BOUND}x)")
