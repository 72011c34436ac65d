"""Which models take part: `ModelSpec` (display name, adapter, adapter arguments) from lm-eval style
flags (`--model hf --models A,B --model-args dtype=float32`) or a YAML `models:` list."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from hallubench.errors import ConfigError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


@dataclass(frozen=True)
class ModelSpec:
    """One model: `name` (display name and run folder name), `model` (adapter: hf, openai) and its arguments."""

    name: str
    model: str = "hf"
    model_args: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ConfigError(f"model name {self.name!r}: use letters, digits, '.', '_', '+' or '-' "
                              "(it names the model's run folder); set `name:` in the --config YAML")


def default_name(path_or_id: str, depth: int = 1) -> str:
    """A display name from a checkpoint path or Hub id: its last `depth` path components joined by '-', made
    folder-safe."""
    parts = [part for part in Path(str(path_or_id).rstrip("/")).parts if part not in ("/", ".", "..")]
    tail = "-".join(parts[-depth:]) or str(path_or_id)
    return re.sub(r"[^A-Za-z0-9._+-]", "-", tail).lstrip("-._+") or "model"


def default_names(checkpoints: list[str]) -> list[str]:
    """Each checkpoint's display name: its last path component, or as many of its last components as tell it
    from the others (runs/demo/models/seed1/qwen2_5_omni beside seed2/qwen2_5_omni: seed1-qwen2_5_omni). The
    same checkpoint given twice keeps one name, which `unique` refuses."""
    depths = [1] * len(checkpoints)
    while True:
        names = [default_name(checkpoint, depth) for checkpoint, depth in zip(checkpoints, depths)]
        clashing = {i for i, name in enumerate(names) for j, other in enumerate(names)
                    if name == other and checkpoints[i].rstrip("/") != checkpoints[j].rstrip("/")}
        deeper = [i for i in clashing if depths[i] < len(Path(checkpoints[i]).parts)]
        if not deeper:
            return names
        for i in deeper:
            depths[i] += 1


def specs_from_flags(model: str, models: list[str], model_args: dict[str, Any]) -> list[ModelSpec]:
    """`--model ADAPTER --models A,B --model-args K=V`: one spec per checkpoint, the shared arguments each."""
    return unique([ModelSpec(name, model, {**model_args, "pretrained": m}) for m, name in zip(models, default_names(models))])


def specs_from_yaml(entries: Any, model: str, model_args: dict[str, Any], source: str) -> list[ModelSpec]:
    """A YAML `models:` list; each entry a checkpoint string or a mapping {name, model, model_args / pretrained}.

    Top-level `model` / `model_args` are defaults an entry's own keys override."""
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{source}: `models` must be a non-empty list")
    specs = []
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            entry = {"pretrained": entry}
        if not isinstance(entry, dict):
            raise ConfigError(f"{source}: models[{i}] must be a checkpoint string or a mapping, got {entry!r:.60}")
        unknown = set(entry) - {"name", "model", "model_args", "pretrained"}
        if unknown:
            raise ConfigError(f"{source}: models[{i}] has unknown key(s) {sorted(unknown)}; "
                              "allowed: name, model, model_args, pretrained")
        args = {**model_args, **(entry.get("model_args") or {})}
        if "pretrained" in entry:
            args["pretrained"] = entry["pretrained"]
        checkpoint = args.get("pretrained") or args.get("model")
        name = entry.get("name") or (default_name(checkpoint) if checkpoint else None)
        if not name:
            raise ConfigError(f"{source}: models[{i}] needs a `name` or a `pretrained` checkpoint")
        specs.append(ModelSpec(str(name), entry.get("model", model), args))
    return unique(specs)


def unique(specs: list[ModelSpec]) -> list[ModelSpec]:
    names = [spec.name for spec in specs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError(f"models named twice: {', '.join(repeated)}; give each a distinct `name` in the "
                          "--config YAML (checkpoints in different folders with the same last component clash)")
    return specs
