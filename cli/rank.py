"""`hallubench rank`: a CrossCheck leaderboard from run folders that hold sampled passages.

    hallubench rank runs/a runs/b runs/c --output-dir ranking
    hallubench rank a=runs/x b=runs/y --judge nli --judge-args pretrained=MNLI_PATH --refcheck
    hallubench rank runs/* --reference human.csv --reference-higher-is-better
    hallubench rank runs/* --judge implicit --judge-args pretrained=JUDGE_CHECKPOINT,dtype=bfloat16

Every model is a target and an evidence model (its own samples included). Each target's greedy answer
is split into sentences, each sentence judged against every sampled passage of the same item (embedding
judge by default, offline), every judgment cached in the SQLite judgment cache (--cache, default
$HALLUBENCH_CACHE/judgments.sqlite), and the CrossCheck scores aggregated with eta weights (--weighting).
With avhallubench_visual and avhallubench_audio both present, a third board scores each video
description against visual and audio evidence, min(C_audio, C_visual).

The output folder holds leaderboard.md/.csv/.png, documents.csv, sentences.jsonl and crosscheck.json
(eta, scores, correlations, config, judge id and cache counters: judge calls made and saved).
--reference FILE: CSV with model,score (optional task and id columns for per-document scores) or JSON
{model: score} / [models best first]; lower = less hallucination unless --reference-higher-is-better.
--refcheck judges each target against the row's human description (RefCheck) and correlates with it.
--judge implicit (CrossCheck-implicit): each run folder's model, reloaded as its results.json says, looks at
the item's media as its run did and analyses each target sentence; the judge model (--judge-args
pretrained=...) reads the analysis and answers Yes/No. The media come from the runs' --data-dir (or
--judge-args data_dir=...).
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hallubench.cli.flags import RANK_OPTIONS, add_output_argument, add_rank_arguments, reads_folders
from hallubench.harness.options import parse_kv

S = argparse.SUPPRESS


def rank_options(values: dict[str, Any]) -> dict[str, Any]:
    """The `rank()` keyword arguments among `values` (flags or YAML keys), --judge-args parsed."""
    out = {k: values[k] for k in RANK_OPTIONS if values.get(k) is not None}
    if isinstance(out.get("judge_args"), str):
        out["judge_args"] = parse_kv(out["judge_args"], "--judge-args")
    return out


def push(folder: Path, repo_id: str, command: str, allow_mini_data: bool = False) -> int:
    from hallubench.publish.rankings import push_ranking

    url, commit = push_ranking(folder, repo_id, allow_mini_data=allow_mini_data)
    print(f"ranking dataset: {url} (commit {commit})")
    return 0


def finish(ranking, push_to_hub: str | None, command: str, allow_mini_data: bool = False) -> int:
    """Print the leaderboard and where it went; upload it when asked."""
    print(ranking.table(markdown=False))
    print(f"ranking written to {ranking.folder}")
    return push(ranking.folder, push_to_hub, command, allow_mini_data) if push_to_hub else 0


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    p = subparsers.add_parser("rank", help=summary, description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter, argument_default=S)
    reads_folders(p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR",
                                 help="run folder, or NAME=RUN_DIR to name its model"), "run")
    add_output_argument(p, "ranking folder (default ./ranking)", default=Path("ranking"))
    p.add_argument("--tasks", help="comma-separated tasks to rank (default: every cross-checkable task found)")
    add_rank_arguments(p)
    p.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from hallubench import api

    values = vars(args)
    # the leaderboard is printed before an upload, so a refused or failed push still shows what was ranked
    ranking = api.rank(args.run_dirs, output_dir=args.output_dir, tasks=values.get("tasks"), **rank_options(values))
    return finish(ranking, values.get("push_to_hub"), "rank", values.get("allow_mini_data", False))
