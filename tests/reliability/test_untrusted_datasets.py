"""A dataset is data we did not write (a Hub repo, a colleague's folder): every media path a row names must stay
inside its dataset folder once links are followed, and every row must be one the task can prompt and score. Each
breach is a named error (task, row id, column, path) before any model loads: nothing outside the folder is read or
sent to a server, and no weights are loaded for a run that cannot finish."""
import json
import re
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hallubench.benchmarks import get_task
from hallubench.builders.folder import fingerprint
from hallubench.cli.main import main
from hallubench.confined import Folder
from hallubench.errors import MediaOutsideDatasetError, OutsideFolderError
from hallubench.harness.media import media_file

from conftest import openai_run_argv


def edited_copy(data_dir, benchmark, dest, edit):
    """A copy of the built mini `benchmark` whose rows (every config) went through `edit(rows)`, data files renamed
    by their new content as `build` names them, so the folder is consistent and only its rows are bad."""
    folder = dest / benchmark
    shutil.copytree(data_dir / benchmark, folder)
    card = (folder / "README.md").read_text()
    for path in sorted(folder.glob("data/*/*.parquet")):
        table = pq.read_table(path)
        pq.write_table(pa.Table.from_pylist(edit(table.to_pylist()), schema=table.schema), path)
        renamed = path.with_name(f"test-{fingerprint(path)}.parquet")
        path.rename(renamed)
        card = card.replace(path.relative_to(folder).as_posix(), renamed.relative_to(folder).as_posix())
    (folder / "README.md").write_text(card)
    return dest


def first_row(change):
    def edit(rows):
        rows[0] = {**rows[0], **change(rows[0])}
        return rows
    return edit


@pytest.fixture
def outside(tmp_path, data_dir):
    """A real media file outside any dataset folder (a copy of one of the mini videos)."""
    secret = tmp_path / "private" / "clip.mp4"
    secret.parent.mkdir()
    shutil.copy(next((data_dir / "cmm").rglob("*.mp4")), secret)
    return secret


@pytest.mark.parametrize("how", ["absolute", "dotdot", "link-out"])
def test_a_video_path_out_of_the_dataset_is_refused_and_nothing_is_sent(server, data_dir, tmp_path, capsys,
                                                                       outside, how):
    def change(row):
        if how == "absolute":
            return {"video_path": str(outside)}
        if how == "dotdot":
            return {"video_path": "../../private/clip.mp4"}
        return {"video_path": "reorg_raw_files/evil.mp4"}
    bad = edited_copy(data_dir, "cmm", tmp_path / "bad", first_row(change))
    (bad / "cmm" / "reorg_raw_files" / "evil.mp4").symlink_to(outside)
    assert main(openai_run_argv(server, bad, tmp_path / "run")) == 2
    err = capsys.readouterr().err
    assert "task 'cmm' row 'cmm-0000' column 'video_path': media path" in err and "outside the dataset folder" in err
    assert server.requests == [], "a row's media went to the server"


def test_an_image_path_without_bytes_out_of_the_dataset_is_refused(server, data_dir, tmp_path, capsys, outside):
    bad = edited_copy(data_dir, "cchall", tmp_path / "bad",
                      first_row(lambda row: {"image": {"bytes": None, "path": str(outside)}}))
    assert main(openai_run_argv(server, bad, tmp_path / "run", tasks="cchall")) == 2
    assert "row 'cchall-0000' column 'image': media path" in capsys.readouterr().err and server.requests == []


def test_links_into_a_hub_snapshots_blob_store_are_inside_and_others_are_not(tmp_path):
    """huggingface_hub's cache: snapshots/<commit>/ holds links to ../../blobs/<hash>; those are the dataset's own."""
    repo = tmp_path / "hub" / "datasets--org--name"
    blob = repo / "blobs" / "0123abcd"
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"video")
    folder = repo / "snapshots" / "c0ffee" / "cmm"
    (folder / "videos").mkdir(parents=True)
    (folder / "videos" / "a.mp4").symlink_to("../../../../blobs/0123abcd")
    (folder / "videos" / "b.mp4").symlink_to(tmp_path / "elsewhere.mp4")
    (tmp_path / "elsewhere.mp4").write_bytes(b"private")
    task = get_task("cmm")
    assert media_file(task, {"id": "x", "video_path": "videos/a.mp4"}, "video_path", folder) == blob.resolve()
    for path in ("videos/b.mp4", "../../../../blobs/0123abcd", str(blob)):
        with pytest.raises(MediaOutsideDatasetError, match=f"column 'video_path': media path '{path}'"):
            media_file(task, {"id": "x", "video_path": path}, "video_path", folder)


def hub_cache(tmp_path):
    """A huggingface_hub cache holding datasets--org--name (a snapshot of cmm whose videos/a.mp4 is its link into
    the sibling blobs/) and datasets--evil--other; and a private file outside the cache."""
    cache = tmp_path / "hub"
    for repo in ("datasets--org--name", "datasets--evil--other"):
        (cache / repo / "blobs").mkdir(parents=True)
        (cache / repo / "blobs" / ("ab" * 20)).write_bytes(repo.encode())
    folder = cache / "datasets--org--name" / "snapshots" / "c0ffee" / "cmm"
    (folder / "videos").mkdir(parents=True)
    (folder / "videos" / "a.mp4").symlink_to(f"../../../../blobs/{'ab' * 20}")
    (tmp_path / "private.mp4").write_bytes(b"private")
    return cache, folder


def test_a_snapshot_file_linked_into_its_sibling_blobs_is_read_through_the_door(tmp_path):
    _, folder = hub_cache(tmp_path)
    assert Folder(folder, hub_snapshot=True).read_bytes("videos/a.mp4") == b"datasets--org--name"
    assert media_file(get_task("cmm"), {"id": "x", "video_path": "videos/a.mp4"}, "video_path", folder).is_file()
    with pytest.raises(OutsideFolderError, match="leads outside"):
        Folder(folder).read_bytes("videos/a.mp4")  # the allowance is the named policy, not the door's default


@pytest.mark.parametrize("where", ["another repo's blobs", "/etc/passwd", "a chain out of the cache and back",
                                   "a blob linked out", "a folder inside blobs", "a snapshot of no dataset repo"])
def test_a_snapshot_file_linked_anywhere_else_is_refused_naming_it(tmp_path, where):
    cache, folder = hub_cache(tmp_path)
    blobs = cache / "datasets--org--name" / "blobs"
    link = folder / "videos" / "b.mp4"
    if where == "another repo's blobs":
        link.symlink_to(f"../../../../../datasets--evil--other/blobs/{'ab' * 20}")
    elif where == "/etc/passwd":
        link.symlink_to("/etc/passwd")
    elif where == "a chain out of the cache and back":  # ends in the repo's own blob, through a link outside
        (tmp_path / "hop").symlink_to(blobs / ("ab" * 20))
        link.symlink_to(tmp_path / "hop")
    elif where == "a blob linked out":
        (blobs / ("cd" * 20)).symlink_to(tmp_path / "private.mp4")
        link.symlink_to(f"../../../../blobs/{'cd' * 20}")
    elif where == "a folder inside blobs":  # huggingface_hub's blobs/ is flat
        (blobs / "sub").mkdir()
        (blobs / "sub" / "x").write_bytes(b"x")
        link.symlink_to("../../../../blobs/sub/x")
    else:  # the same layout under a folder that is no dataset repo of a Hub cache
        other = tmp_path / "home" / "me" / "snapshots" / "c0ffee"
        (other / "videos").mkdir(parents=True)
        (tmp_path / "home" / "blobs").mkdir()
        (tmp_path / "home" / "blobs" / "x").write_bytes(b"x")
        folder, link = other, other / "videos" / "b.mp4"
        link.symlink_to("../../../../blobs/x")
    with pytest.raises(MediaOutsideDatasetError) as caught:
        media_file(get_task("cmm"), {"id": "x", "video_path": "videos/b.mp4"}, "video_path", folder)
    message = str(caught.value)
    assert "media path 'videos/b.mp4' leads outside the dataset folder" in message and "\n" not in message
    with pytest.raises(OutsideFolderError, match=re.escape(str(folder / "videos" / "b.mp4"))):
        Folder(folder, hub_snapshot=True).read_bytes("videos/b.mp4")


def test_a_dataset_fetched_from_the_hub_runs_from_its_cache_snapshot(server, offline, data_dir, tmp_path, monkeypatch):
    """The layout huggingface_hub itself makes (snapshot_download from the stand-in Hub): every file of the snapshot
    a link into the repo's blobs, each read through the door's policy."""
    from hub_server import Repo, StandInHub

    files = {p.relative_to(data_dir / "cmm").as_posix(): p.read_bytes()
             for p in (data_dir / "cmm").rglob("*") if p.is_file()}
    hub = StandInHub({"org/cmm": Repo(files)}).serve_in_process(monkeypatch, tmp_path)
    try:
        assert main(openai_run_argv(server, "org/cmm", tmp_path / "run")) == 0
    finally:
        hub.close()
    [snapshot] = (tmp_path / "stand-in-hub-cache" / "datasets--org--cmm" / "snapshots").iterdir()
    videos = [p for p in snapshot.rglob("*.mp4")]
    assert videos and all(p.is_symlink() and p.resolve().parent.name == "blobs" for p in videos)
    records = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["error"] is None and r["media"]["video"]["path"] for r in records)


@pytest.mark.parametrize("edit,message", [
    (lambda rows: [{k: v for k, v in row.items() if k != "question"} for row in rows],
     "no column or field 'question', which the task's prompt reads"),
    (first_row(lambda row: {"answer": "maybe"}), "its reference cannot be read: column 'answer' is 'maybe'"),
])
def test_a_row_the_task_cannot_run_or_score_stops_before_the_weights_load(data_dir, tmp_path, capsys, edit, message):
    bad = tmp_path / "bad"
    shutil.copytree(data_dir / "cmm", bad / "cmm")
    for path in sorted((bad / "cmm").glob("data/*/*.parquet")):  # a column dropped needs its own schema
        table = pa.Table.from_pylist(edit(pq.read_table(path).to_pylist()))
        pq.write_table(table, path)
    # The files' own schema now (a column may be gone): the card names them and leaves out its dataset_info.
    card = (bad / "cmm" / "README.md").read_text()
    for path in sorted((bad / "cmm").glob("data/*/*.parquet")):
        renamed = path.with_name(f"test-{fingerprint(path)}.parquet")
        card = card.replace(path.name, renamed.name)
        path.rename(renamed)
    (bad / "cmm" / "README.md").write_text(card.split("dataset_info:")[0] + "hallubench:" + card.split("hallubench:")[1])
    # The checkpoint folder exists but holds no model: loading it first would fail with "cannot load".
    (tmp_path / "empty-checkpoint").mkdir()
    assert main(["run", "--model", "hf", "--model-args", f"pretrained={tmp_path / 'empty-checkpoint'}",
                 "--tasks", "cmm", "--data-dir", str(bad), "--output-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"task 'cmm' row 'cmm-0000': {message}" in err and "cannot load" not in err
    assert not (tmp_path / "run" / "samples.jsonl").exists()
