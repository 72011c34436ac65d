"""Media usable from `load_dataset`: images are `datasets.Image` (bytes embedded, so the Hub viewer and a pushed
copy show them), video and audio columns stay path strings relative to the folder, and the card says in one
line how to resolve them; the harness still gets each image's path in the folder."""
from __future__ import annotations

import io

import datasets
import numpy as np
from PIL import Image

from hallubench.benchmarks import get_task
from hallubench.builders import build
from hallubench.builders.mini import make_release
from hallubench.harness.data import load_rows


def test_images_load_as_datasets_image_and_the_harness_gets_their_paths(tmp_path):
    folder = build("mhalubench", make_release("mhalubench", tmp_path / "release"), tmp_path / "mhalubench")
    ds = datasets.load_dataset(str(folder), split="test", cache_dir=str(tmp_path / "cache"))
    assert isinstance(ds.features["image"], datasets.Image)
    image = ds[0]["image"]
    with Image.open(folder / "images" / ds[0]["image_name"]) as on_disk:
        assert np.array_equal(np.asarray(image.convert("RGB")), np.asarray(on_disk.convert("RGB")))
    # bytes are embedded: the parquet alone (as a Hub copy without the folder) decodes the image
    raw = ds.cast_column("image", datasets.Image(decode=False))[0]["image"]
    assert raw["path"] == f"images/{ds[0]['image_name']}" and Image.open(io.BytesIO(raw["bytes"])).size == image.size
    rows, _ = load_rows(folder, get_task("mhalubench"), limit=2)
    assert [r["image"] for r in rows] == [f"images/{name}" for name in ds["image_name"][:2]]


def test_video_and_audio_stay_path_strings_and_the_card_says_how_to_resolve_them(tmp_path):
    folder = build("cmm", make_release("cmm", tmp_path / "release"), tmp_path / "cmm")
    ds = datasets.load_dataset(str(folder), "all", split="test", cache_dir=str(tmp_path / "cache"))
    assert ds.features["video_path"] == datasets.Value("string") == ds.features["audio_path"]
    assert all((folder / path).is_file() for path in list(ds["video_path"]) + list(ds["audio_path"]) if path)
    card = (folder / "README.md").read_text()
    line = next(line for line in card.splitlines() if line.startswith("`video_path`, `audio_path` hold paths"))
    assert 'os.path.join(folder, row["video_path"])' in line and "hf_hub_download(" in line
