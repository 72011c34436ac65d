"""Run a batch of multi-step items (benchmarks/steps.py) step by step, journalling every finished step.

For each step in order: every item of the batch still going builds its conversations from its row and the
outputs of its earlier steps; those whose step is in the journal (an earlier, interrupted run of this folder)
take the stored outputs, the others go to the step's model in one `generate` call (each conversation with its
own seed). Each item's finished step is appended to this process's `steps_rank<k>.jsonl` (fsynced) before the
next step starts, so a run killed at any step redoes at most the step it was in.

A step's key hashes what its outputs depend on (task, id, step, its conversations, settings, seeds, the model's
fingerprint and, with media, the media options), not the sample key: a step whose inputs did not change is
reused even when something else did (e.g. a verifier added afterwards reuses every step of the target).

An item's media are loaded once and go with every step that sends media. A media error, or a generation error
in any step, makes the item an error record (the failed step named); a rerun retries it from that step.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, Mapping

from hallubench.benchmarks.steps import Done, Prompt, Step, as_prompts
from hallubench.benchmarks.task import Task
from hallubench.harness import store
from hallubench.harness.generate import base_record, error_entry, outputs_of
from hallubench.harness.media import check_model_accepts, media_parts
from hallubench.harness.options import RunOptions
from hallubench.harness.plan import WorkItem
from hallubench.harness.records import SCHEMA_VERSION
from hallubench.harness.scoring import parse_record
from hallubench.harness.sharding import stable_hash
from hallubench.loaders import MediaError
from hallubench.errors import ConfigError
from hallubench.models.protocol import ChatModel, GenerationError, KLGuidedDecoder, Message, Part, TextPart


def role_models(task: Task, target: ChatModel, helpers: Mapping[str, ChatModel]) -> dict[str, ChatModel | None]:
    """Which model answers the steps of each role of `task` ("target" and its helper roles); None: skipped."""
    models: dict[str, ChatModel | None] = {"target": target}
    for role, default in task.program.helpers.items():
        models[role] = helpers.get(role) or (target if default == "target" else None)
    return models


def check_steps_accept(task: Task, modality: str, models: Mapping[str, ChatModel | None],
                       args: Mapping[str, Any]) -> None:
    """ConfigError, before any sample runs, when a step sends media its model takes no input of, or asks (under the
    program `args`) for guided decoding its model cannot do."""
    for step in task.program.steps:
        model = models[step.model]
        if step.media and model is not None:
            check_model_accepts(task, modality, f"{model.name} ({step.model}, step {step.name!r})", model.accepts)
        if step.guided_by(args) and model is not None and not isinstance(model, KLGuidedDecoder):
            raise ConfigError(f"task {task.name!r} step {step.name!r} decodes KL-guided (it needs the model's logits "
                              f"at each step), which {model.name} cannot; use the hf adapter, or the task's default "
                              "decoding")


class StepJournal:
    """The finished steps of a run folder (read when the run starts) and this process's file for new ones."""

    def __init__(self, run_dir: Path, rank: int):
        self.done = store.read_store(run_dir, store.STEPS).records if Path(run_dir).exists() else {}
        self.path = store.rank_file(run_dir, rank, store.STEPS)
        self._writer: store.SampleWriter | None = None

    def add(self, record: dict[str, Any]) -> None:
        if self._writer is None:  # only runs with multi-step tasks get a steps file
            self._writer = store.SampleWriter(self.path)
        self._writer.append(record)
        self.done[record["key"]] = record

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


def conversation(prompt: Prompt, media: list[Part]) -> list[Message]:
    """The prompt's turns as messages, the media before the first user text."""
    turns = [*prompt.history, (prompt.text, None)]
    messages = []
    for index, (user, assistant) in enumerate(turns):
        messages.append(Message("user", [*(media if index == 0 else []), TextPart(user)]))
        if assistant is not None:
            messages.append(Message("assistant", [TextPart(assistant)]))
    return messages


def step_seed(item: WorkItem, step: str, index: int) -> int:
    """The seed of conversation `index` of an item's step, from the sample's own seed."""
    return int(stable_hash(item.seed, step, index)[:8], 16) & 0x7FFFFFFF


class _Item:
    """One item's progress through the program."""

    def __init__(self, item: WorkItem, record: dict[str, Any]):
        self.item, self.record = item, record
        self.media: list[Part] = []
        self.outputs: dict[str, list[list[str]]] = {}
        self.prompts: dict[str, list[Prompt]] = {}
        self.steps: dict[str, dict[str, Any]] = {}

    def done(self) -> Done:
        return Done(outputs=dict(self.outputs), prompts=dict(self.prompts), args=self.item.args)

    def finish(self, step: Step, prompts: list[Prompt], entry: dict[str, Any], outputs: list[list[str]]) -> None:
        self.prompts[step.name], self.outputs[step.name] = prompts, outputs
        self.steps[step.name] = {k: entry[k] for k in ("key", "model", "model_fingerprint", "generation", "prompts")}
        self.steps[step.name]["outputs"] = outputs


def _settings(step: Step, item: WorkItem, options: RunOptions):
    settings = step.settings(item.args, item.generation)
    if "max_new_tokens" in options.gen_kwargs:
        settings = dataclasses.replace(settings, max_new_tokens=options.gen_kwargs["max_new_tokens"])
    return settings


def _run_step(step: Step, model: ChatModel, going: list[_Item], options: RunOptions, journal: StepJournal) -> None:
    """Run one step for every item still going; items that fail it get an error and leave `going`."""
    pending: list[tuple[_Item, list[Prompt], dict[str, Any], list[int]]] = []
    for state in going:
        item = state.item
        prompts = as_prompts(step.prompts(item.row, state.done()))
        settings = _settings(step, item, options)
        seeds = [step_seed(item, step.name, index) for index in range(len(prompts))]
        entry = {"task": item.task.name, "id": item.id, "step": step.name, "model": step.model,
                 "model_fingerprint": model.fingerprint, "generation": dataclasses.asdict(settings),
                 "prompts": [dataclasses.asdict(p) for p in prompts]}
        if step.guided_by(item.args):  # keys of plainly decoded steps stay as they were
            entry["decoding"] = {"kl_guided": step.guided_by(item.args)}
        entry["key"] = stable_hash(entry, seeds, options.media_options() if step.media else None)[:32]
        stored = journal.done.get(entry["key"])
        if stored is not None:
            state.finish(step, prompts, entry, stored["outputs"])
        elif not prompts:
            state.finish(step, prompts, entry, [])
        else:
            pending.append((state, prompts, entry, seeds))
    if not pending:
        return
    settings = _settings(step, pending[0][0].item, options)
    convs = [conversation(p, state.media if step.media else []) for state, prompts, _, _ in pending for p in prompts]
    guide = step.guided_by(pending[0][0].item.args)
    if guide:
        guides = [_guide(state, guide, step.media) for state, prompts, _, _ in pending for _ in prompts]
        outputs = guided_outputs(model, convs, guides, settings)
    else:
        outputs = outputs_of(model, convs, settings, [seed for *_, seeds in pending for seed in seeds])
    start = 0
    for state, prompts, entry, _ in pending:
        mine, start = outputs[start:start + len(prompts)], start + len(prompts)
        failed = next((out for out in mine if isinstance(out, GenerationError)), None)
        if failed is not None:
            state.record["error"] = error_entry("generation", GenerationError(f"step {step.name!r}: {failed}"))
            going.remove(state)
            continue
        journal.add({**entry, "outputs": mine, "schema": SCHEMA_VERSION})
        state.finish(step, prompts, entry, mine)


def _guide(state: _Item, step: str, media: bool) -> tuple[list[Message], str]:
    """The guiding step's first conversation (with the item's media when the guided step sends them) and its first
    output (VDGD: the description prompt and the description)."""
    return conversation(state.prompts[step][0], state.media if media else []), state.outputs[step][0][0]


def guided_outputs(model: KLGuidedDecoder, convs: list, guides: list, settings) -> list[list[str] | GenerationError]:
    """Each conversation's outputs under its guide, or the GenerationError it raised alone."""
    outcomes: list[list[str] | GenerationError] = []
    for conv, guide in zip(convs, guides):
        try:
            outcomes.extend(model.generate_kl_guided([conv], [guide], settings))
        except GenerationError as err:
            outcomes.append(err)
    return outcomes


def run_program_batch(target: ChatModel, helpers: Mapping[str, ChatModel], items: list[WorkItem],
                      options: RunOptions, journal: StepJournal) -> list[dict[str, Any]]:
    """Records for `items` (all of one multi-step task), each with its steps' outputs or an error."""
    start = time.perf_counter()
    task = items[0].task
    program = task.program
    models = role_models(task, target, helpers)
    states = [_Item(item, base_record(item, target)) for item in items]
    going = []
    for state in states:
        try:
            if any(step.media for step in program.steps):
                item = state.item
                state.media, state.record["media"] = media_parts(task, item.row, item.dataset_dir, options,
                                                                 item.perturbation)
        except MediaError as err:
            state.record["error"] = error_entry("media", err)
            continue
        going.append(state)
    for step in program.steps:
        model = models[step.model]
        if model is None:  # a helper role no model plays in this run: later steps see no outputs, the record no step
            for state in going:
                state.prompts[step.name], state.outputs[step.name] = [], []
            continue
        _run_step(step, model, going, options, journal)
    for state in going:
        answer = state.outputs.get(program.answer_step) or [[]]
        state.record.update(steps=state.steps, outputs=answer[0])
        state.record["parsed"] = parse_record(task, state.record)
    share = (time.perf_counter() - start) / len(items)
    for state in states:
        state.record["time_s"] = round(share, 6)
    return [state.record for state in states]
