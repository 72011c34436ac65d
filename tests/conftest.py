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
