"""Embedded mini benchmarks: a small sample of each benchmark in its exact official release layout.

The media are made by code (shapes and tones, written as mp4 with or without an audio track, wav and
png) and the annotations are generated from the same specs, so the labels are true to the media.
Everything is deterministic (the same bytes every run) and takes seconds. These releases are the
main job's embedded default and the tests' fixtures.
"""
from __future__ import annotations

from pathlib import Path

from hallubench.builders import build

from . import avhallubench, cchall, cmm, mhalubench, sac3

RELEASES = {
    "avhallubench": avhallubench.make,
    "cmm": cmm.make,
    "cchall": cchall.make,
    "mhalubench": mhalubench.make,
    "sac3": sac3.make,
}


def make_release(benchmark: str, out_dir: str | Path, *, zipped: bool = False) -> Path:
    """Write the mini release of `benchmark` into `out_dir` in the official layout and return `out_dir`.

    `zipped=True` (CMM only) ships the media as `reorg_raw_files.zip` instead of the folder.
    """
    if benchmark not in RELEASES:
        raise ValueError(f"unknown benchmark {benchmark!r}: choose one of {', '.join(RELEASES)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if benchmark == "cmm":
        return cmm.make(out, zipped=zipped)
    if zipped:
        raise ValueError(f"zipped=True applies only to cmm (its media ship as a zip), not to {benchmark!r}")
    return RELEASES[benchmark](out)


def build_all(out_dir: str | Path) -> dict[str, Path]:
    """Make every mini release into `out_dir/releases/<name>` and build its normalized dataset into
    `out_dir/datasets/<name>` (its card marked mini); return name -> dataset folder."""
    out = Path(out_dir)
    return {name: build(name, make_release(name, out / "releases" / name), out / "datasets" / name, mini=True)
            for name in RELEASES}
