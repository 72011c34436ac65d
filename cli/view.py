"""`hallubench view`: a static site of run folders and/or a CrossCheck ranking, to open from disk.

    hallubench view runs/llava runs/qwen -o site                    # models x benchmarks board; open site/index.html
    hallubench view runs/cc/ranking runs/cc/runs/* -o site          # a ranking with the run folders it names
    hallubench view runs/cc/ranking runs/cc/runs/* -o site --serve
    hallubench view runs/* -o site --push-to-hub you/leaderboard

index.html opens on the ranking: a tab per board (rank, CrossCheck score with its 95 % interval on one axis, the
sign test against the next model, SelfCheck and RefCheck, sortable columns, eta weights, judge, rank correlations),
then the models x benchmarks grid (one row per model, named as the boards name it; columns grouped by task with the
headline score shown and the others a click away; each value with its 95 % interval and MINI/SUBSET/⚠ marks), and
an About section (hallubench version, date, this command, how to cite). Every board and the grid download as CSV
and JSON; the papers' published tables are on published.html. Each item has a page with every model's sentences
coloured by their CrossCheck score beside the item's media and human reference; each run folder gets a page with
the terminal's results table, its data status (MINI DATA, SUBSET, unreadable, partial) and every sample with the
verdict it was scored with. The site is plain HTML, CSS and JavaScript: no server, no network.

Each run folder's verdicts are re-aggregated as `hallubench verify` does. A folder whose results.json differs gets
a VERDICTS DIFFER banner on its pages and a mark on its cells; the site is still written, the error names the
folder and the exit status is 1 (a site flagging such a folder is never pushed with --push-to-hub).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hallubench.cli.flags import add_output_argument, number, reads_folders
from hallubench.config import Port


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    p = subparsers.add_parser("view", help=summary, description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    reads_folders(p.add_argument("folders", type=Path, nargs="+", metavar="FOLDER",
                                 help="a ranking folder (`hallubench rank` output, holding crosscheck.json) and/or run "
                                      "folders, each given a page and a row of the models x benchmarks board"), "any")
    add_output_argument(p, "folder the site is written to (default ./site)", default=Path("site"))
    p.add_argument("--reference", type=Path, help="reference scores (as for `hallubench rank --reference`): adds rank "
                                                  "correlations with them to each board")
    p.add_argument("--reference-higher-is-better", action="store_true", help="higher reference scores are better")
    p.add_argument("--data-dir", "--data_dir", dest="data_dir", type=Path,
                   help="the built datasets the runs read, whose media the site shows (the folder a results.json names is "
                        "data: read only when given here)")
    p.add_argument("--serve", action="store_true", help="then serve the site on http://127.0.0.1:PORT/")
    p.add_argument("--port", type=number(Port[int]), default=8000, help="port for --serve (default 8000; 0 picks a free one)")
    p.add_argument("--push-to-hub", metavar="SPACE_ID", help="upload the site as a static Hugging Face Space")
    p.add_argument("--allow-mini-data", action="store_true",
                   help="push a site of a ranking made on the embedded synthetic mini benchmarks (refused otherwise)")
    p.add_argument("--token", help="Hub token for --push-to-hub (default: HF_TOKEN, then the `hf auth login` token)")
    p.add_argument("--private", action="store_true", help="create the Space private")
    p.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from contextlib import ExitStack

    from hallubench.errors import VerdictMismatchError
    from hallubench.harness.run_state import holding_run_folders
    from hallubench.ranking.report import reading_ranking
    from hallubench.view.site import build_site, is_mini, split_folders
    from hallubench.view.space import push_site

    ranking_dir, run_dirs = split_folders(args.folders)
    purpose = "push-to-hub" if args.push_to_hub else "view"
    # Every folder shown is held from its first read to the end of the upload: a writer at work on one, or one killed
    # half-way, refuses both, and none starts in between.
    with ExitStack() as held:
        if ranking_dir is not None:
            held.enter_context(reading_ranking(ranking_dir, purpose))
        held.enter_context(holding_run_folders(run_dirs, purpose))
        try:
            index, flagged = build_site(ranking_dir, run_dirs, args.output_dir, reference=args.reference,
                                        reference_higher_is_better=args.reference_higher_is_better,
                                        data_dir=args.data_dir), None
        except VerdictMismatchError as err:  # written, its pages flag the folders: said, never pushed
            index, flagged = Path(args.output_dir) / "index.html", err
        print(f"site written: open {index.resolve()}")
        if flagged is not None and (args.push_to_hub or args.serve):
            print(f"hallubench view: {flagged}", file=sys.stderr)
            if args.push_to_hub:
                raise flagged
        if args.push_to_hub:
            url, commit = push_site(args.output_dir, args.push_to_hub, mini=is_mini(ranking_dir, run_dirs),
                                    allow_mini_data=args.allow_mini_data, token=args.token,
                                    private=True if args.private else None)
            print(f"Space: {url} (commit {commit})")
    if args.serve:
        from hallubench.view.serve import serve

        serve(args.output_dir, args.port)
    if flagged is not None:
        raise flagged
    return 0
