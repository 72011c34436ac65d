"""Generate for a batch of work items and turn each into a sample record (or an error record).

A batch is one `generate` call (greedy or sampled) given each sample's own seed (`seeds=`), so a sample's
outputs do not depend on which other samples share its batch or process (the hf adapter makes each
conversation's n samples in one `num_return_sequences=n` call; the openai adapter sends them as one request). When the call raises
GenerationError, the samples it did not answer (all of them, unless the adapter reports `partial` outputs)
are retried one by one, so one bad sample is recorded as an error and does not fail its neighbours; when the
adapter tried each conversation on its own already (`outcomes`: the openai adapter, with its retries), its
failures are final and none is sent again.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any

from hallubench.harness.media import prepare
from hallubench.harness.options import RunOptions
from hallubench.harness.plan import WorkItem
from hallubench.harness.records import SampleRecord
from hallubench.harness.scoring import parse_record
from hallubench.loaders import MediaError
from hallubench.models.protocol import ChatModel, GenerationError, GenerationSettings, PreparesAhead
from hallubench.redact import redact


def error_entry(kind: str, err: Exception) -> dict[str, str]:
    # Adapters mask their own key; URL credentials and bearer tokens are masked here too, whoever wrote them.
    return {"type": kind, "class": type(err).__name__, "message": redact(str(err))}


def outputs_of(model: ChatModel, conversations: list, settings: GenerationSettings,
             seeds: list[int]) -> list[list[str] | GenerationError]:
    """Each conversation's outputs, or the GenerationError it raised when generated alone."""
    try:
        return model.generate(conversations, settings, seeds)
    except GenerationError as err:
        if len(conversations) == 1:
            return [err]
        if err.outcomes is not None and len(err.outcomes) == len(conversations):
            return err.outcomes
        answered = err.partial if err.partial is not None and len(err.partial) == len(conversations) \
            else [None] * len(conversations)
    return [out if out is not None else outputs_of(model, [conv], settings, [seed])[0]
            for conv, seed, out in zip(conversations, seeds, answered)]


def groups_of(item: WorkItem) -> str | tuple[str, ...] | None:
    """The record's groups: the task's, and with a perturbation the level itself first and each of the task's
    groups within it ("video_blur=4 / visual-language"), so results hold every score per level."""
    groups = item.task.group(item.row) if item.task.group else None
    if item.perturbation is None:
        return groups
    label = item.perturbation.label
    within = () if groups is None else (groups,) if isinstance(groups, str) else tuple(groups)
    return (label, *(f"{label} / {group}" for group in within))


def base_record(item: WorkItem, model: ChatModel | None) -> dict[str, Any]:
    """The record of `item` before generation (`model` None: its name and fingerprint are filled in later)."""
    task = item.task
    return SampleRecord(
        key=item.key, task=task.name, id=item.id, model=model and model.name,
        model_fingerprint=model and model.fingerprint,
        seed=item.seed, generation=dataclasses.asdict(item.generation),
        sample_generation=item.sample_generation and dataclasses.asdict(item.sample_generation),
        prompt=task.prompt(item.row),
        reference=task.reference(item.row) if task.reference else None,
        group=groups_of(item),
        metric_inputs=task.metric_inputs(item.row) if task.metric_inputs else None,
        perturbation=item.perturbation and item.perturbation.to_dict(),
    ).to_dict()


def _generate(model: ChatModel, items: list[WorkItem], convs: list, records: list[dict[str, Any]]) -> None:
    seeds = [item.seed for item in items]
    outputs = outputs_of(model, convs, items[0].generation, seeds)
    samples: list[list[str] | GenerationError] = [[] for _ in items]
    extra = items[0].sample_generation
    answered = [i for i, out in enumerate(outputs) if not isinstance(out, GenerationError)]
    if extra and answered:
        # The extra samples get their own seed (sample seed + 1) so they never replay a sampled main answer.
        more = outputs_of(model, [convs[i] for i in answered], extra, [(seeds[i] + 1) & 0x7FFFFFFF for i in answered])
        for i, out in zip(answered, more):
            samples[i] = out
    words = items[0].answer_words
    probs = answer_probs(model, [convs[i] for i in answered], words) if words and answered else []
    probs_of = dict(zip(answered, probs))
    for i, (record, out, more) in enumerate(zip(records, outputs, samples)):
        failed = next((x for x in (out, more, probs_of.get(i)) if isinstance(x, GenerationError)), None)
        if failed is not None:
            record["error"] = error_entry("generation", failed)
        else:
            record.update(outputs=out, samples=more)
            record["parsed"] = parse_record(items[0].task, record)
            if words:
                record["answer_probs"] = probs_of[i]


def answer_probs(model: ChatModel, convs: list, words: tuple[str, ...]) -> list[dict[str, float] | GenerationError]:
    """Per conversation, each answer word's probability as the reply's first token (the adapter's
    `next_token_probs`: one forward pass, the word's token variants summed), or the GenerationError that stopped it
    (the sample is then an error and runs again)."""
    try:
        return [dict(zip(words, values)) for values in model.next_token_probs(convs, list(words))]
    except (GenerationError, ValueError) as err:
        return [GenerationError(f"answer probabilities: {err}")] * len(convs)


@dataclasses.dataclass
class PreparedBatch:
    """A batch's records with its media loaded: what the model needs next, made while it was busy."""

    items: list[WorkItem]
    records: list[dict[str, Any]]
    ready: list[int]  # indices of the items whose media loaded
    conversations: list
    seconds: float


def prepare_batch(items: list[WorkItem], options: RunOptions, model: ChatModel | None = None) -> PreparedBatch:
    """The records of `items` (all of one task) with their media loaded; a media error is recorded on its record.
    A `model` that can prepare its inputs ahead (PreparesAhead: the hf adapter's processor) does so here too."""
    start = time.perf_counter()
    records = [base_record(item, model=None) for item in items]
    ready, convs = [], []
    for index, (item, record) in enumerate(zip(items, records)):
        try:
            conv, record["media"] = prepare(item.task, item.row, item.dataset_dir, options, item.perturbation)
        except MediaError as err:
            record["error"] = error_entry("media", err)
            continue
        ready.append(index)
        convs.append(conv)
    if convs and isinstance(model, PreparesAhead):
        model.prepare_ahead(convs)
    return PreparedBatch(items, records, ready, convs, time.perf_counter() - start)


def generate_batch(model: ChatModel, batch: PreparedBatch) -> list[dict[str, Any]]:
    """The prepared batch's records, each with outputs or an error, and its time share (media loading included)."""
    start = time.perf_counter()
    for record in batch.records:
        record.update(model=model.name, model_fingerprint=model.fingerprint)
    if batch.ready:
        _generate(model, [batch.items[i] for i in batch.ready], batch.conversations,
                  [batch.records[i] for i in batch.ready])
    share = (batch.seconds + time.perf_counter() - start) / len(batch.items)
    for record in batch.records:
        record["time_s"] = round(share, 6)
    return batch.records


def run_batch(model: ChatModel, items: list[WorkItem], options: RunOptions) -> list[dict[str, Any]]:
    """Records for `items` (all of one task), each with outputs or an error, and its time share."""
    return generate_batch(model, prepare_batch(items, options, model))
