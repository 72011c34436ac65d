"""What a ranking is: its boards (one leaderboard each) and the Ranking that holds them with the judge and
config, plus their views as rows, markdown and JSON. Writing them to a folder is ranking/report.py's job."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hallubench.markup import escape_markdown, escape_terminal
from hallubench.ranking.intervals import board_uncertainty


@dataclass
class Board:
    """One leaderboard: targets' sentences judged against evidence; `results` from score_records,
    `refcheck` the same against the rows' human references (or None)."""

    name: str
    documents: list[str]
    sentences: dict[str, list[list[str]]]
    results: dict[str, Any]
    refcheck: dict[str, Any] | None = None
    selfcheck: dict[str, float] | None = None
    empty: list[tuple[str, str]] = field(default_factory=list)
    evidence_modality: dict[str, str] | None = None
    notes: list[str] = field(default_factory=list)
    extension: str | None = None  # why this board is ours, with no counterpart in the paper (None: the paper's)


@dataclass
class Ranking:
    """What a CrossCheck ranking produced; `folder` is where it was written (None until then); `uncertainty`
    per board, the bootstrap intervals and adjacent sign tests (ranking/intervals.py), made on creation;
    `mini_data`: run name -> its ranked tasks that it made on the embedded synthetic mini benchmarks."""

    boards: list[Board]
    judge: dict[str, Any]
    config: dict[str, Any]
    runs: dict[str, str]
    correlations: dict[str, dict[str, Any]] = field(default_factory=dict)
    folder: Path | None = None
    uncertainty: dict[str, dict[str, Any]] = field(default_factory=dict)
    mini_data: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self):
        for board in self.boards:
            if board.name not in self.uncertainty:
                self.uncertainty[board.name] = board_uncertainty(board.results)

    def rows(self) -> list[dict[str, Any]]:
        """One leaderboard row per (board, model), best (lowest CrossCheck score) first."""
        out = []
        for board in self.boards:
            res, sure = board.results, self.uncertainty[board.name]
            p_vs_next = {test["better"]: test["p"] for test in sure["adjacent_sign_tests"]}
            for rank, model in enumerate(res["ranking"], start=1):
                low, high = sure["intervals"][model]
                out.append({
                    "board": board.name, "rank": rank, "model": model, "crosscheck": res["scores"][model],
                    "ci_low": low, "ci_high": high, "p_vs_next": p_vs_next.get(model),
                    "selfcheck": (board.selfcheck or {}).get(model),
                    "refcheck": board.refcheck["scores"].get(model) if board.refcheck else None,
                    "sentences": sum(map(len, res["sentence_scores"][model].values())),
                    "documents": len(res["document_scores"][model]),
                })
        return out

    def mini_notice(self, name: Callable[[str], str] = str) -> str | None:
        """The warning above a ranking of runs made on the embedded synthetic mini benchmarks; None otherwise;
        `name` formats the run names (escape_markdown for markdown)."""
        if not self.mini_data:
            return None
        return (f"MINI DATA: runs made on the embedded synthetic mini benchmarks (--data-dir mini): "
                f"{mini_runs(self.mini_data, name)}. This ranking is a pipeline check, not a measurement of the models.")

    def table(self, markdown: bool = True) -> str:
        """The leaderboard (after the MINI DATA warning, if any), one table per board, plus correlations and judge
        counters. As markdown (leaderboard.md, and the Hub card on `rank --push-to-hub`) every name from the run
        folders (run and board names, notes, judge errors) is escaped (hallubench/markup.py): none can add a
        heading, table cell, link or tag. `markdown=False` is the terminal's plain text: the same lines with no
        markdown escapes, emphasis or heading marks (a terminal renders none of them), names' control characters
        shown as escapes."""
        escape, strong, heading_mark = (escape_markdown, "**", "### ") if markdown else (escape_terminal, "", "")
        notice = self.mini_notice(escape)
        lines = [f"{strong}{notice}{strong}", ""] if notice else []
        for board in self.boards:  # board names are hallubench's own (task names), not the run folders'
            heading = f"{heading_mark}{board.name}" + (" (our extension)" if board.extension else "")
            lines += [heading, "", "| rank | model | CrossCheck ↓ | 95% CI | vs next: sign test p "
                      "| SelfCheck ↓ | RefCheck ↓ | sentences |", "|---:|---|---:|---:|---:|---:|---:|---:|"]
            for row in (r for r in self.rows() if r["board"] == board.name):
                lines.append(f"| {row['rank']} | {escape(row['model'])} | {_fmt(row['crosscheck'])} "
                             f"| [{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}] | {_fmt_p(row['p_vs_next'])} "
                             f"| {_fmt(row['selfcheck'])} | {_fmt(row['refcheck'])} | {row['sentences']} |")
            no_sentences = sorted(set(board.sentences) - set(board.results["scores"]))
            notes = ([f"our extension: {board.extension}"] if board.extension else []) + board.notes + \
                ([f"no sentence to judge, not ranked: {', '.join(no_sentences)}"] if no_sentences else [])
            for name, corr in self.correlations.get(board.name, {}).items():
                notes.append(f"{name}: {_fmt(corr['value'])} (n={corr['n']}{', ' + corr['note'] if corr['note'] else ''})")
            lines += [""] + [f"- {escape(note)}" for note in notes] + ([""] if notes else [])
        if self.boards:
            lines.append(f"Uncertainty: {self.uncertainty[self.boards[0].name]['method']}; a sign test p above 0.05 "
                         "means the two neighbours are not told apart on these documents.")
        c = self.judge["counters"]
        lines.append(f"Judge {escape(self.judge['judge_id'])} ({escape(self.judge['prompt_version'])}): "
                     f"{c.get('pairs', 0)} pairs, "
                     f"{c.get('calls', 0)} judge calls made, {c.get('saved', 0)} saved by the cache, "
                     f"{c.get('undecided', 0) - c.get('errors', 0)} unparseable judge outputs (scored 0.5).")
        errors = self.judge.get("errors") or []
        if errors:
            first = errors[0]
            detail = (f"{first['board']}, system {first['system']}, document {first['document']}, sentence "
                      f"{first['sentence'][:80]!r}: {first['error'][:200]}")
            lines.append(f"{strong}{c.get('errors', 0)} judgments failed{strong} (judge errors, scored 0.5, not cached: "
                         f"rerun to retry them; all listed in crosscheck.json). First: {escape(detail)}")
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        boards = {}
        for b in self.boards:
            boards[b.name] = {
                "ranking": b.results["ranking"], "scores": b.results["scores"], "eta": b.results["eta"],
                "selfcheck_scores_for_eta": b.results["selfcheck_scores"], "selfcheck": b.selfcheck,
                "refcheck": b.refcheck and b.refcheck["scores"], "documents": b.documents,
                "evidence_modality": b.evidence_modality, "empty_responses": [list(e) for e in b.empty],
                "notes": b.notes, "extension": b.extension, "correlations": self.correlations.get(b.name, {}),
                "uncertainty": self.uncertainty[b.name],
            }
        return {"boards": boards, "judge": self.judge, "config": self.config, "runs": self.runs,
                "mini_data": self.mini_data}


def mini_runs(mini_data: dict[str, list[str]], name: Callable[[str], str] = str) -> str:
    """`a (task1, task2); b (task1)`: the runs (formatted by `name`) and their tasks made on the mini benchmarks."""
    return "; ".join(f"{name(run)} ({', '.join(tasks)})" for run, tasks in sorted(mini_data.items()))


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def _fmt_p(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"
