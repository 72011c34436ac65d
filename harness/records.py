"""The run folder's sample record: one JSON line of samples*.jsonl per (task, id, settings), typed.

`schema` says which layout a line has. Version 1 is every record written before the field existed (the same
keys): old run folders still resume and re-score, and a version newer than this hallubench is refused with
the file and line, as is a line that is not an object with the core keys.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from hallubench.errors import CorruptRecordError

# 5: `verdict` (written by scoring); 4: `perturbation` and `answer_probs` (both null unless the run asks for them);
# 3: `steps` (multi-step tasks); 2: the `schema` field itself; 1: records without it (same keys otherwise)
SCHEMA_VERSION = 5
# The fields scoring writes into a record (the rest is generation's): the records digest leaves them out
# (harness/digest.py), and `hallubench verify` checks them against what the metric gives the record now.
SCORED_FIELDS = ("verdict",)


@dataclass
class SampleRecord:
    """One sample: what the model got, what it said, and what scoring needs (so re-scoring needs no dataset).

    key: hash of task, id, model fingerprint, settings, media options and run seed; seed: the sample's own
    (the stochastic samples use seed + 1); generation / sample_generation: effective GenerationSettings of
    the answer / the extra samples; media: what it saw (video {path, indices, timestamps, native_fps,
    duration}, audio {path, start, end, sr, muted}, image {path, size, blank}); outputs / samples: raw
    answer(s) and stochastic samples; parsed: the task parser's reading of outputs[0] (None: unparseable), which
    the metric's rule may read otherwise (`verdict` says how the score read it); error: null or {type: "media"|"generation", class, message}, outputs then
    empty; time_s: this sample's share of its batch's wall time. steps (multi-step tasks, else null): step name ->
    {key, model (role), model_fingerprint, generation, prompts [{text, history}], outputs (one list per prompt)};
    `outputs` are then those of the program's answer step and `parsed` the task parser's reading of the record.
    perturbation (a `--perturb` run, else null): {kind, level, seed, label} of the degraded medium it saw (`id` is
    then `<row id>@<label>` and each `group` is prefixed `<label> / `, with `<label>` itself first); answer_probs
    (`--answer-probs`, else null): each answer word -> the probability of the reply's first token being it, from one
    forward pass on the same conversation (harness/answer_probs.py). verdict (null until scored; written by
    scoring, harness/scoring.py `record_verdict`): how the score took the record, {verdict: results.json's verdict
    ("correct", "wrong", "unreadable", "error"; null where the metric gives none), reading: the reading of the rule
    behind the score (null: it read nothing), counted: "scored", "unreadable", "error" or "without media", the
    column of the results table it counts in}."""

    key: str
    task: str
    id: str
    model: str
    model_fingerprint: str
    seed: int
    generation: dict[str, Any]
    sample_generation: dict[str, Any] | None
    prompt: str
    reference: Any = None
    group: Any = None
    metric_inputs: dict[str, Any] | None = None
    media: dict[str, Any] | None = None
    outputs: list[str] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)
    parsed: Any = None
    error: dict[str, str] | None = None
    time_s: float | None = None
    steps: dict[str, dict[str, Any]] | None = None
    perturbation: dict[str, Any] | None = None
    answer_probs: dict[str, float] | None = None
    verdict: dict[str, Any] | None = None
    schema: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# What scoring, resuming and ranking need of every line, whatever its schema version.
CORE = ("key", "task", "id")


def check_record(data: Any, where: str) -> dict[str, Any]:
    """`data` (one parsed JSON line) if it can be a sample record; CorruptRecordError naming `where` (file:line)
    when it is not an object with the core keys, or has a schema newer than this hallubench reads."""
    if not isinstance(data, dict):
        raise CorruptRecordError(f"{where}: not a sample record (a JSON object); fix or delete that line")
    missing = [name for name in CORE if name not in data]
    if missing:
        raise CorruptRecordError(f"{where}: not a sample record (no {', '.join(missing)}); fix or delete that line")
    schema = data.get("schema", 1)
    if not isinstance(schema, int) or not 1 <= schema <= SCHEMA_VERSION:
        raise CorruptRecordError(f"{where}: sample record schema {schema!r}, this hallubench reads 1 to "
                                 f"{SCHEMA_VERSION}; upgrade hallubench to read this run folder")
    return data
