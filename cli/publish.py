"""`hallubench publish`: put a run folder on the Hugging Face Hub.

    hallubench publish runs/qwen --repo you/qwen-hallubench            # dataset repo + PR on the model repo
    hallubench publish runs/qwen --repo you/qwen-hallubench --no-model-results --private

The dataset repo gets <model>/results.json, <model>/samples/<task>.parquet and a card with the results
table and one config per model and task (a second model joins the first); the model repo gets
`.eval_results/hallubench_<task>.yaml` as a pull request, with the scores on the benchmark datasets named
by --benchmark-ids (pushed `hallubench build` folders, whose eval.yaml defines the task ids); publishing again
updates that open pull request. Everything is checked before the first commit: a refused publish writes nothing.
A run with --limit or missing samples is refused unless --allow-partial. The token comes from --token, HF_TOKEN
or `hf auth login`, and is never printed or written anywhere.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from hallubench.cli.flags import reads_folders
from hallubench.harness.options import parse_kv


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    p = subparsers.add_parser("publish", help=summary, description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    reads_folders(p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="run folder (holds results.json)"), "run")
    p.add_argument("--repo", required=True, help="Hub dataset repo for results and samples, e.g. you/model-hallubench")
    p.add_argument("--token", help="Hub token (default: HF_TOKEN, then the `hf auth login` token); prefer those: "
                                   "a token on the command line stays in shell history and the process list")
    p.add_argument("--private", action="store_true", help="create the dataset repo private")
    p.add_argument("--no-model-results", dest="model_results", action="store_false",
                   help="do not add .eval_results to the model repo")
    p.add_argument("--model-id", help="the model's Hub repo (default: the run's pretrained= argument if it is one)")
    p.add_argument("--direct-commit", dest="create_pr", action="store_false",
                   help="commit .eval_results to the model repo's main branch instead of opening a pull request")
    p.add_argument("--allow-mini-data", action="store_true",
                   help="publish a run made on the synthetic mini benchmarks (--data-dir mini, demo), which is refused "
                        "otherwise; the card then says so and no .eval_results go to the model repo")
    p.add_argument("--allow-partial", action="store_true",
                   help="publish a run made with --limit or missing samples, which is refused otherwise; the card then "
                        "says so and no .eval_results go to the model repo")
    p.add_argument("--benchmark-ids", help='the Hub datasets holding the benchmarks (pushed `hallubench build` folders, '
                                           'with their eval.yaml), "cmm=org/cmm,cchall=org/cchall"; .eval_results '
                                           "entries point at them, and a benchmark without one gets none. Each is checked first: a Hub "
                                           "dataset with hallubench's eval.yaml defining the run's task ids, "
                                           "holding the data the run read")
    p.set_defaults(func=handle)


def _publish(run_dir: Path, **kwargs) -> int:
    from hallubench.publish.runs import publish_run

    report = publish_run(run_dir, **kwargs)
    print(f"results dataset: {report.dataset_url} (commit {report.dataset_commit_url})")
    if report.model_commit_url:
        print(f"model results for {report.model_id}: {report.model_commit_url}")
    if report.model_note:
        print(report.model_note)
    return 0


def handle(args: argparse.Namespace) -> int:
    benchmark_ids = parse_kv(args.benchmark_ids, "--benchmark-ids")
    return _publish(args.run_dir, repo_id=args.repo, token=args.token, private=True if args.private else None,
                    model_results=args.model_results, model_id=args.model_id, create_pr=args.create_pr,
                    benchmark_ids={k: str(v) for k, v in benchmark_ids.items()}, allow_mini_data=args.allow_mini_data,
                    allow_partial=args.allow_partial)
