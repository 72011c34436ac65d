"""Shared fixtures.

`shared_data` is the one place tests reach the authors' real files: HALLUBENCH_SHARED_DATA, else ../shared/data
beside the checkout, else the pinned files that `hallubench reproduce --fetch-only` put in HF_HOME (the same
layout). Without any of them those tests skip, and the run ends with one line saying how to get them; under CI
(CI=true) a missing folder is an error, so the reproductions always run there.
"""
import os
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("HALLUBENCH_SHARED_DATA", PROJECT_ROOT.parent / "shared" / "data"))
NO_REFERENCES = "the authors' reference files are absent (`hallubench reproduce --fetch-only` gets them)"


def _reference_folder() -> Path | None:
    if SHARED_DATA.is_dir():
        return SHARED_DATA
    from hallubench.reproduce.references import References, cache_folder, pins

    fetched = References(cache_folder(), cache=True)
    return fetched.folder if not fetched.missing(pins()) else None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    folder = _reference_folder()
    if folder is not None:
        return folder
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{NO_REFERENCES}; CI needs them at {SHARED_DATA}")
    pytest.skip(NO_REFERENCES)


@pytest.fixture(scope="session")
def references(shared_data):
    """The reference folder as the reproductions read it: every file checked against its pin."""
    from hallubench.reproduce.references import References

    return References(shared_data, cache=False)


def pytest_terminal_summary(terminalreporter):
    """One line for every test skipped for want of the reference files, instead of one reason each."""
    skipped = [report for report in terminalreporter.stats.get("skipped", [])
               if NO_REFERENCES in str(getattr(report, "longrepr", ""))]
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} tests skipped: {NO_REFERENCES}")


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
