"""Every tiny random checkpoint under one name: the kinds of tiny_models.py and the families of tiny_zoo.py.

`make_tiny(kind, out_dir)` builds either; `TINY_KINDS` lists them all (no name is in both modules) and
`requirements(kind)` the packages beyond hallubench's own that a kind's processor or model imports.
"""
from __future__ import annotations

from pathlib import Path

from hallubench.testing.tiny_models import EXTRA_KINDS, GENERIC_KINDS, KINDS, make_tiny_model
from hallubench.testing.tiny_zoo import ZOO_FAMILIES, ZOO_SPECS, make_tiny_zoo_model

TINY_KINDS = (*KINDS, *EXTRA_KINDS, *GENERIC_KINDS, *ZOO_FAMILIES)
if len(set(TINY_KINDS)) != len(TINY_KINDS):
    raise ImportError(f"a tiny kind is named twice: {sorted(k for k in TINY_KINDS if TINY_KINDS.count(k) > 1)}")


def requirements(kind: str) -> tuple[str, ...]:
    return ZOO_SPECS[kind].requires if kind in ZOO_SPECS else ()


def make_tiny(kind: str, out_dir: str | Path, seed: int = 0) -> Path:
    """Write a tiny random `kind` checkpoint (one of TINY_KINDS) under out_dir/kind and return that folder."""
    if kind in ZOO_SPECS:
        return make_tiny_zoo_model(kind, out_dir, seed)
    if kind not in TINY_KINDS:
        raise ValueError(f"unknown tiny model kind {kind!r}; choose one of {', '.join(TINY_KINDS)}")
    return make_tiny_model(kind, out_dir, seed)
