"""`--judge implicit`: CrossCheck-implicit over run folders (CrossCheckGPT §3.1).

Every run folder's own model is an evidence model, as it is for the explicit judges (the systems that
drew the evidence passages): reloaded as its results.json records it (adapter, model args, run options),
it is shown each item's input as its run showed it (the run's --data-dir, modality and frame options,
through the harness's own `prepare`; the media are checked against what its record says it saw) and
analyses every target sentence about that item; the judge model answers Yes/No (judges/implicit.py).

Each evidence model loads at most once per ranking, and one at a time: the boards are built first with
stand-ins that only note the pairs each evidence model is asked, then each model judges all of its pairs
in one load and is freed before the next, then the boards are built from those judgments. So memory
holds the judge model and one evidence model. A fully cached ranking loads none (their fingerprints,
part of the cache keys, come from the run folders). A subject key is the evidence model's own record of
the item (task, id, the request and the media it saw: paths, frame indices and times, audio window).
"""
from __future__ import annotations

import dataclasses
import functools
import gc
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from hallubench.confined import Folder
from hallubench.benchmarks import get_task
from hallubench.errors import ConfigError
from hallubench.harness.data import dataset_dir, load_rows, resolve_data_dir
from hallubench.harness.media import prepare
from hallubench.harness.options import RunOptions
from hallubench.harness.runner import RESULTS, load_model
from hallubench.judges import BaseJudge, CachedJudge, Judgment, JudgmentCache
from hallubench.judges.base import Pair
from hallubench.judges.configs import ImplicitJudgeArgs
from hallubench.judges.implicit import ImplicitMultimodalJudge, Subject
from hallubench.loaders import MediaError
from hallubench.models import recorded_model_args
from hallubench.models.protocol import ChatModel
from hallubench.redact import MASK
from hallubench.ranking.collect import TaskResponses, read_run
from hallubench.ranking.evidence_judges import EvidenceJudges
from hallubench.ranking.specs import ModelSpec

T = TypeVar("T")
PAIRS_PER_CALL = 64  # pairs per judge call and cache write: an interrupted ranking keeps all but the last
DECODED_ITEMS = 16   # items whose decoded media are kept (pairs come grouped by item)


@dataclass
class EvidenceRun:
    """One run folder as an evidence model: its model's identity, the options it ran with, its records."""

    name: str
    folder: Path
    model: str          # the ChatModel name its records carry
    fingerprint: str
    options: RunOptions
    records: dict[str, dict[str, dict]]  # task -> id -> record


TRUST = "--judge-args trust_run_models=true"


def read_evidence_run(name: str, folder: Path, trusted: bool = False, given: ModelSpec | None = None) -> EvidenceRun:
    """The run folder `folder` (model `name`) with what reloading its model needs; ConfigError when it lacks it, and
    (unless `trusted`) UntrustedRecordError when its recorded model would run code, reach a server, send a credential
    or read a path outside the folder that the folder names (models.recorded_model_args: the adapter config's field
    kinds decide). `given`: the model the user gave for this run (crosscheck's own runs), whose arguments count as
    the user's word. Only the run's own model is reloaded: its helper roles and --include are not."""
    path, door = Path(folder) / RESULTS, Folder(folder)
    if not door.is_file(RESULTS):
        raise ConfigError(f"--judge implicit reloads each run's model from its {RESULTS}; {folder} (model {name!r}) has "
                          "none: finish that run (rerun the same `hallubench run` command) first")
    data = door.read_bytes(RESULTS)
    try:
        results = json.loads(data)
        options = results["run"]["options"]
        fingerprint = results["model"]["fingerprint"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ConfigError(f"{path}: not a results.json of `hallubench run` ({type(err).__name__}: {err}); rerun that "
                          "run or leave the folder out") from None
    if not isinstance(options, dict):
        raise ConfigError(f"{path}: run.options is {options!r}, not a mapping of run options")
    adapter, args = str(options.get("model")), options.get("model_args") or {}
    if not isinstance(args, dict):
        raise ConfigError(f"{path}: run.options.model_args is {args!r}, not a mapping of adapter arguments")
    if MASK in json.dumps(args):
        raise ConfigError(f"{path}: the model args hold a masked credential ({MASK}), so --judge implicit cannot reload "
                          f"model {name!r}; give credentials through api_key_env, not in base_url")
    args = recorded_model_args(adapter, args, source=str(path), folder=folder, consent_flag=TRUST, trusted=trusted,
                               given=given.model_args if given is not None and given.model == adapter else None,
                               where="run.options.")
    fields = {f.name for f in dataclasses.fields(RunOptions)} - {"helpers", "include"}
    records = read_run(name, folder)
    first = next(record for per_task in records.values() for record in per_task.values())
    return EvidenceRun(name, Path(folder), first["model"], fingerprint,
                       RunOptions(**{**{k: v for k, v in options.items() if k in fields}, "model_args": args}), records)


class EvidenceModels:
    """The runs' models, each loaded when first needed; at most one loaded at a time."""

    def __init__(self, runs: Mapping[str, EvidenceRun], device: str | None, batch_size: int) -> None:
        self.runs, self.device, self.batch_size = dict(runs), device, batch_size
        self.loads: list[str] = []  # names, in load order
        self._current: tuple[str, ChatModel] | None = None

    def handle(self, name: str) -> "_Handle":
        run = self.runs[name]
        return _Handle(run.model, run.fingerprint, functools.partial(self.load, name))

    def load(self, name: str) -> ChatModel:
        if self._current is not None and self._current[0] == name:
            return self._current[1]
        self.release()
        run = self.runs[name]
        device = self.device or run.options.device or _default_device()
        options = dataclasses.replace(run.options, device=device, batch_size=self.batch_size)
        model = load_model(options, device)
        if model.fingerprint != run.fingerprint:
            raise ConfigError(
                f"evidence model {name!r}: {run.folder} was made by {run.model} with fingerprint {run.fingerprint}, "
                f"reloaded on {device} it has {model.fingerprint} (checkpoint moved or changed, or another dtype on "
                "this device); pass --judge-args evidence_device=<the run's device>, or redo the run")
        self.loads.append(name)
        self._current = (name, model)
        return model

    def release(self) -> None:
        """Free the loaded evidence model, if any."""
        if self._current is None:
            return
        model = self._current[1]
        self._current = None
        if callable(getattr(model, "close", None)):
            model.close()
        del model
        gc.collect()
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            torch.cuda.empty_cache()


@dataclass(frozen=True)
class _Handle:
    name: str
    fingerprint: str
    _load: Any

    def load(self) -> ChatModel:
        return self._load()


def _default_device() -> str:
    """Where `hallubench run` (one accelerate process) puts a model: the GPU when there is one."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class Subjects:
    """Subject keys of (evidence run, task, item) and, for a key, what the evidence model sees."""

    def __init__(self, data_dir: str | None = None) -> None:
        self.data_dir = data_dir  # overrides every run's own --data-dir
        self._where: dict[str, tuple[EvidenceRun, str, str]] = {}
        self._resolve = functools.lru_cache(maxsize=DECODED_ITEMS)(self._subject)
        self._rows = functools.lru_cache(maxsize=None)(self._task_rows)

    def key(self, run: EvidenceRun, task: str, item: str) -> str:
        record = run.records[task][item]
        key = json.dumps({"task": task, "id": item, "request": record["prompt"], "media": record.get("media")},
                         sort_keys=True, ensure_ascii=False)
        self._where.setdefault(key, (run, task, item))
        return key

    def __call__(self, key: str) -> Subject:
        return self._resolve(key)

    def _task_rows(self, data_dir: str, task_name: str) -> tuple[Path, dict[str, dict]]:
        task = get_task(task_name)
        folder = dataset_dir(resolve_data_dir(data_dir), task)
        rows, _ = load_rows(folder, task)
        return folder, {str(row["id"]): row for row in rows}

    def _subject(self, key: str) -> Subject:
        run, task_name, item = self._where[key]
        data_dir = self.data_dir or run.options.data_dir
        what = f"--judge implicit: the media of {task_name} item {item!r} (evidence model {run.name!r})"
        if data_dir is None:
            raise ConfigError(f"{what}: its run records no --data-dir; pass --judge-args data_dir=DATASETS")
        try:
            folder, rows = self._rows(str(data_dir), task_name)
        except ConfigError as err:
            raise ConfigError(f"{what}: {err} (pass --judge-args data_dir=DATASETS where the built datasets are)") from None
        if item not in rows:
            raise ConfigError(f"{what}: no such item in {folder}; pass --judge-args data_dir= the datasets that run read")
        try:
            messages, seen = prepare(get_task(task_name), rows[item], folder, run.options)
        except MediaError as err:
            raise ConfigError(f"{what}: {err}") from None
        recorded = run.records[task_name][item].get("media")
        if not _same_media(json.loads(json.dumps(seen)), recorded or {}):
            raise ConfigError(f"{what}: {folder} gives other media ({seen}) than its run saw ({recorded}); pass "
                              "--judge-args data_dir= the datasets that run read")
        return Subject(tuple(messages[0].content[:-1]), run.records[task_name][item]["prompt"])


def _same_media(seen: dict[str, dict], recorded: dict[str, dict]) -> bool:
    """Whether the media shown now are those the run recorded (every field it recorded; newer fields aside)."""
    return seen.keys() == recorded.keys() and all(
        all(seen[kind].get(field) == value for field, value in fields.items()) for kind, fields in recorded.items())


class _Rehearsal(BaseJudge):
    """Stands in for one evidence model's cached judge while the boards are built: until `answers` is set it
    notes each request (as the board makes it) and answers 0.5; then it answers from `answers`."""

    def __init__(self, judge: CachedJudge) -> None:
        super().__init__()
        self.judge_id, self.prompt_version = judge.judge_id, judge.prompt_version
        self.requests: list[list[Pair]] = []
        self.answers: dict[Pair, Judgment] | None = None

    def _judge(self, pairs: list[Pair]) -> list[Judgment]:
        if self.answers is None:
            self.requests.append(pairs)
            return [Judgment(0.5, undecided=True)] * len(pairs)
        return [self.answers[pair] for pair in pairs]


class ImplicitEvidenceJudges(EvidenceJudges):
    """One ImplicitMultimodalJudge per run folder's model, all with the same judge model and cache."""

    reads_text = False  # it checks sentences against the item's input, not against a text

    def __init__(self, config: ImplicitJudgeArgs, run_dirs: Mapping[str, Path], cache: JudgmentCache | None,
                 run_models: Mapping[str, ModelSpec] | None = None) -> None:
        from hallubench.models import get_model

        runs = {name: read_evidence_run(name, Path(folder), config.trust_run_models, (run_models or {}).get(name))
                for name, folder in run_dirs.items()}
        try:
            judge_model = get_model(config.adapter, **config.model_args)
        except (OSError, ValueError) as err:  # no such checkpoint, bad dtype, missing API key, ...
            raise ConfigError(f"--judge implicit: cannot load the judge model {config.model_args.get('model')!r}: "
                              f"{err}") from err
        self.judge_model = judge_model
        self.runs = runs
        self.models = EvidenceModels(runs, config.evidence_device, config.batch_size)
        self.subjects = Subjects(config.data_dir)
        cache = cache if cache is not None else JudgmentCache()
        self.judges = {
            name: CachedJudge(ImplicitMultimodalJudge(self.models.handle(name), judge_model, self.subjects,
                                                      config.batch_size, config.judge_sees_media, config.prompts),
                              cache, batch_size=PAIRS_PER_CALL)
            for name in runs}
        self._rehearsals: dict[str, _Rehearsal] | None = None
        super().__init__("implicit", next(iter(self.judges.values())))

    @property
    def cached(self) -> list[CachedJudge]:
        return list(self.judges.values())

    @property
    def judge_id(self) -> str:
        return f"llm-implicit-mm:<{len(self.judges)} evidence models>>{self.judge_model.name}:{self.judge_model.fingerprint}"

    def judge_for(self, model: str) -> BaseJudge:
        return (self._rehearsals or self.judges)[model]

    def build_boards(self, build: Callable[[], T]) -> T:
        """`build()` twice, each evidence model loaded at most once: the first build only notes the pairs each
        model is asked (the boards decide them: an audio-visual board asks again for its task boards' pairs
        and for the other task's items); then each model's cached judge takes its requests one by one, as
        the boards made them (so the counters, batches and errors are those of judging board by board), and
        the model is freed; the second build reads those judgments."""
        self._rehearsals = {name: _Rehearsal(judge) for name, judge in self.judges.items()}
        try:
            build()
            for name, rehearsal in self._rehearsals.items():
                judge = self.judges[name]
                rehearsal.answers = {pair: judgment for pairs in rehearsal.requests
                                     for pair, judgment in zip(pairs, judge.judge_batch(pairs))}
                self.models.release()
            return build()
        finally:
            self._rehearsals = None

    def passages(self, model: str, responses: TaskResponses, ids: Sequence[str]) -> list[list[str]]:
        """Per item, one "passage": the key of the item as `model`'s run saw it."""
        return [[self.subjects.key(self.runs[model], responses.task, item)] for item in ids]

    def summary(self) -> dict[str, Any]:
        return {**super().summary(), "evidence_judges": {name: judge.judge_id for name, judge in self.judges.items()},
                "evidence_models_loaded": list(self.models.loads)}

    def close(self) -> None:
        self.models.release()
