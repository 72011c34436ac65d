"""Releases handled defensively: links out of the release, FIFOs, directories, corrupt zip members,
decompression bombs and a full output disk each give a named BuildError (file, row, id) and leave nothing;
--overwrite never deletes the release."""
import json
import os
import resource
import signal
import struct
import subprocess
import sys
import zipfile
import zlib

import pytest

from hallubench.builders.base import RowError
from hallubench.builders.mini import make_release
from hallubench.builders.safe_files import MAX_IMAGE_PIXELS, decode_image
from hallubench.cli.main import main

from conftest import ROOT, env


def _first_media(release):
    rows = json.loads((release / "all_data_final_reorg.json").read_text())
    index = next(i for i, row in enumerate(rows) if row["video_path"])
    return index, release / rows[index]["video_path"].removeprefix("./")


def _build_fails(release, out, capsys, *extra):
    assert main(["build", "cmm", "--source", str(release), "--out", str(out), *extra]) == 1
    err = capsys.readouterr().err
    assert not out.exists() or out.is_dir() and not any(out.iterdir()) or "--overwrite" in extra
    assert not [p for p in out.parent.iterdir() if ".building-" in p.name], "a half-built folder was left behind"
    return err


@pytest.mark.parametrize("kind", ["link-out", "fifo", "directory"])
def test_untrusted_media_file_is_refused_without_opening_it(tmp_path, capsys, kind):
    release = make_release("cmm", tmp_path / "release")
    index, media = _first_media(release)
    media.unlink()
    if kind == "link-out":
        media.symlink_to("/etc/passwd")
    elif kind == "fifo":
        os.mkfifo(media)  # opening it would block the build forever
    else:
        media.mkdir()
    err = _build_fails(release, tmp_path / "out", capsys)
    assert f"row {index} (id 'cmm-{index:04d}')" in err and str(media) in err
    assert {"link-out": "outside the release", "fifo": "FIFO", "directory": "is a directory"}[kind] in err


def test_license_linked_out_of_the_release_is_refused(tmp_path, capsys):
    release = make_release("cmm", tmp_path / "release")
    (release / "LICENSE").symlink_to("/etc/passwd")
    err = _build_fails(release, tmp_path / "out", capsys)
    assert f"file {release / 'LICENSE'} is a link to /etc/passwd, outside the release" in err


def test_link_inside_the_release_is_followed(tmp_path, capsys):
    release = make_release("cmm", tmp_path / "release")
    _, media = _first_media(release)
    copy = release / "elsewhere.mp4"
    media.rename(copy)
    media.symlink_to(copy)
    assert main(["build", "cmm", "--source", str(release), "--out", str(tmp_path / "out")]) == 0


@pytest.mark.parametrize("name", ["cmm", "sac3", "mhalubench"])
def test_a_release_reached_through_a_linked_folder_builds(tmp_path, name):
    """A release under a linked folder (/data -> /mnt/lustre/data on a cluster) is inside itself: the check
    compares a file with the release folder as named and as resolved."""
    make_release(name, tmp_path / "real" / "release")
    (tmp_path / "data").symlink_to(tmp_path / "real")
    assert main(["build", name, "--source", str(tmp_path / "data" / "release"), "--out", str(tmp_path / "out")]) == 0


def test_zip_member_with_a_bad_crc_is_named(tmp_path, capsys):
    release = make_release("cmm", tmp_path / "release", zipped=True)
    archive = release / "reorg_raw_files.zip"
    with zipfile.ZipFile(archive) as z:
        member = next(info for info in z.infolist() if info.filename.endswith(".mp4"))
    data = bytearray(archive.read_bytes())
    start = member.header_offset + 30 + len(member.filename.encode()) + len(member.extra)
    data[start + member.compress_size // 2] ^= 0xFF  # flip one byte of the stored data
    archive.write_bytes(bytes(data))
    err = _build_fails(release, tmp_path / "out", capsys)
    assert "corrupt in its archive" in err and member.filename in err and "row " in err


def _png_header_only(width, height):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 16)) + chunk(b"IEND", b""))


@pytest.mark.parametrize("side", [9_000, 20_000])  # above our limit; above PIL's own bomb error
def test_decompression_bomb_is_refused_before_decoding(side):
    assert side * side > MAX_IMAGE_PIXELS
    with pytest.raises(RowError, match="image is|too large to decode"):
        decode_image(_png_header_only(side, side))
    assert decode_image(_png_header_only(64, 64)).size == (64, 64)


def test_full_output_disk_is_a_named_error_and_leaves_nothing(tmp_path):
    release = make_release("cmm", tmp_path / "release")
    out = tmp_path / "outputs" / "cmm"
    out.parent.mkdir()

    def small_disk():  # every file above 4 KiB fails as on a full disk (EFBIG instead of ENOSPC)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    proc = subprocess.run([sys.executable, "-m", "hallubench", "build", "cmm", "--source", str(release),
                           "--out", str(out)], env=env(), cwd=ROOT, capture_output=True, text=True,
                          preexec_fn=small_disk, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "cannot write" in proc.stderr and "File too large" in proc.stderr and "Traceback" not in proc.stderr
    assert list(out.parent.iterdir()) == []


@pytest.mark.parametrize("where", ["same", "parent"])
def test_overwrite_refuses_an_out_that_is_or_holds_the_release(tmp_path, capsys, where):
    release = make_release("cmm", tmp_path / "holder" / "release")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    out = release if where == "same" else release.parent
    assert main(["build", "cmm", "--source", str(release), "--out", str(out), "--overwrite"]) == 1
    assert "would delete the release" in capsys.readouterr().err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_annotation_file_linked_out_of_the_release_is_refused(tmp_path, capsys):
    release = make_release("cmm", tmp_path / "release")
    annotations = release / "all_data_final_reorg.json"
    outside = tmp_path / "elsewhere.json"
    annotations.rename(outside)
    annotations.symlink_to(outside)
    err = _build_fails(release, tmp_path / "out", capsys)
    assert f"release file {annotations} is a link to {outside}, outside the release" in err


def test_out_inside_the_release_is_refused(tmp_path, capsys):
    release = make_release("cmm", tmp_path / "release")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert main(["build", "cmm", "--source", str(release), "--out", str(release / "built"), "--overwrite"]) == 1
    assert "lies inside the release --source" in capsys.readouterr().err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_an_unknown_cchall_label_is_refused_at_build_time(tmp_path, capsys):
    import pyarrow.parquet as pq

    release = make_release("cchall", tmp_path / "release")
    table = pq.read_table(release / "test.parquet")
    labels = table.column("label").to_pylist()
    labels[1] = "maybe"
    pq.write_table(table.set_column(table.schema.get_field_index("label"), "label", [labels]), release / "test.parquet")
    assert main(["build", "cchall", "--source", str(release), "--out", str(tmp_path / "out")]) == 1
    assert "row 1 (id 'cchall-0001'): label 'maybe' is not one of CCHall's four types" in capsys.readouterr().err


def test_mhalubench_refuses_an_image_above_the_limit_as_cchall_does(tmp_path, capsys):
    release = make_release("mhalubench", tmp_path / "release")
    image = sorted((release / "images").iterdir())[0]
    image.write_bytes(_png_header_only(8192, 8192))
    assert main(["build", "mhalubench", "--source", str(release), "--out", str(tmp_path / "out")]) == 1
    assert "8192x8192" in capsys.readouterr().err and not (tmp_path / "out").exists()
