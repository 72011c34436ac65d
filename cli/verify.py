"""`hallubench verify RUN_DIR`: re-aggregate a run folder's per-answer verdicts and say whether they equal its
results.json.

    hallubench verify runs/qwen2.5-omni

For every task whose metric gives per-answer verdicts (results.json `tasks.<task>.verdicts`): the verdicts are
those the metric gives the folder's samples now; the counts (errors, unparsed, scored, unreadable share), overall
and per group, are those the verdicts give; and each score that is a share of correct answers (accuracy, PA, HR,
recall...) is that share of the verdicts. Prints one line per task; exits 1 naming each task and metric that
differ (re-score the folder with `hallubench run --from-outputs RUN_DIR`), 0 when all agree.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from hallubench.cli.flags import reads_folders


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    p = subparsers.add_parser("verify", help=summary, description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    reads_folders(p.add_argument("run_dir", type=Path, metavar="RUN_DIR",
                                 help="a run folder with samples and results.json"), "run")
    p.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from hallubench.errors import VerdictMismatchError
    from hallubench.harness.command import rescore_hint
    from hallubench.harness.verify import verify_run
    from hallubench.markup import escape_terminal

    checks = verify_run(args.run_dir)
    for check in checks:
        name = escape_terminal(f"{check.task} ({check.metric or 'no metric'})")
        if not check.has_verdicts:
            print(f"{name}: no per-answer verdicts (its metric gives none); counts checked against the parser")
        for difference in check.differences:
            print(f"{name}: DIFFERS: {escape_terminal(difference)}")
        if not check.differences:
            print(f"{name}: {check.samples} samples; {len(check.checked)} values equal results.json")
    differing = [f"{check.task} ({check.metric})" for check in checks if check.differences]
    if differing:
        raise VerdictMismatchError(f"{args.run_dir}/results.json differs from its verdicts in "
                                   f"{', '.join(map(escape_terminal, differing))}; re-score the folder with "
                                   f"{rescore_hint(args.run_dir)}")
    print(f"{args.run_dir}: the verdicts of {len(checks)} tasks re-aggregate to results.json")
    return 0
