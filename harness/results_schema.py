"""The typed schema of a run's `results.json` (version 3; versions 1 and 2 are still read: READS).

Layout (all keys always present; lm-eval's `results` / `config` / `n-samples` split, kept typed):
- `version`: schema version (int).
- `tasks`: task name -> TaskResult: dataset (benchmark, config, split), prompt source, parser, metric
  (or `scored_by` when scored across runs), effective generation settings, counts (`n_total` in the
  split less the rows the task excludes, times the levels of a `--perturb` run (one sample per item and
  level), `n_selected` after --limit, `n_errors` model/media errors,
  `n_without_media` rows left out because `--modality` removes the medium they are asked about, `n_unreadable`
  answered items the rule behind the score could not read (a null verdict reading; for a metric without verdicts,
  the task's parser read nothing; for a task with `unreadable`, e.g. SAC3's unread judge strings, read only in
  part), which the metric counts by the paper's rule or leaves out, `n_scored` the other answered items, so that
  `n_scored + n_unreadable + n_errors + n_without_media = n_selected` (harness/scoring.py `counted_as`);
  `n_unparsed` the unreadable ones whose reading is null (a part of `n_unreadable`), `unreadable_share` the
  unreadable share of the answered items and `mostly_unreadable` when it exceeds `MOSTLY_UNREADABLE`, so a score
  made mostly of noise is flagged; `not_scored`: null, or why no answer was scored ("0 of 3 scored: 3
  unreadable"), every metric then null), `metrics` (name -> value, each fraction
  followed by its standard error `<name>_stderr` as in lm-evaluation-harness) and `groups` (group ->
  GroupResult with the same counts and metrics); `version` (the task's, bumped when its prompt or scoring
  change), `stderr_method` and `higher_is_better` (metric -> true, false, or null where neither direction
  is better); `task_args`: the task's program and metric args as the run set them (`--task-args`; empty
  for tasks that take none); `answer_probs`: with `--answer-probs`, the answer words' mean first-token
  probabilities per perturbation level, group and reference answer, with intervals (harness/answer_probs.py; empty
  otherwise); `verdicts`: sample id -> `{"verdict": "correct" | "wrong" | "unreadable" | "error", "reading": str or
  null}`, how the headline counted each answer under the rule the metric used (`item_verdicts`, ARCHITECTURE.md "The
  metric contract"), "error" for a model/media error; `{}` for a metric that gives no per-item verdict;
  `dataset`: the data the task read, `{"id": Hub dataset repo or null, "revision":
  Hub commit sha or "sha256:<hex>" (a local folder's content fingerprint)}` (harness/dataset_source.py).
- `model`: adapter name, model args, fingerprint.
- `run`: options that shaped the run, process count and torch threads per process (CPU outputs are
  bit-identical across process counts only at equal threads per process), timings and throughput, and
  `mini_data`: the tasks evaluated on the embedded synthetic mini benchmarks (not a measurement);
  `auto_batch_sizes`: with `--batch-size auto`, the batch size each process's adapter settled on;
  `records_digest`: task -> {"samples": digest, "steps": digest} of exactly the records the scores were computed
  from (harness/digest.py), which every reader of the folder checks against what it holds (harness/run_state.py).
- `environment`: package versions, git hash, python version.
results.json also carries lm-eval's keys (`results`, `versions`, `n-shot`, `higher_is_better`, `n-samples`,
`config`: harness/lm_eval_block.py), written from these and not read back.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hallubench.config import read_text
from hallubench.errors import UnreadableResultsError
from hallubench.redact import shown

SCHEMA_VERSION = 3
# version 1 has no `verdicts`: read with none; version 2 counts answers SAC3 or a judge read only in part both in
# `n_scored` and `n_unreadable`, and has no `not_scored`
READS = (1, 2, 3)
MOSTLY_UNREADABLE = 0.2  # above this share of unreadable answers a score is flagged as made mostly of them


@dataclass
class GroupResult:
    n_selected: int = 0
    n_errors: int = 0
    n_unparsed: int = 0
    n_scored: int = 0
    metrics: dict[str, Any] = field(default_factory=dict)
    n_without_media: int = 0
    n_unreadable: int = 0
    unreadable_share: float | None = None
    mostly_unreadable: bool = False
    not_scored: str | None = None


@dataclass
class TaskResult(GroupResult):
    task: str = ""
    benchmark: str = ""
    config: str = ""
    split: str = "test"
    source: str = ""
    parser: str = ""
    metric: str | None = None
    scored_by: str | None = None
    generation: dict[str, Any] = field(default_factory=dict)
    sample_generation: dict[str, Any] | None = None
    n_total: int = 0
    groups: dict[str, GroupResult] = field(default_factory=dict)
    version: int = 1
    stderr_method: str | None = None
    higher_is_better: dict[str, bool | None] = field(default_factory=dict)
    task_args: dict[str, Any] = field(default_factory=dict)
    dataset: dict[str, Any] = field(default_factory=dict)
    answer_probs: dict[str, Any] = field(default_factory=dict)
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class ModelInfo:
    name: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    fingerprint: str | None = None


@dataclass
class RunInfo:
    options: dict[str, Any] = field(default_factory=dict)
    num_processes: int = 1
    torch_threads: int | None = None
    from_outputs: str | None = None
    started: str = ""
    finished: str = ""
    duration_s: float = 0.0
    generated: int = 0
    generation_s: float = 0.0
    samples_per_s: float | None = None
    torn_lines: list[str] = field(default_factory=list)
    mini_data: list[str] = field(default_factory=list)
    auto_batch_sizes: list[int | None] = field(default_factory=list)
    records_digest: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass
class Environment:
    packages: dict[str, str] = field(default_factory=dict)
    git_hash: str | None = None
    python: str = ""


@dataclass
class Results:
    tasks: dict[str, TaskResult] = field(default_factory=dict)
    model: ModelInfo = field(default_factory=ModelInfo)
    run: RunInfo = field(default_factory=RunInfo)
    environment: Environment = field(default_factory=Environment)
    version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Results":
        """Inverse of `to_dict` (of any version in READS); UnreadableResultsError (a ValueError) naming the key on
        another schema version, an unknown or missing key, or a part that is not a mapping."""
        if not isinstance(data, dict) or data.get("version") not in READS:
            version = data.get("version") if isinstance(data, dict) else None
            raise UnreadableResultsError(f"results.json schema version {shown(version)}; this hallubench reads "
                                         f"{', '.join(map(str, READS))}")
        tasks = {}
        for name, task in _part(data, "tasks", dict).items():
            where = f"tasks.{name}"
            groups = {g: _typed(GroupResult, v, f"{where}.groups.{g}")
                      for g, v in _part(_fields(TaskResult, task, where), "groups", dict, where, {}).items()}
            tasks[name] = _typed(TaskResult, {**task, "groups": groups}, where)
        return cls(tasks=tasks, model=_typed(ModelInfo, _part(data, "model", dict), "model"),
                   run=_typed(RunInfo, _part(data, "run", dict), "run"),
                   environment=_typed(Environment, _part(data, "environment", dict), "environment"),
                   version=data["version"])


def read_results(path: Path) -> Results:
    """A run folder's results.json, typed; UnreadableResultsError naming the file and what is wrong in it (not
    UTF-8, not JSON, a key this version does not read)."""
    try:
        return Results.from_dict(json.loads(read_text(path)))
    except ValueError as err:  # JSONDecodeError, the schema's own errors, read_text's ConfigError
        text = str(err).removeprefix(f"{path}: ").removeprefix("results.json: ")
        raise UnreadableResultsError(f"{path}: {text}") from None


def _fields(cls: type, data: Any, where: str) -> dict[str, Any]:
    """`data` when it is a mapping of `cls`'s fields only; UnreadableResultsError naming the first other key."""
    if not isinstance(data, dict):
        raise UnreadableResultsError(f"results.json: {where} is {shown(data)}, not a mapping")
    unknown = sorted(set(data) - {f.name for f in dataclasses.fields(cls)})
    if unknown:
        raise UnreadableResultsError(f"results.json: unknown key {shown(f'{where}.{unknown[0]}')} (schema version "
                                     f"{SCHEMA_VERSION} has no such key: written by another hallubench version, or "
                                     "edited by hand)")
    return data


def _typed(cls: type, data: Any, where: str) -> Any:
    """`cls(**data)` for a mapping of its fields; UnreadableResultsError naming `where` otherwise."""
    try:
        return cls(**_fields(cls, data, where))
    except TypeError:  # a required field missing
        missing = [f.name for f in dataclasses.fields(cls) if f.name not in data
                   and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        raise UnreadableResultsError(f"results.json: {where} lacks {', '.join(missing) or 'a key it needs'}") from None


def _part(data: dict[str, Any], key: str, kind: type, where: str = "", default: Any = dataclasses.MISSING) -> Any:
    """`data[key]` when it is a `kind` (or `default` when absent); UnreadableResultsError naming it otherwise."""
    name = f"{where}.{key}" if where else key
    if key not in data and default is not dataclasses.MISSING:
        return default
    if not isinstance(data.get(key), kind):
        raise UnreadableResultsError(f"results.json: {name} is {'missing' if key not in data else shown(data[key])}")
    return data[key]
