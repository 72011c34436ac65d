"""Generate for a batch of work items and turn each into a sample record (or an error record).

Sampled decoding runs one conversation per call with the sample's own seed, so outputs do not depend
on which other samples share a batch or a process; greedy decoding is batched. A GenerationError in a
batch is retried sample by sample so one bad sample does not fail its neighbours.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any

from hallubench.harness.media import prepare
from hallubench.harness.options import RunOptions
from hallubench.harness.parsers import get_parser
from hallubench.harness.plan import WorkItem
from hallubench.loaders import MediaError
from hallubench.models.protocol import ChatModel, GenerationError, GenerationSettings


def _error(kind: str, err: Exception) -> dict[str, str]:
    return {"type": kind, "class": type(err).__name__, "message": str(err)}


def _call(model: ChatModel, conversations: list, settings: GenerationSettings, seeds: list[int]) -> list[list[str]]:
    if settings.do_sample or len(conversations) == 1:
        return [model.generate([conv], dataclasses.replace(settings, seed=seed))[0]
                for conv, seed in zip(conversations, seeds)]
    return model.generate(conversations, settings)


def base_record(item: WorkItem, model: ChatModel) -> dict[str, Any]:
    task = item.task
    return {
        "key": item.key, "task": task.name, "id": item.id, "model": model.name,
        "model_fingerprint": model.fingerprint, "seed": item.seed,
        "generation": dataclasses.asdict(item.generation),
        "sample_generation": item.sample_generation and dataclasses.asdict(item.sample_generation),
        "prompt": task.prompt(item.row),
        "reference": task.reference(item.row) if task.reference else None,
        "group": task.group(item.row) if task.group else None,
        "metric_inputs": task.metric_inputs(item.row) if task.metric_inputs else None,
        "media": None, "outputs": [], "samples": [], "parsed": None, "error": None,
    }


def _generate(model: ChatModel, items: list[WorkItem], convs: list, records: list[dict[str, Any]]) -> None:
    seeds = [item.seed for item in items]
    outputs = _call(model, convs, items[0].generation, seeds)
    extra = items[0].sample_generation
    # The extra samples get their own seed (sample seed + 1) so they never replay a sampled main answer.
    samples = (_call(model, convs, extra, [(s + 1) & 0x7FFFFFFF for s in seeds]) if extra
               else [[] for _ in items])
    parse = get_parser(items[0].task.parser)
    for record, out, more in zip(records, outputs, samples):
        record.update(outputs=out, samples=more, parsed=parse(out[0], **(record["metric_inputs"] or {})))


def run_batch(model: ChatModel, items: list[WorkItem], options: RunOptions) -> list[dict[str, Any]]:
    """Records for `items` (all of one task), each with outputs or an error, and its time share."""
    start = time.perf_counter()
    records = [base_record(item, model) for item in items]
    ready, convs, ready_records = [], [], []
    for item, record in zip(items, records):
        try:
            conv, record["media"] = prepare(item.task, item.row, item.dataset_dir, options)
        except MediaError as err:
            record["error"] = _error("media", err)
            continue
        ready.append(item)
        convs.append(conv)
        ready_records.append(record)
    if ready:
        try:
            _generate(model, ready, convs, ready_records)
        except GenerationError as err:
            if len(ready) == 1:
                ready_records[0]["error"] = _error("generation", err)
            else:
                for one, conv, record in zip(ready, convs, ready_records):
                    try:
                        _generate(model, [one], [conv], [record])
                    except GenerationError as single:
                        record["error"] = _error("generation", single)
    share = (time.perf_counter() - start) / len(items)
    for record in records:
        record["time_s"] = round(share, 6)
    return records
