"""The `hallubench` command: one subcommand per module in this package."""
from __future__ import annotations

import argparse
import importlib
import sys
from importlib.metadata import version

# Each module exposes `register(subparsers)`, adding its parser with `func=handler(args) -> int`.
COMMANDS: tuple[str, ...] = ("demo", "run", "build", "metrics", "publish", "crosscheck", "rank")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hallubench",
        description="Measure hallucination in audio, video and image language models.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('hallubench')}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"hallubench.cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
