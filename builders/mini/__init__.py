"""Embedded mini benchmarks: a small sample of each benchmark in its exact official release layout.

The media are made by code (shapes and tones, written as mp4 with or without an audio track, wav and
png) and the annotations are generated from the same specs, so the labels are true to the media.
Everything is deterministic (the same bytes every run) and takes seconds. These releases are the
main job's embedded default and the tests' fixtures.
"""
from __future__ import annotations

from pathlib import Path

import inspect

from hallubench.builders import build
from hallubench.registry import MINI_RELEASES, discover_modules

# Each module here registers its `make` (`@register_mini_release`); RELEASES is that registry.
RELEASES = MINI_RELEASES


def make_release(benchmark: str, out_dir: str | Path, *, zipped: bool = False) -> Path:
    """Write the mini release of `benchmark` into `out_dir` in the official layout and return `out_dir`.

    `zipped=True` (CMM only, a `make` with a `zipped` parameter) ships the media as `reorg_raw_files.zip` instead of the folder.
    """
    if benchmark not in RELEASES:
        raise ValueError(f"unknown benchmark {benchmark!r}: choose one of {', '.join(sorted(RELEASES))}")
    make = RELEASES[benchmark]
    if zipped and "zipped" not in inspect.signature(make).parameters:
        raise ValueError(f"zipped=True applies only to releases whose media ship as a zip (cmm), not to {benchmark!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return make(out, zipped=True) if zipped else make(out)


def build_all(out_dir: str | Path) -> dict[str, Path]:
    """Make every mini release into `out_dir/releases/<name>` and build its normalized dataset into
    `out_dir/datasets/<name>` (its card marked mini); return name -> dataset folder."""
    out = Path(out_dir)
    return {name: build(name, make_release(name, out / "releases" / name), out / "datasets" / name, mini=True)
            for name in RELEASES}


discover_modules(__name__, __path__)
