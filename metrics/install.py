"""Make the packaged metrics load by bare name (`evaluate.load("pa_hr")`) and publish them as Spaces.

`evaluate.load("<name>")` looks, in order, for ./<name>/<name>.py, then the Hub Space
evaluate-metric/<name> (then evaluate-comparison/, evaluate-measurement/), and when those fail for
the newest cached copy of that canonical module:
<HF_MODULES_CACHE>/evaluate_modules/metrics/evaluate-metric--<name>/<64-hex hash>/<name>.py, every
folder on the way a package (__init__.py). `install` writes exactly that copy, so the last step finds
it offline and online alike (the Hub has no evaluate-metric Space of these names). The hash is the
sha256 of the script, so `ensure_installed` (run by `import hallubench.metrics` and by the CLI) tells
from file names alone whether this hallubench's metrics are the ones cached, without importing evaluate.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from hallubench.errors import FolderWriteError
from hallubench.registry import METRICS
from hallubench.writes import write_bytes_atomically, write_error, write_text_atomically

METRICS_DIR = Path(__file__).resolve().parent
NAMESPACE = "evaluate-metric"


@dataclass(frozen=True)
class Installed:
    name: str
    path: Path  # the cached <name>.py
    changed: bool  # False when that exact version was already installed


def available() -> dict[str, Path]:
    """Packaged metrics: every folder here holding <name>/<name>.py, as name -> script path (registered in METRICS
    by the package's import; plug-ins from outside hallubench register theirs too, and load by path)."""
    return {folder.name: folder / f"{folder.name}.py" for folder in sorted(METRICS_DIR.iterdir())
            if (folder / f"{folder.name}.py").is_file()}


def script(name: str) -> Path:
    """The script of packaged metric `name`; ValueError listing the known names otherwise."""
    try:
        return METRICS.lookup(name)
    except KeyError as err:
        raise ValueError(err.args[0]) from None


def default_modules_cache() -> Path:
    """evaluate's HF_MODULES_CACHE, worked out as evaluate.config does (importing evaluate takes seconds)."""
    from huggingface_hub import constants

    return Path(os.environ.get("HF_MODULES_CACHE") or Path(constants.HF_HOME) / "modules")


def _cached_script(cache: Path, name: str, source: Path) -> Path:
    version = hashlib.sha256(source.read_bytes()).hexdigest()
    return cache / "evaluate_modules" / "metrics" / f"{NAMESPACE}--{name}" / version / f"{name}.py"


def _copies(cache: Path, name: str) -> list[Path]:
    """Every cached copy of metric `name`: the canonical module `install` writes and the copies `evaluate.load(PATH)`
    makes itself (evaluate_modules/metrics/<name>/<hash>/), one folder per version."""
    root = cache / "evaluate_modules" / "metrics"
    return [version for module in (root / f"{NAMESPACE}--{name}", root / name) if module.is_dir()
            for version in module.iterdir() if version.is_dir() and not version.is_symlink()]


def _broken(copy: Path, name: str, source: Path) -> bool:
    """Whether a cached copy is not the package's: its script or a module beside it differs from the package's file
    (cut short by a full disk, emptied, edited, an older version), or its metadata is unreadable."""
    for path in copy.iterdir():
        packaged = source.parent / path.name
        if path.suffix == ".py" and path.name != "__init__.py" and packaged.is_file() \
                and (path.is_symlink() or path.read_bytes() != packaged.read_bytes()):
            return True
    try:
        json.loads((copy / f"{name}.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False  # evaluate writes what is missing; what is there must be whole
    except (OSError, ValueError):
        return True
    return False


def repair(cache: str | Path | None = None, scripts: dict[str, Path] | None = None) -> list[Path]:
    """Remove every cached copy of `scripts` (name -> script; default: the packaged metrics) that is not the package's
    file byte for byte (a copy cut by a full disk imports as a module without its metric: `'NoneType' object is not
    callable`); `install` and evaluate then write a whole one. The copies removed."""
    from filelock import FileLock

    cache = Path(cache) if cache is not None else default_modules_cache()
    removed = []
    for name, source in (scripts if scripts is not None else available()).items():
        for copy in _copies(cache, name):
            with FileLock(f"{copy.parent}.lock"):  # the lock evaluate itself takes on this folder
                if copy.is_dir() and _broken(copy, name, source):
                    shutil.rmtree(copy, ignore_errors=True)
                    removed.append(copy)
    return removed


def _installed(cache: Path) -> bool:
    """Whether every packaged metric, as this hallubench ships it, is the cached copy, byte for byte."""
    for name, source in available().items():
        target = _cached_script(cache, name, source)
        if not target.is_file() or target.read_bytes() != source.read_bytes():
            return False
    return True


def ensure_installed(cache: str | Path | None = None) -> list[Installed]:
    """Repair the cache's copies of the metrics, then `install` unless every packaged metric, as this hallubench
    ships it, is already the cached copy (a cheap check by content). A cache that cannot be written only warns: the
    caller goes on."""
    cache = Path(cache) if cache is not None else default_modules_cache()
    try:
        if not repair(cache) and _installed(cache):
            return []
        return install(cache)
    except (OSError, FolderWriteError) as error:
        warnings.warn(f"could not put the hallubench metrics into evaluate's module cache {cache} ({error}); "
                      'evaluate.load("<name>") will not find them by bare name. Set HF_HOME or HF_MODULES_CACHE '
                      "to a writable folder and run `hallubench metrics install`.", stacklevel=2)
        return []


def install(modules_cache: str | Path | None = None) -> list[Installed]:
    """Copy every packaged metric into evaluate's module cache (default: HF_MODULES_CACHE) as the cached
    canonical module evaluate-metric/<name>, each file written whole (a full disk is a FolderWriteError naming it
    and leaves no part of a file). Idempotent; a copy that is not the package's (`repair`) is replaced, and other
    cached versions are removed, because evaluate picks the most recently modified copy."""
    from filelock import FileLock

    cache = Path(modules_cache) if modules_cache is not None else default_modules_cache()
    repaired = {copy.parent.name for copy in repair(cache)}
    installed = []
    for name, source in available().items():
        target = _cached_script(cache, name, source)
        module_dir = target.parent.parent
        try:
            for package in (cache / "evaluate_modules", module_dir.parent, module_dir, target.parent):
                package.mkdir(parents=True, exist_ok=True)
                (package / "__init__.py").touch()
        except OSError as err:
            raise write_error(cache, err, "run `hallubench metrics install` again once it can be written") from err
        with FileLock(f"{module_dir}.lock"):  # the lock evaluate itself takes on this folder
            changed = not target.is_file() or target.read_bytes() != source.read_bytes()
            if changed:
                meta = {"original file path": str(source), "local file path": str(target)}
                write_text_atomically(target.with_suffix(".json"), json.dumps(meta))
                write_bytes_atomically(target, source.read_bytes())  # last: a script without metadata is no copy
            for stale in module_dir.iterdir():
                if stale.is_dir() and len(stale.name) == 64 and stale != target.parent:
                    shutil.rmtree(stale)
        installed.append(Installed(name, target, changed or module_dir.name in repaired))
    return installed


def load(name: str, script: Path, **options):
    """`evaluate.load(script)` of metric `name`, after its cached copies are checked (`repair`): a copy a full disk cut
    short is replaced, not imported. A cache that cannot be written is a FolderWriteError naming it."""
    import evaluate

    cache = Path(evaluate.config.HF_MODULES_CACHE)  # where this evaluate copies it (read once, at its import)
    try:
        repair(cache, {name: Path(script)})
        return evaluate.load(str(script), **options)
    except OSError as err:
        with contextlib.suppress(OSError):
            repair(cache, {name: Path(script)})  # the part evaluate copied goes: the next load copies it whole
        raise write_error(cache / "evaluate_modules" / "metrics" / name, err,
                          f"the metric {name} was not loaded and its cached copy was removed") from err


_APP = '''import os

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "{name}.py"))
launch_gradio_widget(module)
'''


def layout_space(name: str, out: str | Path) -> Path:
    """Write metric `name` into folder `out` as an evaluate Space: <name>.py, README.md (the metric card,
    whose YAML header is the Space's), app.py (the gradio widget) and requirements.txt."""
    from importlib.metadata import version

    source = script(name)
    card = source.with_name("README.md")
    if not card.is_file() or not card.read_text(encoding="utf-8").startswith("---\n"):
        raise ValueError(f"{card} is missing or has no YAML header; a Space needs its card")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, out / source.name)
    shutil.copyfile(card, out / "README.md")
    (out / "app.py").write_text(_APP.format(name=name), encoding="utf-8")
    requirements = [f"evaluate=={version('evaluate')}", f"datasets=={version('datasets')}"]
    extra = source.with_name("requirements.txt")
    if extra.is_file():
        requirements += [line for line in extra.read_text(encoding="utf-8").splitlines() if line.strip()]
    (out / "requirements.txt").write_text("\n".join(requirements) + "\n", encoding="utf-8")
    return out


def push(name: str, repo_id: str, api=None, token: str | None = None) -> str:
    """Lay metric `name` out as a Space in a temporary folder and upload it to Space `repo_id`, creating
    it (gradio SDK) if needed. `api` defaults to huggingface_hub.HfApi. Returns the Space's URL."""
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    with tempfile.TemporaryDirectory() as scratch:
        folder = layout_space(name, scratch)
        url = api.create_repo(repo_id, repo_type="space", space_sdk="gradio", exist_ok=True)
        api.upload_folder(
            repo_id=repo_id, folder_path=folder, repo_type="space",
            commit_message=f"Upload the {name} metric from hallubench",
        )
    return str(url)
