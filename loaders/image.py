"""Load an image as PIL RGB from a path or from encoded bytes."""
from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from .errors import CorruptMediaError, EmptyMediaError
from .probe import existing_file

# Above this an image is refused rather than decoded (PIL's own default bomb limit is about 179 MP); the builders
# refuse such an image in a release too (builders/safe_files.py).
MAX_IMAGE_PIXELS = 64_000_000


def load_image(path_or_bytes: str | Path | bytes) -> Image.Image:
    """The decoded image, converted to RGB (alpha dropped, palettes and greyscale expanded)."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        name, source = "<bytes>", io.BytesIO(path_or_bytes)
        if not path_or_bytes:
            raise EmptyMediaError(name, "image bytes are empty")
    else:
        name = source = existing_file(path_or_bytes)
    try:
        with Image.open(source) as image:
            if image.width * image.height > MAX_IMAGE_PIXELS:
                raise CorruptMediaError(name, f"image is {image.width}x{image.height} pixels, above the limit of "
                                              f"{MAX_IMAGE_PIXELS:,} (a decompression bomb or a broken header)")
            image.load()  # decode now: a truncated file only fails here
            return image.convert("RGB")
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as error:
        raise CorruptMediaError(name, f"cannot decode image ({error}); re-download or re-encode it") from None
