"""Shared fixtures.

`shared_data` is the one place tests reach the authors' real files in ../shared/data. From a
source checkout without them those tests skip, saying why; under CI (CI=true) a missing folder
is an error, so the reproductions always run there.
"""
import os
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("HALLUBENCH_SHARED_DATA", PROJECT_ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if SHARED_DATA.is_dir():
        return SHARED_DATA
    reason = f"the authors' reference files are not at {SHARED_DATA} (set HALLUBENCH_SHARED_DATA to their folder)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def mini_datasets(tmp_path_factory) -> Path:
    """The embedded mini benchmarks, built once for the whole session (tests read it, never write into it)."""
    from hallubench.harness.data import ensure_mini

    return ensure_mini(tmp_path_factory.mktemp("mini-cache"))


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory):
    """kind -> a tiny random checkpoint folder of that kind (hallubench.testing.tiny_checkpoints: tiny_models' kinds
    and the zoo's families), made once per session (read-only for tests); skips when the kind needs a package
    that is not installed, or a newer transformers than the installed one, naming it."""
    from hallubench.models.families import needs_newer_transformers
    from hallubench.registry import MODEL_FAMILIES
    from hallubench.testing.tiny_checkpoints import make_tiny, requirements

    made: dict[str, Path] = {}

    def checkpoint(kind: str) -> Path:
        for package in requirements(kind):
            pytest.importorskip(package, reason=f"the tiny {kind} checkpoint needs {package}")
        family = next((f for f in MODEL_FAMILIES.values() if f.tiny == kind), None)
        if family is not None and (too_old := needs_newer_transformers(family)):
            pytest.skip(too_old)  # the lowest-versions CI job; loading refuses it (test_models_families)
        if kind not in made:
            made[kind] = make_tiny(kind, tmp_path_factory.mktemp(f"tiny-{kind}"))
        return made[kind]

    return checkpoint
