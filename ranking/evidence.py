"""Evidence generation: one harness run per model (greedy answer + N stochastic samples per item), each
in its own run folder, so it is sharded (accelerate), cached and resumed by the harness itself."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from hallubench.harness.options import RunOptions
from hallubench.errors import ConfigError
from hallubench.ranking.specs import ModelSpec

RUNS = "runs"


def run_dir(output_dir: Path, spec: ModelSpec) -> Path:
    return Path(output_dir) / RUNS / spec.name


def generate_evidence(specs: list[ModelSpec], tasks: list[str], output_dir: Path,
                      **run_options: Any) -> dict[str, Path] | None:
    """Run every model on `tasks` into `output_dir/runs/<name>`; name -> run folder on the main process,
    None on the other processes of an `accelerate launch` (they only generate).

    `run_options` are further RunOptions fields (num_samples, limit, data_dir, num_frames, gen_kwargs, seed, ...);
    the stochastic samples keep the task's paper settings (temperature 1.0, top-p 0.9, N=10 for video/image).
    """
    from hallubench.harness.runner import run

    if run_options.get("num_samples") == 0:
        raise ConfigError("--num-samples 0 leaves no evidence passages; CrossCheck needs at least 1")
    folders: dict[str, Path] | None = {}
    for spec in specs:
        options = RunOptions(model=spec.model, model_args=dict(spec.model_args), tasks=list(tasks),
                             output_dir=run_dir(output_dir, spec), **run_options)
        if run(options) is None:
            folders = None
        elif folders is not None:
            folders[spec.name] = options.output_dir
    return folders
