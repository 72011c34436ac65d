"""`hallubench build <benchmark> [--source <official release>] -o <dir>`: make a Hub-ready dataset folder.

Without --source the official release is downloaded from its Hub repo (AVHalluBench scb10x/avhallubench, CMM
DAMO-NLP-SG/CMM, CCHall 67L11/CCHall) with huggingface_hub; `--source hub:<repo_id>[@revision]` names
another repo or revision. The card records the repo and commit.
"""
from __future__ import annotations

import argparse

from hallubench.builders import BENCHMARKS
from hallubench.cli.flags import add_output_argument


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    parser = subparsers.add_parser(
        "build", help=summary,
        description="Convert an official benchmark release into a dataset folder (parquet per config, media, "
                    "README.md card) that datasets.load_dataset(folder, name=config, split='test') reads. Without "
                    "--source, the official release is downloaded from its Hub repo.")
    parser.add_argument("benchmark", choices=list(BENCHMARKS), help="which benchmark the release is")
    parser.add_argument("--source", help="the official release: a folder or file, or hub:<repo_id>[@revision] "
                                         "(default: download the benchmark's official Hub release)")
    add_output_argument(parser, "the dataset folder to write", required=True)
    parser.add_argument("--skip-missing", action="store_true",
                        help="leave out bad rows (missing media or fields, unknown values) and list them in "
                             "<output-dir>/skipped.jsonl instead of stopping")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output-dir that hallubench built (a folder it did not make is never deleted)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hallubench import api

    summary = api.build(args.benchmark, output_dir=args.output_dir, source=args.source, skip_missing=args.skip_missing,
                        overwrite=args.overwrite)
    if summary.origin is not None:
        print(f"built from the Hub release {summary.origin.repo_id} at commit {summary.origin.commit}")
    print(f"wrote {summary.path}")
    for name, count in summary.rows.items():
        print(f"  {name}: {count} rows")
    for note in summary.notes:
        print(f"  note: {note}")
    if summary.skipped:
        print(f"skipped {len(summary.skipped)} row(s), listed in {summary.path / 'skipped.jsonl'}:")
        for row in summary.skipped:
            print(f"  {row['file']} row {row['index']} (id {row['id']!r}): {row['reason']}")
    return 0
