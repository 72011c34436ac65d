"""Judges by name (`--judge embedding|nli|llm|implicit|...` + `--judge-args`, the JUDGES registry: each judge
registers its factory in hallubench.judges), always behind the judgment cache, and the judging of one board:
every target sentence against every evidence passage of its query.

A judge's factory takes its typed config and returns a Judge; a factory marked `per_run` (the implicit
judge, whose evidence models are the run folders' models) also takes the run folders and the cache and
returns the ranking's EvidenceJudges itself."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hallubench.errors import ConfigError
from hallubench.judges import CachedJudge, JudgmentCache, judge_responses, split_sentences
from hallubench.judges.configs import PAIRS_PER_CALL, ChatJudgeArgs
from hallubench.ranking.aggregate import score_records
from hallubench.ranking.board import Board
from hallubench.ranking.evidence_judges import EvidenceJudges
from hallubench.registry import JUDGES

REFERENCE = "reference"


def judge_config(kind: str, judge_args: Mapping[str, Any] | None = None):
    """The typed config of judge `kind` from `judge_args`; ConfigError naming what is wrong (loads nothing)."""
    args = judge_args or {}
    if kind not in JUDGES:
        raise ConfigError(f"--judge {kind!r}: choose one of {', '.join(JUDGES)}")
    if kind == "nli" and "pretrained" not in args:
        raise ConfigError("--judge nli needs --judge-args pretrained=MNLI_CHECKPOINT")
    if issubclass(JUDGES[kind].config, ChatJudgeArgs) and "pretrained" not in args and "model" not in args:
        raise ConfigError(f"--judge {kind} needs --judge-args pretrained=CHECKPOINT (and adapter=hf|openai)")
    return JUDGES[kind].config.from_args(args, what=f"--judge-args for --judge {kind}")


def check_judge(kind: str, judge_args: Mapping[str, Any] | None = None) -> None:
    """ConfigError when `kind` and `judge_args` name no judge that can be built (cheap: loads nothing)."""
    judge_config(kind, judge_args)


def make_judge(kind: str, judge_args: Mapping[str, Any] | None = None, cache: JudgmentCache | None = None) -> CachedJudge:
    """A CachedJudge over the `kind` judge built from `judge_args` (the fields of its config in judges/configs.py)."""
    judge = JUDGES[kind](judge_config(kind, judge_args))
    return CachedJudge(judge, cache, batch_size=getattr(JUDGES[kind].config, "pairs_per_call", PAIRS_PER_CALL))


def make_evidence_judges(kind: str, judge_args: Mapping[str, Any] | None, cache: JudgmentCache | None,
                         run_dirs: Mapping[str, Any], run_models: Mapping[str, Any] | None = None) -> EvidenceJudges:
    """How a ranking of `run_dirs` judges with `kind`: one cached judge for all evidence (make_judge), or the
    per-run judges of a `per_run` factory (`run_models`: the ModelSpec the user gave for a run, where the runs were
    made from the user's own specs, as crosscheck's are)."""
    factory = JUDGES[kind]
    if getattr(factory, "per_run", False):
        return factory(judge_config(kind, judge_args), run_dirs=run_dirs, cache=cache, run_models=run_models)
    return EvidenceJudges(kind, make_judge(kind, judge_args, cache))


def judge_board(name: str, documents: Sequence[str], targets: Mapping[str, Sequence[str]],
                evidence: Mapping[str, Sequence[Sequence[str]]], judges: EvidenceJudges, *, weighting: str,
                temperature: float, references: Sequence[str | None] | None = None,
                evidence_modality: Mapping[str, str] | None = None,
                selfcheck_scores: Mapping[str, float] | None = None,
                evidence_of: Mapping[str, str] | None = None) -> Board:
    """Judge and aggregate one board; with `references` (one per document) also RefCheck. `evidence_of` names
    the model behind each evidence name that is not itself a model ("<model>@visual")."""
    by_evidence = {e: judges.judge_for((evidence_of or {}).get(e, e)) for e in evidence}
    records = judge_responses(targets, evidence, by_evidence, documents=documents)
    if not records.systems:
        raise ConfigError(f"{name}: no target response has a sentence to judge (all answers are empty)")
    try:
        results = score_records(records.compute_kwargs(), weighting=weighting, temperature=temperature,
                                evidence_modality=evidence_modality, selfcheck_scores=selfcheck_scores)
    except ValueError as err:  # e.g. "query" weighting and a model with an empty answer on some item
        raise ConfigError(f"ranking {name}: {err}") from None
    board = Board(name, [str(d) for d in documents],
                  {t: [split_sentences(r) for r in rs] for t, rs in targets.items()}, results,
                  empty=records.empty, evidence_modality=dict(evidence_modality) if evidence_modality else None)
    if all(t in evidence for t in targets):  # SelfCheckGPT baseline: each target's own samples only
        board.selfcheck = score_records(records.compute_kwargs(), weighting="uniform", evidence_models=[])["scores"]
    if references is not None:
        if not judges.reads_text:
            board.notes.append(f"RefCheck skipped: the {judges.kind} judge checks sentences against each item's "
                               "input, not against a text")
        elif any(not ref for ref in references):
            board.notes.append("RefCheck skipped: some rows have no human reference")
        else:
            ref = judge_responses(targets, {REFERENCE: [[r] for r in references]}, judges.judge_for(REFERENCE),
                                  documents=documents)
            board.refcheck = score_records(ref.compute_kwargs(), weighting="uniform")
    if results["unweighted_evidence"]:
        board.notes.append("left out of the evidence (no own sentences for a SelfCheck weight): "
                           + ", ".join(results["unweighted_evidence"]))
    return board
