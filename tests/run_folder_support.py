"""Editing a run folder as a test's attack needs it, past the checks that are not under test."""
import hashlib
import json
from pathlib import Path

from hallubench.harness.atomic import MANIFEST


def rewrite_results(folder: Path, results: dict) -> None:
    """results.json replaced as a whole write would leave it (its manifest entry too), so only the check under test
    can tell the edit: a results.json that is not the one its manifest lists is refused before anything else."""
    data = json.dumps(results).encode()
    (folder / "results.json").write_bytes(data)
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["files"]["results.json"] = hashlib.sha256(data).hexdigest()
    (folder / MANIFEST).write_text(json.dumps(manifest))
