"""The run folder's JSONL store (torn lines, merge, resume bookkeeping) and id-based sharding/seeds."""
import json

import pytest

from hallubench.harness import store
from hallubench.harness.sharding import sample_seed, shard


def _record(task, sid, key=None, error=None, text="out"):
    return {"key": key or f"{task}-{sid}", "task": task, "id": sid, "outputs": [text], "error": error}


def test_writer_appends_whole_lines_and_reader_round_trips(tmp_path):
    writer = store.SampleWriter(store.rank_file(tmp_path, 0))
    writer.append(_record("cmm", "b"))
    writer.append(_record("cmm", "a", text="ünïcode"))
    writer.close()
    records, torn = store.read_jsonl(tmp_path / "samples_rank0.jsonl")
    assert not torn and [r["id"] for r in records] == ["b", "a"] and records[1]["outputs"] == ["ünïcode"]


def test_torn_last_line_is_skipped_and_reported_and_trimmed_by_the_next_writer(tmp_path):
    path = store.rank_file(tmp_path, 1)
    path.write_text(json.dumps(_record("cmm", "a")) + "\n" + json.dumps(_record("cmm", "b"))[:25])
    contents = store.read_store(tmp_path)
    assert set(contents.records) == {"cmm-a"} and contents.torn == [str(path)]
    writer = store.SampleWriter(path)  # a rerun's writer drops the fragment before appending
    writer.append(_record("cmm", "b"))
    writer.close()
    records, torn = store.read_jsonl(path)
    assert not torn and [r["id"] for r in records] == ["a", "b"]


def test_a_bad_line_before_the_end_is_an_error_naming_file_and_line(tmp_path):
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(_record("cmm", "a")) + "\n{oops\n" + json.dumps(_record("cmm", "b")) + "\n")
    with pytest.raises(ValueError, match=r"samples.jsonl:2: not a JSON record"):
        store.read_store(tmp_path)


def test_merge_sorts_by_task_and_id_dedupes_and_removes_rank_files(tmp_path):
    for rank, recs in enumerate([[_record("cmm", "b"), _record("cchall", "z")],
                                 [_record("cmm", "a"), _record("cmm", "b")]]):
        writer = store.SampleWriter(store.rank_file(tmp_path, rank))
        for rec in recs:
            writer.append(rec)
        writer.close()
    contents = store.merge(tmp_path)
    assert len(contents.records) == 3 and not list(tmp_path.glob("samples_rank*.jsonl"))
    merged, _ = store.read_jsonl(tmp_path / "samples.jsonl")
    assert [(r["task"], r["id"]) for r in merged] == [("cchall", "z"), ("cmm", "a"), ("cmm", "b")]


def test_errors_are_retried_and_a_success_beats_an_error(tmp_path):
    error = {"type": "generation", "message": "boom"}
    (tmp_path / "samples.jsonl").write_text(json.dumps(_record("cmm", "a", error=error)) + "\n"
                                            + json.dumps(_record("cmm", "b")) + "\n")
    assert store.read_store(tmp_path).finished() == {"cmm-b"}
    writer = store.SampleWriter(store.rank_file(tmp_path, 0))
    writer.append(_record("cmm", "a"))
    writer.append(_record("cmm", "b", error=error))  # a later error never replaces a success
    writer.close()
    contents = store.read_store(tmp_path)
    assert contents.finished() == {"cmm-a", "cmm-b"}
    assert all(rec["error"] is None for rec in contents.records.values())


def test_shards_partition_the_items_for_any_process_count():
    items = [f"id{i}" for i in range(11)]
    for world in (1, 2, 3):
        parts = [shard(items, rank, world) for rank in range(world)]
        assert sorted(sum(parts, [])) == sorted(items) and max(map(len, parts)) - min(map(len, parts)) <= 1
    with pytest.raises(ValueError, match="rank 2"):
        shard(items, 2, 2)


def test_sample_seed_depends_on_run_seed_task_and_id_only():
    seed = sample_seed(1234, "cmm", "cmm-0001")
    assert seed == sample_seed(1234, "cmm", "cmm-0001") and 0 <= seed < 2**31
    assert len({seed, sample_seed(1235, "cmm", "cmm-0001"), sample_seed(1234, "cchall", "cmm-0001"),
                sample_seed(1234, "cmm", "cmm-0002")}) == 4


def test_a_whole_last_record_without_its_newline_is_kept_by_the_next_writer(tmp_path):
    path = store.rank_file(tmp_path, 0)
    path.write_text(json.dumps(_record("cmm", "a")) + "\n" + json.dumps(_record("cmm", "b")))  # cut before "\n"
    assert store.read_store(tmp_path).finished() == {"cmm-a", "cmm-b"}  # so a rerun will not redo "b"
    writer = store.SampleWriter(path)
    writer.append(_record("cmm", "c"))
    writer.close()
    records, torn = store.read_jsonl(path)
    assert not torn and [r["id"] for r in records] == ["a", "b", "c"]


def test_records_of_planned_samples_under_other_keys_are_found_as_superseded():
    from types import SimpleNamespace

    from hallubench.harness.runner import superseded

    contents = store.StoreContents(records={
        "k-a": _record("cmm", "a", key="k-a"),          # planned, same settings
        "old-b": _record("cmm", "b", key="old-b"),      # planned under another key: other settings
        "k-z": _record("cchall", "z", key="k-z"),       # a task this run does not plan
    })
    cmm = SimpleNamespace(name="cmm")
    items = [SimpleNamespace(task=cmm, id="a", key="k-a"), SimpleNamespace(task=cmm, id="b", key="k-b")]
    assert superseded(contents, items) == ["old-b"]
