"""What the standard errors in results.json cost: scoring a full-size task with and without the bootstrap.

Run: python tests/perf/bench_stderr.py   (not collected by pytest: the name is not test_*)

Workload: synthetic records the size of the real benchmarks, CMM (2,400 probes, pa_hr in official mode,
sub_category and sub_category × granularity groups) and CCHall (3,600 items, option letters and type text).
Printed per task: the time of `score_task` (one metric compute plus the bootstrap), the time of one metric
compute alone, and their ratio, i.e. what RESAMPLES recomputations of the metric add on this machine. Each time
is the best of 3: evaluate's `compute` waits up to 1 s for its cache-file lock while another process on the
machine computes the same metric, which is no cost of the bootstrap.
"""
from __future__ import annotations

import os
import random
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")

from hallubench.benchmarks import get_task  # noqa: E402
from hallubench.benchmarks.cchall import metric_inputs  # noqa: E402
from hallubench.harness.scoring import _per_item_kwargs, load_metric, score_task  # noqa: E402
from hallubench.harness.uncertainty import RESAMPLES  # noqa: E402

CHOICE = ("A. Non-hallucination\nB. Cross-modal, non-cross-lingual hallucination\n"
          "C. Cross-lingual, non-cross-modal hallucination\nD. Cross-modal, cross-lingual hallucination")


def cmm_records(n: int, rng: random.Random) -> list[dict]:
    subs = ["visual-language", "audio-language", "visual-audio-language", "overrely_visual_ignore_audio",
            "overrely_audio_ignore_visual", "overrely_language_ignore_visual"]
    out = []
    for i in range(n):
        sub, gran = rng.choice(subs), rng.choice(["object-level", "event-level"])
        out.append({"id": f"{i:05d}", "outputs": [rng.choice(["Yes.", "No", "There is no dog.", "I know"])],
                    "reference": rng.choice(["yes", "no"]), "group": [sub, f"{sub} / {gran}"], "error": None,
                    "metric_inputs": None, "generation": {}})
    return out


def cchall_records(n: int, rng: random.Random) -> list[dict]:
    labels = ["Non-hallucination", "Cross-modal, non-cross-lingual hallucination",
              "Cross-lingual, non-cross-modal hallucination", "Cross-modal, cross-lingual hallucination"]
    answers = ["Final Answer: A", "Reasoning... **Final Answer: B. Cross-modal, non-cross-lingual hallucination.**",
               "Final Answer: D", "I cannot tell."]
    inputs = metric_inputs({"choice": CHOICE})
    return [{"id": f"{i:05d}", "outputs": [rng.choice(answers)], "reference": rng.choice(labels),
             "group": rng.choice(["AMBER", "GQA", "XM3600", "xFlickrCO"]), "error": None, "metric_inputs": inputs,
             "generation": {}} for i in range(n)]


def best_of_3(call) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    rng = random.Random(0)
    print(f"bootstrap resamples: {RESAMPLES}")
    for name, records in (("cmm", cmm_records(2400, rng)), ("cchall", cchall_records(3600, rng))):
        task = get_task(name)
        metric = load_metric(task.metric)
        kwargs = _per_item_kwargs(task, [r for r in records])
        once = best_of_3(lambda: metric.compute(**kwargs, **task.metric_args))
        scored = best_of_3(lambda: score_task(task, records, n_total=len(records)))
        print(f"{name:7s} n={len(records)}: score_task {scored:7.2f} s, one compute {once:6.3f} s, "
              f"ratio {scored / once:6.1f}x")


if __name__ == "__main__":
    main()
