"""Reading an official release without trusting it, and writing the dataset folder without surprises.

A release is a folder from the internet: a media path may be a symbolic link out of it (to /etc/passwd),
a FIFO or a device (opening it hangs or reads forever), a directory, a zip member with a bad CRC, or an
image that decodes to gigapixels. Each is a `RowError` naming the file (the builder adds row and id);
problems writing the output (read-only or full disk) are a `BuildError` naming the file.
"""
from __future__ import annotations

import errno
import io
import os
import shutil
import stat
import warnings
import zipfile
from pathlib import Path
from typing import Any

from PIL import Image

from hallubench.confined import Folder
from hallubench.errors import BuildError, MediaError, OutsideFolderError, RowError, ShortMediaError
from hallubench.loaders.complete import check_complete
from hallubench.loaders.image import MAX_IMAGE_PIXELS


_WRITE_ERRNOS = {errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EFBIG}
_KINDS = ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "FIFO (named pipe)"), (stat.S_ISCHR, "character device"),
          (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"))


def release_root(source: Path) -> Path:
    """The release folder as the user named it (not resolved: a release reached through a linked folder, such as
    /data -> /mnt/lustre/data, is inside itself; the door's `name_of` takes both forms)."""
    return Path(os.path.abspath(source if source.is_dir() else source.parent))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def regular_file_inside(path: Path, root: Path) -> Path:
    """`path` resolved, if it is a regular file inside `root` (checked with stat, never opened); RowError if not.
    Inside is the door's rule (hallubench/confined.py), a release fetched from the Hub being a cache snapshot."""
    door = Folder(root, hub_snapshot=True)
    try:
        real = door.path(door.name_of(os.path.abspath(path)))  # relative to the working folder, not to `root`
        mode = os.stat(real).st_mode
    except OutsideFolderError:
        raise RowError(f"media file {path} is a link to {Path(path).resolve()}, outside the release; copy the real "
                       "file into it") from None
    except FileNotFoundError:
        raise RowError(f"media file {path} is missing") from None
    except OSError as err:  # a symlink loop, a permission error on the way
        raise RowError(f"media file {path} cannot be resolved ({err})") from err
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "special file")
        raise RowError(f"media file {path} is a {kind}, not a regular file")
    return real


def copy_media(src: Any, dest: Path) -> None:
    """Copy a release file or zip member to `dest`; RowError for a corrupt member, BuildError for the output."""
    try:
        with src.open("rb") as fin, open(dest, "wb") as fout:
            shutil.copyfileobj(fin, fout)
    except (zipfile.BadZipFile, EOFError) as err:  # zipfile checks the CRC when the member is read to its end
        dest.unlink(missing_ok=True)
        raise RowError(f"media file {src} is corrupt in its archive ({err}); re-download the archive") from err
    except OSError as err:
        dest.unlink(missing_ok=True)
        raise output_error(err, dest) from err


def check_complete_media(src: Any, dest: Path) -> None:
    """RowError (and `dest` removed, so no later row takes it) when the media file placed at `dest` holds clearly
    less than its header declares (a truncated download: loaders/complete.py, without decoding). A file that cannot
    be read at all is left to the loaders at run time, which name it per sample."""
    try:
        check_complete(dest)
    except ShortMediaError as err:
        dest.unlink(missing_ok=True)
        raise RowError(f"media file {src} is {err.message}") from None
    except (MediaError, RuntimeError):
        pass


def is_output_error(err: OSError, *folders: Path) -> bool:
    """Whether `err` is a failed write: a full, read-only or over-quota disk, or any error on a file in `folders`."""
    if err.errno in _WRITE_ERRNOS:
        return True
    path = Path(os.fsdecode(err.filename)) if err.filename else None
    return path is not None and any(path == folder or folder in path.parents for folder in folders)


def output_error(err: OSError, path: Path) -> BuildError:
    """The BuildError for a failed write of the dataset folder (disk full, read-only, no permission)."""
    return BuildError(f"cannot write {err.filename or path}: {err.strerror or err}. Free space on that disk or choose "
                      "a writable --output-dir; nothing of this build was kept")


def decode_image(data: bytes) -> Image.Image:
    """The image in `data`, decoded only if it has at most MAX_IMAGE_PIXELS pixels; RowError otherwise."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(data))
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as err:
            raise RowError(f"image is too large to decode safely ({err})") from err
    pixels = image.width * image.height
    if pixels > MAX_IMAGE_PIXELS:
        raise RowError(f"image is {image.width}x{image.height} = {pixels:,} pixels, above the limit of "
                       f"{MAX_IMAGE_PIXELS:,} (a decompression bomb or a broken header)")
    return image


def check_output_location(source: Path, out: Path) -> None:
    """BuildError when `out` is the release, holds it (--overwrite would delete it) or lies inside it (the build
    would write into the release)."""
    source, out = source.resolve(), out.resolve()
    if _within(source, out):
        raise BuildError(f"--output-dir {out} is or contains the release --source {source}; replacing it would delete the "
                         "release. Choose an --output-dir outside the release")
    if _within(out, source):
        raise BuildError(f"--output-dir {out} lies inside the release --source {source}; writing there would change the "
                         "release (and --overwrite would replace part of it). Choose an --output-dir outside the release")
