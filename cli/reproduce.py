"""`hallubench reproduce [NAME ...]`: every published number we attempt, computed from the authors' released files
and printed published against ours.

    hallubench reproduce                      # all of them (minutes on a CPU); the files are fetched once
    hallubench reproduce --list               # each reproduction, its verdict on the docs page, its files
    hallubench reproduce crosscheck-table6-self-bias --references ../shared/data
    hallubench reproduce --fetch-only         # only download and check the files (e.g. before going offline)

The files are pinned (repository, commit, path, sha256) and fetched into HF_HOME/hallubench/references; a file
whose hash differs is refused. HF_HUB_OFFLINE=1 never connects; --references DIR reads a folder laid out the same
way and connects to nothing. Verdicts: exact (equal at the paper's precision), close (within one point), not
reproduced; docs/topics/reproductions.md has the same table with the reasons.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from hallubench.cli.flags import add_output_argument


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    p = subparsers.add_parser("reproduce", help=summary, description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="*", metavar="NAME", help="reproductions to run (default: all; see --list)")
    p.add_argument("--list", action="store_true", help="name each reproduction with its source files, run nothing")
    p.add_argument("--references", type=Path, metavar="DIR",
                   help="a folder laid out like the reference data (sac3/, crosscheck_wikibio/, ...): no network")
    p.add_argument("--fetch-only", action="store_true",
                   help="download and check every pinned file into the cache, compute nothing")
    add_output_argument(p, "where reproductions.json and reproductions.md go (default: runs/reproductions)",
                        default=Path("runs/reproductions"))
    p.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from hallubench.reproduce.report import listing, print_table, write_outputs
    from hallubench.reproduce.run import fetch, reproduce, selected

    if args.list:
        print("\n".join(listing(selected(args.names))))
        return 0
    if args.fetch_only:
        refs = fetch(args.names, args.references, everything=not args.names)
        print(f"reference files present and checked in {refs.folder}")
        return 0
    results = reproduce(args.names, args.references)
    print_table(results)
    write_outputs(results, args.output_dir)
    print(f"wrote {args.output_dir / 'reproductions.json'} and reproductions.md")
    return 0
