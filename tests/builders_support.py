"""Helpers for the builder tests: tiny media files and reading a built folder with plain `datasets`.

`load_plain` runs `datasets.load_dataset` in a separate, isolated interpreter (`python -I`) that never
imports hallubench, so a passing test shows the folder is usable by anyone with only `datasets`.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from hallubench.builders.mini.synthetic import shape_frames, tone, write_mp4, write_wav

LOAD_SCRIPT = r"""
import json, sys
import datasets
folder, names = sys.argv[1], json.loads(sys.argv[2])
result = {}
for name in names:
    kwargs = {} if name is None else {"name": name}
    ds = datasets.load_dataset(folder, split="test", **kwargs)
    result[str(name)] = {"features": ds.features.to_dict(), "rows": ds.to_list()}
leaked = sorted(m for m in sys.modules if m.startswith("hallubench"))
assert not leaked, leaked
json.dump(result, sys.stdout, default=str)
"""


def load_plain(folder: Path, names: list[str | None], tmp_path: Path) -> dict[str, dict]:
    """{config: {"features": ..., "rows": [...]}} as `datasets.load_dataset(folder, name=config, split="test")`
    gives it in a fresh interpreter without hallubench (config None: the folder's default)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "plain-cache"),
           "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, "-I", "-c", LOAD_SCRIPT, str(folder), json.dumps(names)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def load_here(folder: Path, name: str, tmp_path: Path) -> list[dict]:
    """Rows of one config loaded in this process (quicker, for comparing two builds)."""
    import datasets

    return datasets.load_dataset(str(folder), name=name, split="test", cache_dir=str(tmp_path / "here-cache")).to_list()


def tiny_mp4(path: Path) -> Path:
    """A 4-frame 32x32 H.264 clip with a short tone."""
    return write_mp4(path, shape_frames(4, size=(32, 32)), fps=4.0, audio=tone(440.0, 1.0))


def tiny_wav(path: Path) -> Path:
    return write_wav(path, tone(660.0, 0.25))


def link(src: Path, dest: Path) -> None:
    """Hard-link `src` at `dest` (tests make thousands of media files from one)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.link(src, dest)


def image_bytes(color: tuple[int, int, int], fmt: str = "PNG") -> bytes:
    """An 8x8 single-colour image encoded as `fmt`."""
    buffer = io.BytesIO()
    Image.fromarray(np.full((8, 8, 3), color, dtype=np.uint8)).save(buffer, format=fmt)
    return buffer.getvalue()
