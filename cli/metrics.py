"""`hallubench metrics list|install|push`: the packaged evaluate metrics."""
from __future__ import annotations

import argparse

from hallubench.metrics import install as metrics


def _list(args: argparse.Namespace) -> int:
    for name, path in metrics.available().items():
        print(f"{name}\t{path}")
    return 0


def _install(args: argparse.Namespace) -> int:
    for item in metrics.install(args.modules_cache):
        print(f"{item.name}: {'installed' if item.changed else 'up to date'} at {item.path}")
    print('evaluate.load("<name>") now finds these by bare name, also offline '
          "(without network set HF_EVALUATE_OFFLINE=1 to skip the Hub lookup).")
    return 0


def _push(args: argparse.Namespace) -> int:
    if args.dry_run:
        folder = metrics.layout_space(args.name, args.out or f"{args.name}-space")
        print(f"dry run: laid {args.name} out as a Space in {folder} (not uploaded to {args.repo}):")
        for path in sorted(folder.iterdir()):
            print(f"  {path.name}")
        return 0
    url = metrics.push(args.name, args.repo, out=args.out, token=args.token)
    print(f"uploaded {args.name} to {url}")
    return 0


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    parser = subparsers.add_parser("metrics", help=summary)
    commands = parser.add_subparsers(dest="metrics_command", metavar="ACTION", required=True)

    commands.add_parser("list", help="print the packaged metrics").set_defaults(func=_list)

    install = commands.add_parser("install", help="put every metric into evaluate's module cache (idempotent)")
    install.add_argument("--modules-cache", help="evaluate's modules cache (default: $HF_MODULES_CACHE or ~/.cache/huggingface/modules)")
    install.set_defaults(func=_install)

    push = commands.add_parser("push", help="publish a metric as an evaluate Space on the Hub")
    push.add_argument("name", choices=list(metrics.available()), help="the metric")
    push.add_argument("--repo", required=True, help="the Space, e.g. my-org/pa_hr")
    push.add_argument("--out", help="lay the Space out in this folder (kept); default a temporary one")
    push.add_argument("--dry-run", action="store_true", help="only lay it out (in --out, default ./<name>-space); upload nothing")
    push.add_argument("--token", help="Hub token (default: the logged-in one / HF_TOKEN)")
    push.set_defaults(func=_push)
