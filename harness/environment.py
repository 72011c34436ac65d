"""Package versions and git hash recorded in results.json."""
from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path

from hallubench.harness.results_schema import Environment
from hallubench.registry import plugin_distributions

PACKAGES = ("hallubench", "torch", "transformers", "accelerate", "datasets", "evaluate", "numpy", "av", "librosa")


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def git_hash() -> str | None:
    """Commit of the hallubench checkout, or None outside a git checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent,
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def environment() -> Environment:
    """Versions of hallubench's main dependencies and of the installed plug-in packages that were loaded."""
    return Environment(packages={**{name: _version(name) for name in PACKAGES}, **plugin_distributions()},
                       git_hash=git_hash(), python=platform.python_version())
