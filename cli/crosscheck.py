"""`hallubench crosscheck`: generate evidence with several models, then rank them (CrossCheckGPT).

    hallubench crosscheck --tasks avhallubench_visual,avhallubench_audio \\
        --model hf --models PATH_OR_ID_A,PATH_OR_ID_B,PATH_OR_ID_C --model-args dtype=float32
    hallubench crosscheck --config models.yaml            # models with their own args and display names
    accelerate launch -m hallubench crosscheck ...        # generation sharded over processes

Each model answers every item greedily and draws N stochastic passages (the paper's settings:
temperature 1.0, top-p 0.9, N=10 for video and image; --num-samples to change N) in its own run folder
OUTPUT_DIR/runs/<name> through the harness (`hallubench run`), so a rerun resumes and a model already run
is skipped. Then the models are ranked as by `hallubench rank OUTPUT_DIR/runs/*` into OUTPUT_DIR/ranking.
Adding a model later judges only the sentence/passage pairs that involve it (the judgment cache).

--config YAML keys: the flags' names (dashes or underscores) plus `models:`, a list whose entries are a
checkpoint string or {name, pretrained, model, model_args}; top-level model / model_args are defaults.
Flags override the file.

    models:
      - {name: omni-7b, pretrained: Qwen/Qwen2.5-Omni-7B}
      - {name: vl-2b, pretrained: Qwen/Qwen2-VL-2B-Instruct, model_args: {batch_size: 4}}
    model_args: {dtype: bfloat16}
    tasks: [avhallubench_visual, avhallubench_audio]
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hallubench.cli.flags import (RANK_OPTIONS, add_generation_arguments, add_model_arguments, add_output_argument,
                                  add_rank_arguments, config_as_flags)
from hallubench.cli.rank import finish, rank_options
from hallubench.config import typed_texts
from hallubench.harness.options import parse_gen_kwargs, parse_kv, read_yaml_options
from hallubench.errors import ConfigError

S = argparse.SUPPRESS
RUN_OPTIONS = ("seed", "batch_size", "gen_kwargs", "modality", "num_frames", "fps", "max_frames", "device", "dtype",
               "include")
KEYS = {"model", "models", "model_args", "tasks", "output_dir", "data_dir", "limit", "num_samples", "push_to_hub",
        "allow_mini_data", *RUN_OPTIONS, *RANK_OPTIONS}


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    p = subparsers.add_parser("crosscheck", help=summary,
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                              argument_default=S)
    p.add_argument("--config", type=Path, help="YAML file with these options and a `models:` list")
    add_model_arguments(p, "chat model adapter for --models (default hf)", 'shared adapter arguments "dtype=float32"')
    p.add_argument("--models", help="comma-separated checkpoints (paths or Hub ids); display name = last component")
    p.add_argument("--tasks", help="comma-separated cross-checkable tasks, e.g. avhallubench_visual,avhallubench_audio")
    add_output_argument(p, "folder for runs/<model> and ranking/ (default runs/crosscheck)")
    add_generation_arguments(p)
    add_rank_arguments(p)
    p.set_defaults(func=handle)


def _yaml(path: Path) -> dict[str, Any]:
    data = config_as_flags(read_yaml_options(path), path, register)
    if isinstance(data.get("models"), list):  # each model's own key=value mapping, typed as the flags type it
        data["models"] = [{**entry, "model_args": typed_texts(entry["model_args"])}
                          if isinstance(entry, dict) and isinstance(entry.get("model_args"), dict) else entry
                          for entry in data["models"]]
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise ConfigError(f"--config {path}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(KEYS))}")
    return data


def _split(value: Any) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else list(value or [])


def plan(args: argparse.Namespace) -> dict[str, Any]:
    """The `crosscheck()` keyword arguments from --config and the flags (flags win)."""
    given = {k: v for k, v in vars(args).items() if k not in ("func", "command", "config")}
    source = f"--config {args.config}" if getattr(args, "config", None) else "flags"
    values = {**(_yaml(args.config) if getattr(args, "config", None) else {}), **given}
    from hallubench.ranking.specs import specs_from_flags, specs_from_yaml  # torch: after the config is read

    model = values.get("model", "hf")
    model_args = values.get("model_args") or {}
    if isinstance(model_args, str):
        model_args = parse_kv(model_args, "--model-args")
    if "models" in given or not isinstance(values.get("models"), list):
        if not values.get("models"):
            raise ConfigError("give the models: --models A,B,... or a `models:` list in --config")
        specs = specs_from_flags(model, _split(values["models"]), model_args)
    else:
        specs = specs_from_yaml(values["models"], model, model_args, source)
    tasks = _split(values.get("tasks"))
    if not tasks:
        raise ConfigError("--tasks is empty; e.g. --tasks avhallubench_visual,avhallubench_audio")
    run_options = {k: values[k] for k in RUN_OPTIONS if values.get(k) is not None}
    if isinstance(run_options.get("gen_kwargs"), str):
        run_options["gen_kwargs"] = parse_gen_kwargs(run_options["gen_kwargs"])
    return {"models": specs, "tasks": tasks, "output_dir": Path(values.get("output_dir") or "runs/crosscheck"),
            "num_samples": values.get("num_samples"), "data_dir": values.get("data_dir"),
            "limit": values.get("limit"), "run_options": run_options, **rank_options(values),
            "push_to_hub": values.get("push_to_hub"), "allow_mini_data": bool(values.get("allow_mini_data"))}


def handle(args: argparse.Namespace) -> int:
    kwargs = plan(args)  # every flag and the config checked before torch and the metrics load
    from hallubench.ranking.pipeline import crosscheck

    push_to_hub, allow_mini_data = kwargs.pop("push_to_hub"), kwargs.pop("allow_mini_data")
    ranking = crosscheck(**kwargs)
    if ranking is None:  # a non-main process of `accelerate launch`: it only generated
        return 0
    return finish(ranking, push_to_hub, "crosscheck", allow_mini_data)
