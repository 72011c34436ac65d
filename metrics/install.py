"""Make the packaged metrics load by bare name (`evaluate.load("pa_hr")`) and publish them as Spaces.

`evaluate.load("<name>")` looks, in order, for ./<name>/<name>.py, then the Hub Space
evaluate-metric/<name> (then evaluate-comparison/, evaluate-measurement/), and when those fail for
the newest cached copy of that canonical module:
<HF_MODULES_CACHE>/evaluate_modules/metrics/evaluate-metric--<name>/<64-hex hash>/<name>.py, every
folder on the way a package (__init__.py). `install` writes exactly that copy, so the last step finds
it offline and online alike (the Hub has no evaluate-metric Space of these names).
"""
from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hallubench.registry import METRICS

METRICS_DIR = Path(__file__).resolve().parent
NAMESPACE = "evaluate-metric"


@dataclass(frozen=True)
class Installed:
    name: str
    path: Path  # the cached <name>.py
    changed: bool  # False when that exact version was already installed


def available() -> dict[str, Path]:
    """Packaged metrics: every folder here holding <name>/<name>.py (the METRICS registry), as name -> script path."""
    return dict(METRICS)


def script(name: str) -> Path:
    """The script of packaged metric `name`; ValueError listing the known names otherwise."""
    try:
        return METRICS.lookup(name)
    except KeyError as err:
        raise ValueError(err.args[0]) from None


def _check_self_contained(name: str, path: Path) -> None:
    from evaluate.loading import get_imports

    relative = [imported for kind, imported, *_ in get_imports(str(path)) if kind != "library"]
    if relative:
        raise ValueError(f"{path} imports {relative} relatively; a metric module must be one self-contained file")


def install(modules_cache: str | Path | None = None) -> list[Installed]:
    """Copy every packaged metric into evaluate's module cache (default: HF_MODULES_CACHE) as the cached
    canonical module evaluate-metric/<name>. Idempotent; older installed versions are removed, because
    evaluate picks the most recently modified copy."""
    from evaluate.loading import files_to_hash, init_dynamic_modules
    from filelock import FileLock

    dynamic_modules = Path(init_dynamic_modules(hf_modules_cache=modules_cache))
    (dynamic_modules / "metrics").mkdir(exist_ok=True)
    (dynamic_modules / "metrics" / "__init__.py").touch()
    installed = []
    for name, source in available().items():
        _check_self_contained(name, source)
        module_dir = dynamic_modules / "metrics" / f"{NAMESPACE}--{name}"
        version = files_to_hash([str(source)])
        target = module_dir / version / f"{name}.py"
        with FileLock(f"{module_dir}.lock"):  # the lock evaluate itself takes on this folder
            changed = not target.is_file() or target.read_bytes() != source.read_bytes()
            target.parent.mkdir(parents=True, exist_ok=True)
            (module_dir / "__init__.py").touch()
            (target.parent / "__init__.py").touch()
            if changed:
                shutil.copyfile(source, target)
                meta = {"original file path": str(source), "local file path": str(target)}
                target.with_suffix(".json").write_text(json.dumps(meta), encoding="utf-8")
            for stale in module_dir.iterdir():
                if stale.is_dir() and len(stale.name) == 64 and stale.name != version:
                    shutil.rmtree(stale)
        installed.append(Installed(name, target, changed))
    return installed


_APP = '''import os

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "{name}.py"))
launch_gradio_widget(module)
'''


def layout_space(name: str, out: str | Path) -> Path:
    """Write metric `name` into folder `out` as an evaluate Space: <name>.py, README.md (the metric card,
    whose YAML header is the Space's), app.py (the gradio widget) and requirements.txt."""
    import datasets
    import evaluate

    source = script(name)
    card = source.with_name("README.md")
    if not card.is_file() or not card.read_text(encoding="utf-8").startswith("---\n"):
        raise ValueError(f"{card} is missing or has no YAML header; a Space needs its card")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, out / source.name)
    shutil.copyfile(card, out / "README.md")
    (out / "app.py").write_text(_APP.format(name=name), encoding="utf-8")
    requirements = [f"evaluate=={evaluate.__version__}", f"datasets=={datasets.__version__}"]
    extra = source.with_name("requirements.txt")
    if extra.is_file():
        requirements += [line for line in extra.read_text(encoding="utf-8").splitlines() if line.strip()]
    (out / "requirements.txt").write_text("\n".join(requirements) + "\n", encoding="utf-8")
    return out


def push(name: str, repo_id: str, api=None, out: str | Path | None = None, token: str | None = None) -> str:
    """Lay metric `name` out as a Space (in `out`, else a temporary folder) and upload it to Space
    `repo_id`, creating it (gradio SDK) if needed. `api` defaults to huggingface_hub.HfApi. Returns the
    Space's URL."""
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    with tempfile.TemporaryDirectory() as scratch:
        folder = layout_space(name, out if out is not None else scratch)
        url = api.create_repo(repo_id, repo_type="space", space_sdk="gradio", exist_ok=True)
        api.upload_folder(
            repo_id=repo_id, folder_path=folder, repo_type="space",
            commit_message=f"Upload the {name} metric from hallubench",
        )
    return str(url)
