"""Tiny local models for the offline demo: untrained Qwen2.5-Omni thinkers that differ only by the seed
of their random weights, as ModelSpecs for `crosscheck` (their text is noise; the ranking shows the
pipeline, not model quality)."""
from __future__ import annotations

from pathlib import Path

from hallubench.ranking.specs import ModelSpec


def tiny_specs(models_dir: Path, seeds: tuple[int, ...] = (1, 2, 3), kind: str = "qwen2_5_omni") -> list[ModelSpec]:
    """One tiny `kind` checkpoint per seed under models_dir/seed<k> (built once, reused), named tiny-<kind>-s<k>."""
    from hallubench.testing.tiny_models import make_tiny_model

    specs = []
    for seed in seeds:
        folder = Path(models_dir) / f"seed{seed}" / kind
        if not (folder / "config.json").is_file():
            folder = make_tiny_model(kind, folder.parent, seed=seed)
        specs.append(ModelSpec(f"tiny-{kind.replace('_', '-')}-s{seed}", "hf",
                               {"pretrained": str(folder), "dtype": "float32"}))
    return specs
