"""The baseline the harness's speed is measured against (tests/perf/bench_harness.py, tests/test_run_speed.py): the
harness's own conversations, batched as it batches them, through the hf adapter's processor call
(`HFChatModel.prepare`: chat template + processor) and `model.generate` + `batch_decode`, greedy, in a loop."""
from __future__ import annotations

import time
from collections import defaultdict

import torch

from hallubench.harness.runner import _batches


@torch.inference_mode()
def direct_once(model, items, convs, batch_size: int, max_new_tokens: int) -> tuple[dict[str, float], dict]:
    """Over the harness's batches: processor, model.generate, batch_decode. Seconds by step, and the outputs."""
    seconds: dict[str, float] = defaultdict(float)
    outputs = {}
    for batch in _batches(items, batch_size):
        t0 = time.perf_counter()
        inputs = model.prepare([convs[item.key] for item in batch])
        t1 = time.perf_counter()
        generated = model.model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
        t2 = time.perf_counter()
        texts = model.processor.batch_decode(generated[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
        seconds["processor"] += t1 - t0
        seconds["generate"] += t2 - t1
        seconds["decode"] += time.perf_counter() - t2
        outputs.update({(item.task.name, item.id): text for item, text in zip(batch, texts)})
    return dict(seconds), outputs
