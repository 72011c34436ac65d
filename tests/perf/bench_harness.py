"""Harness throughput and its overhead over a plain processor + generate() loop on the same inputs, same run.

Run: python tests/perf/bench_harness.py   (not collected by pytest: the name is not test_*)

Workload: the embedded mini benchmarks (built into a temp folder by `ensure_mini`), tasks cmm and
avhallubench_visual (53 samples: video frames plus a wav or the mp4's own audio track), the tiny random
Qwen2.5-Omni thinker of hallubench.testing.tiny_models, greedy with MAX_NEW_TOKENS new tokens, NUM_FRAMES frames,
no stochastic samples (--num-samples 0), one torch thread (2 shared cores; the numbers are noisy).

Paths, each at batch sizes 1 and 8:
  - harness run(): `hallubench.harness.runner.run` end to end into a fresh run folder (loads the model,
    plans, decodes media and runs the processor on two look-ahead threads, each with its own processor copy,
    generates, appends each record to the store, merges, scores, writes results.json and results.png);
  - harness gen loop: the same run's generation loop alone (`run.generation_s` in results.json);
  - direct: the baseline. The conversations are built beforehand with the harness's own `plan` and
    `media.prepare`, batched as the harness batches them, then per batch the adapter's processor call
    (`HFChatModel.prepare`: chat template + processor) and `model.generate` + `batch_decode`, in a loop;
  - direct + media: the direct time plus the time `media.prepare` took to build those conversations.
The script asserts that harness and direct outputs are equal sample by sample at each batch size, so both
do the same decoding work. After an untimed warm-up of each path, each configuration runs REPEATS times;
printed are the best times, samples/s, the harness/direct time ratios, the bs8/bs1 speed-up, and where
the time went (timers wrapped around the harness's steps, a microsecond per call; "in media" timers are
parts of "media decode"; "beside the model" timers ran on background threads, so they are not added to the rest). The warm-up harness run is broken down too: it pays what the first run of a
CLI process pays once (imports, decode helper start, first forward passes).
"""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TQDM_DISABLE", "1")  # transformers' weight-loading bars (run()'s own bar is redirected)

import io  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from contextlib import redirect_stderr  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

from hallubench.harness import generate as harness_generate, media, preflight, runner, store  # noqa: E402
from hallubench.harness.data import ensure_mini  # noqa: E402
from hallubench.harness.options import RunOptions  # noqa: E402
from hallubench.harness.plan import plan, read_rows  # noqa: E402
from hallubench.loaders import audio as loaders_audio  # noqa: E402
from hallubench.models import get_model  # noqa: E402
from hallubench.models.hf import HFChatModel  # noqa: E402
from hallubench.testing.tiny_models import make_tiny_model  # noqa: E402
from direct_generation import direct_once  # noqa: E402

TASKS = ["cmm", "avhallubench_visual"]
BATCH_SIZES = (1, 8)
MAX_NEW_TOKENS = 16
NUM_FRAMES = 4
REPEATS = 3  # best of 3: the machine is shared, the minimum is the least disturbed run
# Timers inside "media decode" (shown, but not added again when computing the untimed rest).
NESTED = ("  load_video", "  load_audio", "  ffprobe (mp4 audio)")
AHEAD = "processor ahead"
# Timers of work on background threads, beside the model (shown, not added when computing the untimed rest).
BESIDE = ("media decode", AHEAD, "store append (fsync)", "environment (git)")


class Timers:
    """Seconds spent in wrapped functions, by label, since the last `take()`."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def wrap(self, owner, attr: str, label: str) -> None:
        inner = getattr(owner, attr)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - start

        setattr(owner, attr, timed)

    def take(self) -> dict[str, float]:
        taken, self.seconds = dict(self.seconds), defaultdict(float)
        return taken


def instrument_harness(timers: Timers) -> None:
    """Timers around the harness steps `runner.run` calls (by the names it looks them up under)."""
    timers.wrap(runner, "load_checked", "model load")
    timers.wrap(runner, "make_plan", "plan (checks, rows)")
    timers.wrap(runner, "plot_results", "results.png")
    timers.wrap(harness_generate, "prepare", "media decode")
    timers.wrap(media, "load_video", NESTED[0])
    timers.wrap(media, "load_audio", NESTED[1])
    timers.wrap(loaders_audio, "probe", NESTED[2])
    timers.wrap(HFChatModel, "generate", "model (generate; its processor calls ran ahead)")
    timers.wrap(HFChatModel, "prepare_ahead", AHEAD)
    timers.wrap(store.SampleWriter, "append_all", "store append (fsync)")
    timers.wrap(store, "merge", "store merge")
    timers.wrap(runner, "score", "scoring (evaluate)")
    timers.wrap(runner, "environment", "environment (git)")


def run_options(model_dir: Path, data_dir: Path, batch_size: int, out: Path) -> RunOptions:
    return RunOptions(model="hf", model_args={"model": str(model_dir), "dtype": "float32"}, tasks=TASKS,
                      output_dir=out, data_dir=data_dir, batch_size=batch_size, num_samples=0,
                      num_frames=NUM_FRAMES, gen_kwargs={"max_new_tokens": MAX_NEW_TOKENS, "temperature": 0.0})


def harness_once(options: RunOptions, timers: Timers) -> tuple[float, float, dict[tuple[str, str], str], dict]:
    """Wall time of run(), its generation-loop time, the outputs by (task, id), and the phase timers."""
    timers.take()
    start = time.perf_counter()
    with redirect_stderr(io.StringIO()):  # the run's progress bar
        results = runner.run(options)
    wall = time.perf_counter() - start
    phases = timers.take()
    records = [json.loads(line) for line in (options.output_dir / store.MERGED).read_text().splitlines()]
    errors = [(r["task"], r["id"], r["error"]) for r in records if r["error"] is not None]
    assert not errors, f"harness records with errors: {errors[:3]}"
    assert results.run.torch_threads == 1, results.run.torch_threads
    return wall, results.run.generation_s, {(r["task"], r["id"]): r["outputs"][0] for r in records}, phases


def build_conversations(model: HFChatModel, data_dir: Path, options: RunOptions):
    """Work items in harness order, each one's conversation by key (built by the harness's media.prepare), and
    the seconds media.prepare took."""
    tasks = preflight.resolve_tasks(options.tasks)
    items, _ = plan(tasks, read_rows(tasks, data_dir, options), options, model.fingerprint)
    start = time.perf_counter()
    convs = {item.key: media.prepare(item.task, item.row, item.dataset_dir, options)[0] for item in items}
    return items, convs, time.perf_counter() - start


def print_parts(label: str, total: float, parts: dict[str, float]) -> None:
    untimed = total - sum(v for k, v in parts.items() if k not in (*NESTED, *BESIDE))
    shown = ", ".join(f"{k.strip()}{' (in media)' if k in NESTED else ' (beside the model)' if k in BESIDE else ''} "
                      f"{v:.2f}" for k, v in parts.items())
    print(f"  {label}: {shown}; rest {untimed:.2f}")


def main() -> None:
    torch.set_num_threads(1)
    timers = Timers()
    instrument_harness(timers)
    with tempfile.TemporaryDirectory(prefix="bench_harness-") as tmp:
        tmp = Path(tmp)
        data_dir = ensure_mini(tmp / "mini")
        model_dir = make_tiny_model("qwen2_5_omni", tmp)
        run_number = itertools.count()

        def options(batch_size: int) -> RunOptions:
            return run_options(model_dir, data_dir, batch_size, tmp / "runs" / f"run{next(run_number)}")

        # Untimed warm-up; it pays what the first run of a CLI process pays (imports, decode helper start, metric load).
        cold_wall, _, _, cold_parts = harness_once(options(1), timers)
        chat = {bs: get_model("hf", model=str(model_dir), dtype="float32", batch_size=bs) for bs in BATCH_SIZES}
        items, convs, _ = build_conversations(chat[1], data_dir, options(1))
        for bs in BATCH_SIZES:
            direct_once(chat[bs], items, convs, bs, MAX_NEW_TOKENS)
        best: dict[tuple[str, int], float] = {}
        breakdown: dict[tuple[str, int], dict[str, float]] = {}

        def keep(label: str, bs: int, seconds: float, parts: dict[str, float]) -> None:
            if (label, bs) not in best or seconds < best[label, bs]:
                best[label, bs], breakdown[label, bs] = seconds, parts

        for _ in range(REPEATS):
            for bs in BATCH_SIZES:
                wall, generation_s, harness_out, phases = harness_once(options(bs), timers)
                keep("harness run()", bs, wall, phases)
                keep("harness gen loop", bs, generation_s, {})
                steps, direct_out = direct_once(chat[bs], items, convs, bs, MAX_NEW_TOKENS)
                differ = [key for key in harness_out if direct_out.get(key) != harness_out[key]]
                assert not differ and len(direct_out) == len(harness_out), f"bs {bs}: outputs differ for {differ[:5]}"
                keep("direct", bs, sum(steps.values()), steps)
                _, _, media_s = build_conversations(chat[bs], data_dir, options(bs))
                keep("direct + media", bs, sum(steps.values()) + media_s, {"media (media.prepare, first)": media_s, **steps})

    n = len(items)
    print(f"workload: {n} samples ({', '.join(TASKS)}), tiny random qwen2_5_omni thinker, greedy, max_new_tokens "
          f"{MAX_NEW_TOKENS}, {NUM_FRAMES} frames, torch threads {torch.get_num_threads()}, best of {REPEATS} "
          "(shared noisy machine: differences under ~10% are noise); harness and direct outputs asserted equal")
    print(f"{'path':18s} {'bs':>3s} {'seconds':>8s} {'samples/s':>10s} {'/ direct':>9s} {'/ direct+media':>15s} "
          f"{'bs8/bs1 speed':>14s}")
    for label in ("direct", "direct + media", "harness gen loop", "harness run()"):
        for bs in BATCH_SIZES:
            seconds = best[label, bs]
            print(f"{label:18s} {bs:3d} {seconds:8.2f} {n / seconds:10.1f} {seconds / best['direct', bs]:8.2f}x "
                  f"{seconds / best['direct + media', bs]:14.2f}x {best[label, BATCH_SIZES[0]] / seconds:13.2f}x")
    print("where the time went (seconds; the best repetition of each):")
    for label in ("direct + media", "harness run()"):
        for bs in BATCH_SIZES:
            print_parts(f"{label} bs {bs}", best[label, bs], breakdown[label, bs])
    print_parts(f"first run in the process (warm-up, bs 1, {n / cold_wall:.1f} samples/s), {cold_wall:.2f} s",
                cold_wall, cold_parts)


if __name__ == "__main__":
    main()
