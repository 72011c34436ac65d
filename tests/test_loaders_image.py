"""load_image: RGB from a path or encoded bytes."""
import io

import numpy as np
import pytest
from PIL import Image

from hallubench.loaders import CorruptMediaError, EmptyMediaError, MediaNotFoundError, load_image


def png_bytes(mode, size=(20, 10), color=(10, 200, 30, 128)):
    buffer = io.BytesIO()
    Image.new(mode, size, color[: len(mode)] if mode != "L" else 77).save(buffer, format="PNG")
    return buffer.getvalue()


def test_bytes_rgba_becomes_rgb():
    image = load_image(png_bytes("RGBA"))
    assert image.mode == "RGB" and image.size == (20, 10)
    assert np.asarray(image)[0, 0].tolist() == [10, 200, 30]


def test_path_greyscale_becomes_rgb(tmp_path):
    path = tmp_path / "grey.png"
    path.write_bytes(png_bytes("L"))
    image = load_image(path)
    assert image.mode == "RGB" and np.asarray(image)[3, 4].tolist() == [77, 77, 77]
    assert load_image(str(path)).size == (20, 10)


def test_missing_file(tmp_path):
    with pytest.raises(MediaNotFoundError, match="nope.png"):
        load_image(tmp_path / "nope.png")


def test_empty_file_and_empty_bytes(tmp_path):
    (tmp_path / "empty.png").write_bytes(b"")
    with pytest.raises(EmptyMediaError, match="empty.png"):
        load_image(tmp_path / "empty.png")
    with pytest.raises(EmptyMediaError, match="<bytes>"):
        load_image(b"")


def test_garbage_and_truncated_images_are_corrupt(tmp_path):
    with pytest.raises(CorruptMediaError, match="<bytes>"):
        load_image(b"definitely not an image")
    big = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(big, format="PNG")
    truncated = tmp_path / "cut.png"
    truncated.write_bytes(big.getvalue()[: len(big.getvalue()) // 2])
    with pytest.raises(CorruptMediaError, match="cut.png"):
        load_image(truncated)
