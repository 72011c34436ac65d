"""`hallubench demo`: the main job on the embedded default, offline, in a few minutes on a CPU.

1. Builds the embedded mini benchmarks (official release layouts with code-made media) into
   Hub-ready datasets and prints what each holds. Only `demo` and `--data-dir mini` use them: they are
   synthetic, and results made on them say so.
2. Builds a tiny, untrained Qwen2.5-Omni thinker from a config and evaluates it with the real
   harness (processor, chat template, generate, parser, evaluate metrics) on CMM, CCHall and
   AVHalluBench. Its answers are noise: the numbers show the pipeline, not a model's quality,
   and most answers are reported as unparsed rather than guessed.
3. Ranks three such tiny models (differing only by their random seed) with CrossCheck on the
   AVHalluBench descriptions: each model's sentences against the passages every model samples,
   judged offline by the all-MiniLM-L6-v2 embedding judge through the judgment cache; prints the
   leaderboard and writes it with its chart (leaderboard.png).
4. Writes the static site of that ranking and of the run folders (`hallubench view`): leaderboards, every
   sentence coloured by its CrossCheck score beside the item's video, every sample of the runs; prints the
   path of its index.html to open in a browser (no server needed).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from hallubench.cli.flags import add_output_argument, checked
from hallubench.harness.options import parse_limit

def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    p = subparsers.add_parser("demo", help=summary,
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_output_argument(p, "where the tiny model, run folder and ranking go (default runs/demo)",
                        default=Path("runs/demo"))
    p.add_argument("--limit", type=checked(parse_limit), default=None,
                   help="first N samples of each task, or a fraction 0 < x < 1 of them (default: all)")
    p.set_defaults(func=handle)


def _section(title: str) -> None:
    print(f"\n{title}\n{'=' * len(title)}\n")


def show_datasets(data_dir: Path) -> None:
    from hallubench.builders.summary import summarize
    from hallubench.harness.report import markdown_table
    from hallubench.registry import MINI_RELEASES

    rows = [row for name in sorted(MINI_RELEASES) for row in summarize(name, data_dir / name)]
    print(markdown_table(["benchmark", "config", "rows", "labels"], rows))
    print(f"\n(built datasets: {data_dir}; each loads with datasets.load_dataset(folder, config, split='test'))")


def evaluate_tiny_model(out: Path, limit: int | float | None) -> None:
    import torch

    from hallubench.harness.data import MINI
    from hallubench.harness.options import RunOptions
    from hallubench.harness.report import table
    from hallubench.harness.runner import run
    from hallubench.testing.tiny_models import make_tiny_model

    torch.set_num_threads(1)  # identical numbers on every rerun of the demo
    model_dir = out / "models" / "qwen2_5_omni"
    if not (model_dir / "config.json").exists():
        model_dir = make_tiny_model("qwen2_5_omni", out / "models")
    from hallubench.benchmarks import all_tasks

    tasks = [name for name, task in all_tasks().items() if task.demo]
    options = RunOptions(model="hf", model_args={"pretrained": str(model_dir), "dtype": "float32"}, tasks=tasks,
                         output_dir=out / "run", data_dir=MINI, limit=limit, num_samples=0, num_frames=4,
                         gen_kwargs={"max_new_tokens": 24})
    results = run(options)
    print(table(results))
    print(f"\n(run folder: {options.output_dir}, chart results.png; rerun to resume, "
          "`hallubench run --from-outputs` to re-score)")


def rank_tiny_models(out: Path, limit: int | float | None) -> None:
    from hallubench.harness.data import MINI
    from hallubench.benchmarks import task_names
    from hallubench.ranking import crosscheck
    from hallubench.testing.demo import tiny_specs
    from hallubench.ranking.pipeline import audio_visual_pairs

    visual, audio = audio_visual_pairs(task_names())[0]
    ranking = crosscheck(tiny_specs(out / "models"), [visual, audio],
                         out / "crosscheck", judge="embedding", num_samples=2, data_dir=MINI, limit=limit,
                         run_options={"num_frames": 4, "gen_kwargs": {"max_new_tokens": 24}}, refcheck=True)
    print(ranking.table(markdown=False).rstrip("\n"))  # its final newline would print one more blank line
    print(f"\n(leaderboard, chart and per-sentence scores: {ranking.folder})")


def write_site(out: Path) -> None:
    from hallubench.harness.command import command_line
    from hallubench.view.site import build_site

    runs = [out / "run", *sorted(p for p in (out / "crosscheck" / "runs").iterdir() if p.is_dir())]
    index = build_site(out / "crosscheck" / "ranking", runs, out / "site")
    serve = command_line(["view", str(out / "crosscheck" / "ranking"), *map(str, runs), "-o", str(out / "site"), "--serve"])
    print(f"open {index.resolve().as_uri()} in a browser (or `{serve}`)")


def handle(args: argparse.Namespace) -> int:
    from hallubench.harness.data import MINI, resolve_data_dir

    _section("1. Embedded mini benchmarks, built into Hub-ready datasets")
    show_datasets(resolve_data_dir(MINI))
    _section("2. A tiny untrained Qwen2.5-Omni thinker through the harness (its answers are noise)")
    evaluate_tiny_model(args.output_dir, args.limit)
    _section("3. CrossCheck ranking of three tiny models, embedding judge (no references needed)")
    rank_tiny_models(args.output_dir, args.limit)
    _section("4. The ranking and the runs as a static site")
    write_site(args.output_dir)
    return 0
