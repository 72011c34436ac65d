"""The --include flag every command takes (plug-ins from outside hallubench), and its reading before the command's
parser is built: the plug-ins it imports are among the parser's choices and in its --help. A light module (argparse
only), imported by `main` for every command."""
from __future__ import annotations

import argparse

INCLUDE_FLAGS = ("--include", "--include-path", "--include_path")  # lm-eval spells it --include_path


def add_include_argument(p: argparse.ArgumentParser) -> None:
    """--include PATH_OR_MODULE (repeatable), on every command; `main` imports them before building the parser, so
    their plug-ins are among the choices and in --help (see `included`)."""
    p.add_argument(*INCLUDE_FLAGS, dest="include", action="append", metavar="PATH_OR_MODULE", default=argparse.SUPPRESS,
                   help="plug-ins from outside hallubench (benchmarks, tasks, model adapters, judges, metrics): a .py "
                        "file, a folder (each module in it; each <name>/<name>.py subfolder a metric) or a module "
                        "name; repeat for more. Installed plug-in packages (entry point group hallubench.plugins) "
                        "need none")


def included(argv: list[str]) -> list[str]:
    """The --include values in `argv`, read before the command's parser is built."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    add_include_argument(parser)
    return getattr(parser.parse_known_args(argv)[0], "include", [])
