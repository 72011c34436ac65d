"""A dataset is data we did not write (a Hub repo, a colleague's folder): every media path a row names must stay
inside its dataset folder once links are followed, and every row must be one the task can prompt and score. Each
breach is a named error (task, row id, column, path) before any model loads: nothing outside the folder is read or
sent to a server, and no weights are loaded for a run that cannot finish."""
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hallubench.benchmarks import get_task
from hallubench.builders.folder import fingerprint
from hallubench.cli.main import main
from hallubench.errors import MediaOutsideDatasetError
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
