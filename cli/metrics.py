"""`hallubench metrics list|install|push`: the packaged evaluate metrics."""
from __future__ import annotations

import argparse
from pathlib import Path

from hallubench.cli.flags import add_output_argument
from hallubench.errors import ConfigError, did_you_mean
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


def _metric_name(name: str) -> str:
    # not argparse `choices`: with nargs="*" Python 3.11 checks the empty default against them and fails
    if name not in metrics.available():
        raise argparse.ArgumentTypeError(f"invalid choice: {name!r}{did_you_mean(name, metrics.available())} "
                                         f"(choose from {', '.join(metrics.available())})")
    return name


def _spaces(args: argparse.Namespace) -> dict[str, str]:
    """Metric name -> Space repo id, from --namespace (every metric named, default all) or --repo (one); an id
    that is no Hub repo id is refused naming its flag, before anything is laid out or uploaded."""
    from hallubench.publish.checks import check_repo_id

    names = args.names or list(metrics.available())
    if args.repo:
        if len(names) != 1:
            raise ConfigError("--repo names one Space; give one metric, or use --namespace ORG")
        return {names[0]: check_repo_id(args.repo, "--repo")}
    return {name: check_repo_id(f"{args.namespace}/{name}", "--namespace") for name in names}


def _push(args: argparse.Namespace) -> int:
    spaces = _spaces(args)
    if args.dry_run:
        for name, repo in spaces.items():
            folder = metrics.layout_space(name, (args.output_dir or Path(".")) / f"{name}-space")
            print(f"dry run: laid {name} out as a Space in {folder} (not uploaded to {repo}):")
            for path in sorted(folder.iterdir()):
                print(f"  {path.name}")
        return 0
    for name, repo in spaces.items():
        url = metrics.push(name, repo, token=args.token)
        print(f'uploaded {name} to {url}: evaluate.load("{repo}") loads it')
    return 0


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    parser = subparsers.add_parser("metrics", help=summary)
    commands = parser.add_subparsers(dest="metrics_command", metavar="ACTION", required=True)

    commands.add_parser("list", help="print the packaged metrics").set_defaults(func=_list)

    install = commands.add_parser("install", help="put every metric into evaluate's module cache (idempotent)")
    install.add_argument("--modules-cache", help="evaluate's modules cache (default: $HF_MODULES_CACHE or ~/.cache/huggingface/modules)")
    install.set_defaults(func=_install)

    push = commands.add_parser("push", help="publish metrics as evaluate Spaces on the Hub (evaluate.load('ORG/<name>'))")
    push.add_argument("names", nargs="*", metavar="NAME", type=_metric_name,
                      help=f"the metrics (default: all of {', '.join(metrics.available())})")
    where = push.add_mutually_exclusive_group(required=True)
    where.add_argument("--namespace", help="the user or organization: each metric goes to the Space NAMESPACE/<name>")
    where.add_argument("--repo", help="the Space of the one metric named, e.g. my-org/pa_hr")
    add_output_argument(push, "with --dry-run: lay each Space out in OUTPUT_DIR/<name>-space (default ./<name>-space)")
    push.add_argument("--dry-run", action="store_true", help="only lay the Spaces out; upload nothing")
    push.add_argument("--token", help="Hub token (default: the logged-in one / HF_TOKEN)")
    push.set_defaults(func=_push)
