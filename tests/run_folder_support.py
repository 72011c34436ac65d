"""Editing a run folder as a test's attack needs it, past the checks that are not under test."""
import hashlib
import json
from pathlib import Path

from hallubench.harness.atomic import MANIFEST


def rewrite_results(folder: Path, results: dict) -> None:
    """results.json replaced (or written) as a whole write would leave it (its manifest entry too), so only the check
    under test can tell the edit: a results.json that is not the one its manifest lists is refused before anything else."""
    data = json.dumps(results).encode()
    (folder / "results.json").write_bytes(data)
    path = folder / MANIFEST  # a folder written by hand gets the manifest a whole write leaves
    manifest = json.loads(path.read_text()) if path.is_file() else {"what": "run", "files": {}}
    manifest["files"]["results.json"] = hashlib.sha256(data).hexdigest()
    (folder / MANIFEST).write_text(json.dumps(manifest))


def seal(folder: Path, what: str = "ranking") -> Path:
    """The manifest a whole write leaves, over the files `folder` holds now: a folder written by hand (a ranking, a
    run's results) made whole as its writer would leave it, or an edit made past the manifest check."""
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in Path(folder).iterdir()
             if p.is_file() and not p.name.startswith(".")}
    (Path(folder) / MANIFEST).write_text(json.dumps({"what": what, "files": files}))
    return Path(folder)
