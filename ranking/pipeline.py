"""`crosscheck()` (evidence runs, then `rank`) and `rank()` (run folders -> judged, aggregated, written)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from hallubench.benchmarks import all_tasks, get_task
from hallubench.harness import folder_lock, run_state
from hallubench.errors import ConfigError
from hallubench.judges import JudgmentCache, sentence_backend
from hallubench.redact import redact_values
from hallubench.ranking.aggregate import WEIGHTINGS
from hallubench.ranking.collect import TaskResponses, collect, mini_data
from hallubench.ranking.correlate import correlation, load_reference
from hallubench.ranking.evidence import generate_evidence
from hallubench.ranking.board import Board, Ranking
from hallubench.ranking.evidence_judges import EvidenceJudges
from hallubench.ranking.judging import check_judge, judge_board, make_evidence_judges
from hallubench.ranking.report import write_ranking
from hallubench.ranking.specs import ModelSpec
from hallubench.registry import TASKS, plugin_sources

RANKING = "ranking"
# CrossCheckGPT footnote 2: implicit audio and visual scores have different ranges (about 0.2 and 0.5), so the paper
# ranks audio-visual inputs with CrossCheck-explicit only.
IMPLICIT_AUDIO_VISUAL = ("an audio-visual board judged with --judge implicit; CrossCheckGPT ranks audio-visual inputs "
                         "with CrossCheck-explicit only (footnote 2: implicit audio and visual scores have different "
                         "ranges, about 0.2 and 0.5), so this board has no counterpart in the paper")


def audio_visual_pairs(task_names: Sequence[str]) -> list[tuple[str, str]]:
    """(visual task, audio task) of each benchmark with both among `task_names` (their `evidence_modality`).

    A video's visual and audio descriptions are each checked against what models saw (visual task) and heard
    (audio task), a sentence scoring min(C_audio, C_visual) (§4): one audio-visual board per description task,
    named "<task>_av"."""
    by_benchmark: dict[str, dict[str, str]] = {}
    for name in task_names:
        task = get_task(name)
        if task.evidence_modality:
            by_benchmark.setdefault(task.benchmark, {}).setdefault(task.evidence_modality, name)
    return [(m["visual"], m["audio"]) for m in by_benchmark.values() if {"visual", "audio"} <= set(m)]


def _audio_visual_board(described: str, pair: tuple[str, str], by_task: Mapping[str, TaskResponses],
                        boards: dict[str, Board], judges: EvidenceJudges, weighting: str,
                        temperature: float) -> Board | None:
    """Each target's `described` answer (visual or audio description) against visual and audio evidence, a
    sentence scoring min(C_audio, C_visual) (the metric's evidence_modality); eta from each model's SelfCheck
    per task."""
    visual, audio = by_task[pair[0]], by_task[pair[1]]
    ids = [i for i in visual.ids if i in set(audio.ids)]
    if not ids:
        return None
    evidence, modality, selfcheck, evidence_of = {}, {}, {}, {}
    for kind, responses in (("visual", visual), ("audio", audio)):
        task_selfcheck = boards[responses.task].selfcheck or {}
        for model in responses.samples:
            evidence[f"{model}@{kind}"] = judges.passages(model, responses, ids)
            modality[f"{model}@{kind}"] = kind
            evidence_of[f"{model}@{kind}"] = model
            if model in task_selfcheck:
                selfcheck[f"{model}@{kind}"] = task_selfcheck[model]
    target = by_task[described]
    pos = {i: k for k, i in enumerate(target.ids)}
    targets = {model: [answers[pos[i]] for i in ids] for model, answers in target.answers.items()}
    return judge_board(f"{described}_av", ids, targets, evidence, judges, weighting=weighting,
                       temperature=temperature, evidence_modality=modality, selfcheck_scores=selfcheck,
                       evidence_of=evidence_of)


def _sample_counts(responses: TaskResponses) -> dict[str, int]:
    """Per model, its largest number of sampled passages per item (N_j of eq. 2)."""
    return {model: max(map(len, samples), default=0) for model, samples in sorted(responses.samples.items())}


def judge_errors(boards, errors: list[dict[str, str]]) -> list[dict[str, str]]:
    """Each failed judgment with the board, system and document whose sentence it was."""
    where: dict[str, list[tuple[str, str, str]]] = {}
    for board in boards:
        for system, per_document in board.sentences.items():
            for document, sentences in zip(board.documents, per_document):
                for sentence in sentences:
                    where.setdefault(sentence, []).append((board.name, system, document))
    return [{"board": b, "system": s, "document": d, **error}
            for error in errors for b, s, d in where.get(error["sentence"], [("?", "?", "?")])]


def _correlations(board: Board, reference) -> dict[str, Any]:
    out = {}
    scores, docs = board.results["scores"], board.results["document_scores"]
    if board.refcheck:
        out["refcheck_system_spearman"] = correlation(scores, board.refcheck["scores"], "system")
        out["refcheck_document_pearson"] = correlation(docs, board.refcheck["document_scores"], "document")
    if reference is not None:
        ref_systems, ref_docs = reference.for_board(board.name)
        out["reference_system_spearman"] = correlation(scores, ref_systems, "system")
        if ref_docs:
            out["reference_document_pearson"] = correlation(docs, ref_docs, "document")
    return out


def _judge_boards(responses: list[TaskResponses], judges: EvidenceJudges, weighting: str, temperature: float,
                  refcheck: bool) -> dict[str, Board]:
    """One board per task, then the audio-visual boards of the benchmarks with a visual and an audio task."""
    boards: dict[str, Board] = {}
    for r in responses:
        evidence = {model: judges.passages(model, r, r.ids) for model in r.samples}
        boards[r.task] = judge_board(r.task, r.ids, r.answers, evidence, judges, weighting=weighting,
                                     temperature=temperature, references=r.references if refcheck else None)
        if r.dropped:
            boards[r.task].notes.append("items not answered by every model, left out: "
                                        + "; ".join(f"{m}: {', '.join(ids)}" for m, ids in r.dropped.items()))
        counts = _sample_counts(r)
        if judges.reads_text and len(set(counts.values())) > 1:
            boards[r.task].notes.append("evidence models drew different numbers of samples per item ("
                                        + ", ".join(f"{m}: {n}" for m, n in counts.items()) + "); every "
                                        "sampled passage is pooled with its model's eta, as eq. 2 does")
    by_task = {r.task: r for r in responses}
    for pair in audio_visual_pairs([t for t in by_task if t in TASKS]):
        for described in pair:
            if weighting == "query":
                boards[described].notes.append(f"{described}_av not ranked: it needs task or uniform weighting")
                continue
            board = _audio_visual_board(described, pair, by_task, boards, judges, weighting, temperature)
            if board is not None:
                board.extension = None if judges.reads_text else IMPLICIT_AUDIO_VISUAL
                boards[board.name] = board
    return boards


@run_state.holds_run_folders("rank (reading)", "run_dirs")  # every read of them (records, results, models) is of one state
def rank(run_dirs: Mapping[str, Path] | Sequence[Path], output_dir: Path, *, tasks: Sequence[str] | None = None,
         judge: str = "embedding", judge_args: Mapping[str, Any] | None = None, cache: Path | None = None,
         weighting: str = "task", temperature: float = 0.1, refcheck: bool = False,
         reference: Path | None = None, reference_higher_is_better: bool = False, strict_judging: bool = False,
         config: Mapping[str, Any] | None = None, run_models: Mapping[str, ModelSpec] | None = None) -> Ranking:
    """Rank the models of `run_dirs` (name -> run folder, or folders named by their last component) on every
    cross-checkable task they hold (or `tasks`); write the ranking folder `output_dir` and return the Ranking.

    Every model is target and evidence (its own samples included, as in the paper); `refcheck` also judges
    the targets against the rows' human references (RefCheck) and correlates with it; `reference` is a file
    for `load_reference`. Runs whose results.json marks ranked tasks as made on the mini benchmarks make a
    ranking marked so (`Ranking.mini_data`). `run_models`: the model the user gave for each run (crosscheck's
    runs, made from the user's specs): what a judge that reloads the runs' models may take as the user's word.
    Everything read from the run folders is checked before the ranking
    folder is made: a bad input (no sampled passages to judge, an unknown task) leaves `output_dir` as it was.
    """
    if weighting not in WEIGHTINGS:
        raise ConfigError(f"--weighting {weighting!r}: choose one of {', '.join(WEIGHTINGS)}")
    if not isinstance(run_dirs, Mapping):
        folders = [Path(p) for p in run_dirs]
        run_dirs = {p.name: p for p in folders}
        if len(run_dirs) != len(folders):
            raise ConfigError("two run folders share a name; pass NAME=DIR to tell them apart")
    ref = load_reference(reference, reference_higher_is_better) if reference else None
    responses = collect(dict(run_dirs), list(tasks) if tasks else None)
    return _judge_and_write(responses, run_dirs, Path(output_dir), judge=judge, judge_args=judge_args, cache=cache,
                            weighting=weighting, temperature=temperature, refcheck=refcheck, reference=reference,
                            ref=ref, strict_judging=strict_judging, config=config, run_models=run_models)


@folder_lock.writes_folder("rank")
def _judge_and_write(responses: list[TaskResponses], run_dirs: Mapping[str, Path], output_dir: Path, *, judge: str,
                     judge_args: Mapping[str, Any] | None, cache: Path | None, weighting: str, temperature: float,
                     refcheck: bool, reference: Path | None, ref, strict_judging: bool,
                     config: Mapping[str, Any] | None, run_models: Mapping[str, ModelSpec] | None) -> Ranking:
    """`rank`'s judging and writing, holding the ranking folder's lock (which makes the folder)."""
    mini = mini_data(run_dirs, [r.task for r in responses])
    judges = make_evidence_judges(judge, judge_args, JudgmentCache(cache) if cache else None, run_dirs, run_models)
    judges.set_strict(strict_judging)  # a pair failing alone aborts instead of being recorded as a judge error
    try:
        boards = judges.build_boards(lambda: _judge_boards(responses, judges, weighting, temperature, refcheck))
    finally:
        judges.close()
    ranking = Ranking(
        boards=list(boards.values()),
        judge={**judges.summary(),
               "sentence_splitter": sentence_backend(),  # spaCy if installed, else pysbd: it sets the judged units
               "errors": judge_errors(boards.values(), judges.errors)},
        config={"weighting": weighting, "temperature": temperature, "refcheck": refcheck,
                "reference": str(reference) if reference else None, "judge_args": dict(judge_args or {}),
                **_plugins(), **dict(config or {})},
        runs={name: str(path) for name, path in run_dirs.items()},
        correlations={b.name: _correlations(b, ref) for b in boards.values()},
        mini_data=mini,
    )
    write_ranking(ranking, output_dir)
    return ranking


def _check_cross_checkable(tasks: Sequence[str]) -> None:
    """ConfigError before any model runs when a task is unknown or draws no stochastic samples to check against."""
    try:
        resolved = [get_task(name) for name in tasks]
    except KeyError as err:
        raise ConfigError(f"--tasks: {err.args[0]}") from None
    plain = [task.name for task in resolved if not task.cross_checkable]
    if plain:
        checkable = [name for name, task in sorted(all_tasks().items()) if task.cross_checkable]
        raise ConfigError(f"--tasks: {', '.join(plain)} draw(s) no stochastic samples, so there is nothing to "
                          f"cross-check against; cross-checkable tasks: {', '.join(checkable)}")


def crosscheck(models: Sequence[ModelSpec], tasks: Sequence[str], output_dir: Path, judge: str = "embedding",
               num_samples: int | None = None, data_dir: Path | None = None, limit: int | None = None,
               run_options: Mapping[str, Any] | None = None, **rank_options: Any) -> Ranking | None:
    """Generate evidence with every model (`output_dir/runs/<name>`, resumable), then `rank` them into
    `output_dir/ranking`. `num_samples` defaults to the tasks' paper setting (10 for video and image);
    `run_options` are further RunOptions fields, `rank_options` further `rank` arguments.
    Returns None on the non-main processes of an `accelerate launch`."""
    if len(models) < 2:
        raise ConfigError("CrossCheck needs at least two models (targets that are also each other's evidence)")
    _check_cross_checkable(tasks)
    check_judge(judge, rank_options.get("judge_args"))
    options = {"num_samples": num_samples, "data_dir": data_dir, "limit": limit, **dict(run_options or {})}
    folders = generate_evidence(list(models), list(tasks), Path(output_dir), **options)
    if folders is None:
        return None
    config = {"models": [{"name": m.name, "model": m.model, "model_args": redact_values(m.model_args)} for m in models],
              "tasks": list(tasks), "num_samples": num_samples, "limit": limit,
              "run_options": {k: str(v) if isinstance(v, Path) else v for k, v in options.items()}}
    return rank(folders, Path(output_dir) / RANKING, tasks=tasks, judge=judge, config=config,
                run_models={m.name: m for m in models}, **rank_options)


def _plugins() -> dict[str, Any]:
    """What was loaded from outside hallubench (--include, entry points), when anything was: the ranking's provenance."""
    sources = plugin_sources()
    return {"plugins": sources} if any(sources.values()) else {}
