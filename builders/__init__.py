"""Dataset builders: convert each benchmark's official release into a Hub-ready dataset folder.

`build("cmm", source, out)` writes `out/` with data/<config>/test-<fingerprint>.parquet, media (paths relative to
the folder), README.md (dataset card with YAML `configs:`, license, citation) and, when rows were left
out, skipped.jsonl; `datasets.load_dataset(out, name=config, split="test")` reads it without hallubench.
"""
from __future__ import annotations

from pathlib import Path

from hallubench.builders.base import ReleaseBuilder
from hallubench.builders.folder import BuildSummary, build_release
from hallubench.builders.hub import HUB_PREFIX, fetch_release
from hallubench.errors import BuildError
from hallubench.registry import BUILDERS, discover_modules

# Every builder module registers its class (`@register_builder`); BENCHMARKS is that registry.
BENCHMARKS = BUILDERS


def builder_for(benchmark: str) -> type[ReleaseBuilder]:
    """The builder class of `benchmark`; BuildError listing the valid names otherwise."""
    try:
        return BUILDERS[benchmark]
    except KeyError:
        raise BuildError(BUILDERS.unknown(benchmark)) from None


def build_with_summary(benchmark: str, source: str | Path | None, out: str | Path, skip_missing: bool = False,
                       overwrite: bool = False, mini: bool = False) -> BuildSummary:
    """Like `build`, returning what was written (rows per config, skipped rows, notes)."""
    builder_cls = builder_for(benchmark)
    snapshot = None
    if source is None or str(source).startswith(HUB_PREFIX):
        snapshot = fetch_release(builder_cls, None if source is None else str(source))
        source = snapshot.path
    return build_release(builder_cls, source, out, skip_missing=skip_missing, overwrite=overwrite, mini=mini,
                         origin=snapshot)


def build(benchmark: str, source: str | Path | None, out: str | Path, skip_missing: bool = False,
          overwrite: bool = False, mini: bool = False) -> Path:
    """Convert the official release of `benchmark` at `source` into the dataset folder `out`; returns `out`.

    `source` None downloads the official release from the Hub (its builder's `HUB_RELEASE`), and
    "hub:<repo_id>[@revision]" another Hub repo; the card records the repo and the commit built from.

    Bad input raises BuildError naming the file and row; with `skip_missing`, bad rows are left out
    and listed in out/skipped.jsonl instead. An existing non-empty `out` is replaced only with `overwrite`.
    `mini` marks a dataset built from an embedded mini release (its card says so, and so do runs on it).
    """
    return build_with_summary(benchmark, source, out, skip_missing, overwrite, mini).path


discover_modules(__name__, __path__)

__all__ = ["BENCHMARKS", "BuildError", "BuildSummary", "ReleaseBuilder", "build", "build_with_summary", "builder_for"]
