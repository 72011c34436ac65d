"""Byte-stable writers for the mini releases (JSON, bytes, zip)."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def write_json(path: Path, obj: object) -> Path:
    """Write `obj` as indented UTF-8 JSON; key order is the order the release code built (the upstream order)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def write_bytes(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def zip_tree(folder: Path, archive: Path) -> Path:
    """Zip `folder` (kept as the top-level entry) with sorted names and fixed timestamps, so the bytes never vary."""
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_STORED) as zf:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(path.relative_to(folder.parent).as_posix(), date_time=FIXED_ZIP_TIME)
            info.external_attr = 0o644 << 16
            zf.writestr(info, path.read_bytes())
    return archive
