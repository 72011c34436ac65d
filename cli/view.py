"""`hallubench view`: a static site of a CrossCheck ranking and its run folders, to open from disk.

    hallubench view runs/cc/ranking --out site                      # then open site/index.html
    hallubench view runs/cc/ranking runs/cc/runs/* --out site --serve
    hallubench view runs/cc/ranking --out site --push-to-hub you/leaderboard

index.html holds a leaderboard per board (rank, CrossCheck score with its 95 % interval, the sign test against the
next model, SelfCheck and RefCheck, sortable columns, eta weights, judge and version, rank correlations); each
item has a page with every model's sentences coloured by their CrossCheck score beside the item's media (copied
from the dataset folder the runs read, when it is on this machine) and human reference; each RUN_DIR gets a page
with its metrics and every sample (prompt, media used, raw output, parsed answer, reference), unreadable outputs
highlighted. The site is plain HTML, CSS and JavaScript: no server, no network.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from hallubench.cli.flags import reads_folders


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    p = subparsers.add_parser("view", help=summary, description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    reads_folders(p.add_argument("ranking_dir", type=Path, metavar="RANKING_DIR",
                                 help="ranking folder (`hallubench rank` output)"), "ranking")
    reads_folders(p.add_argument("run_dirs", type=Path, nargs="*", metavar="RUN_DIR",
                                 help="run folders to give a page each"), "run")
    p.add_argument("--out", type=Path, default=Path("site"), help="folder the site is written to (default ./site)")
    p.add_argument("--reference", type=Path, help="reference scores (as for `hallubench rank --reference`): adds rank "
                                                  "correlations with them to each board")
    p.add_argument("--reference-higher-is-better", action="store_true", help="higher reference scores are better")
    p.add_argument("--data-dir", "--data_dir", dest="data_dir", type=Path,
                   help="the built datasets the runs read, when not where their results.json says (for the media)")
    p.add_argument("--serve", action="store_true", help="then serve the site on http://127.0.0.1:PORT/")
    p.add_argument("--port", type=int, default=8000, help="port for --serve (default 8000; 0 picks a free one)")
    p.add_argument("--push-to-hub", metavar="SPACE_ID", help="upload the site as a static Hugging Face Space")
    p.add_argument("--allow-mini-data", action="store_true",
                   help="push a site of a ranking made on the embedded synthetic mini benchmarks (refused otherwise)")
    p.add_argument("--token", help="Hub token for --push-to-hub (default: HF_TOKEN, then the `hf auth login` token)")
    p.add_argument("--private", action="store_true", help="create the Space private")
    p.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from hallubench.ranking.report import reading_ranking
    from hallubench.view.site import build_site, is_mini
    from hallubench.view.space import push_site

    # The ranking is held from the first read to the end of the upload: a `rank` writing it, or one killed half-way,
    # refuses both, and none starts in between.
    with reading_ranking(args.ranking_dir, "push-to-hub" if args.push_to_hub else "view"):
        index = build_site(args.ranking_dir, args.run_dirs, args.out, reference=args.reference,
                           reference_higher_is_better=args.reference_higher_is_better, data_dir=args.data_dir)
        print(f"site written: open {index.resolve()}")
        if args.push_to_hub:
            url, commit = push_site(args.out, args.push_to_hub, mini=is_mini(args.ranking_dir),
                                    allow_mini_data=args.allow_mini_data, token=args.token,
                                    private=True if args.private else None)
            print(f"Space: {url} (commit {commit})")
    if args.serve:
        from hallubench.view.serve import serve

        serve(args.out, args.port)
    return 0
