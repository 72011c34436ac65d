"""Fresh rows, always: `datasets.load_dataset` on a built folder returns what the folder holds now, whatever an
earlier load left in the same `datasets` cache (issue 8: the cache used to follow the card and the data-file
patterns, so every folder named `mhalubench` shared one cache entry). Each test starts from a fresh
HF_DATASETS_CACHE and fills it with the mini benchmark first, as `hallubench demo` would.
"""
from __future__ import annotations

import json

import datasets
import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard

from hallubench.benchmarks import get_task
from hallubench.builders import build
from hallubench.builders.mini import make_release
from hallubench.harness.data import StaleRowsError, load_rows
from hallubench.errors import ConfigError

SAC3_SIZES = {"prime": 500, "senator": 500, "hotpotqa": 250, "nq_open": 250}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh datasets cache for this test, used by every plain `load_dataset` call below."""
    folder = tmp_path / "hf-datasets-cache"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", folder)
    return folder


def load(folder, config=None):
    return datasets.load_dataset(str(folder), config, split="test")


def mini(benchmark, root):
    return build(benchmark, make_release(benchmark, root / "release"), root / benchmark, mini=True)


def test_a_new_folder_with_the_mini_ones_name_gets_its_own_rows(shared_data, tmp_path, cache):
    mini_rows = load(mini("mhalubench", tmp_path / "mini"))
    assert 0 < len(mini_rows) < 200
    real = build("mhalubench", shared_data / "mhalubench", tmp_path / "real" / "mhalubench")
    rows = load(real)
    raw = json.loads((shared_data / "mhalubench" / "image_to_text_annotated.json").read_text())
    assert len(rows) == 200
    assert rows["response"] == [item["repsonse"] for item in raw]
    assert len(load(tmp_path / "mini" / "mhalubench")) == len(mini_rows)  # and the mini folder still its own


def test_a_folder_rebuilt_in_place_from_a_smaller_release_gives_the_new_rows(shared_data, tmp_path, cache):
    folder = tmp_path / "mhalubench"
    build("mhalubench", shared_data / "mhalubench", folder)
    assert len(load(folder)) == 200
    release = tmp_path / "smaller"
    release.mkdir()
    items = json.loads((shared_data / "mhalubench" / "image_to_text_annotated.json").read_text())[5:8]
    (release / "image_to_text_annotated.json").write_text(json.dumps(items))
    build("mhalubench", release, folder, overwrite=True)
    rows = load(folder)
    assert rows["response"] == [item["repsonse"] for item in items]


def test_sac3_real_files_after_the_mini_ones_give_every_row(shared_data, tmp_path, cache):
    mini_folder = mini("sac3", tmp_path / "mini")
    assert {name: len(load(mini_folder, name)) for name in SAC3_SIZES} != SAC3_SIZES
    real = build("sac3", shared_data / "sac3", tmp_path / "real" / "sac3")
    assert {name: len(load(real, name)) for name in SAC3_SIZES} == SAC3_SIZES
    prime = json.loads((shared_data / "sac3" / "prime-500-SC.json").read_text())
    assert load(real, "prime")["question"] == [item["question"] for item in prime]


def test_the_card_names_each_data_file_by_its_content_and_records_split_sizes(shared_data, tmp_path):
    folder = build("sac3", shared_data / "sac3", tmp_path / "sac3")
    card = datasets.load_dataset_builder(str(folder), "prime").info
    assert card.splits["test"].num_examples == 500
    again = build("sac3", shared_data / "sac3", tmp_path / "again" / "sac3")
    names = sorted(p.relative_to(folder).as_posix() for p in folder.glob("data/*/*.parquet"))
    assert names == sorted(p.relative_to(again).as_posix() for p in again.glob("data/*/*.parquet"))
    assert len(set(name.rsplit("-", 1)[1] for name in names)) == 4  # a content fingerprint per config


def test_the_harness_gets_the_new_rows_too(shared_data, tmp_path, cache):
    task = get_task("mhalubench")
    mini_rows, _ = load_rows(mini("mhalubench", tmp_path / "mini"), task, limit=3)
    real = build("mhalubench", shared_data / "mhalubench", tmp_path / "real" / "mhalubench")
    rows, total = load_rows(real, task, limit=3)
    raw = json.loads((shared_data / "mhalubench" / "image_to_text_annotated.json").read_text())
    assert total == 200 and [r["response"] for r in rows] == [item["repsonse"] for item in raw[:3]]
    assert [r["response"] for r in rows] != [r["response"] for r in mini_rows]


def test_the_harness_stops_naming_the_folder_when_the_rows_it_got_are_not_the_folders(shared_data, tmp_path, cache):
    task = get_task("mhalubench")
    folder = build("mhalubench", shared_data / "mhalubench", tmp_path / "mhalubench")
    load_rows(folder, task)  # fills the cache from the built file
    data_file = next(folder.glob("data/*/*.parquet"))
    pq.write_table(pq.read_table(data_file).slice(0, 7), data_file)  # edited after the build: same name, other rows
    with pytest.raises(StaleRowsError, match=rf"{folder}.*{data_file.name}"):
        load_rows(folder, task)


def test_a_folder_without_a_card_is_named(tmp_path):
    with pytest.raises(ConfigError, match=str(tmp_path)):
        load_rows(tmp_path, get_task("mhalubench"))



def _as_older_build(folder):
    """The folder as builds before the fix wrote it: data files named test.parquet, no `dataset_info` in the card."""
    card = DatasetCard.load(folder / "README.md")
    card.data.pop("dataset_info")
    for config in card.data.configs:
        path = folder / config["data_files"][0]["path"]
        path.rename(path.with_name("test.parquet"))
        config["data_files"][0]["path"] = f"data/{path.parent.name}/test.parquet"
    card.save(folder / "README.md")
    return folder


def own_rows(folder, limit):
    """The first rows of the folder's data files, read with pyarrow, without image cells (the harness gives paths)."""
    rows = [row for path in sorted(folder.glob("data/*/*.parquet")) for row in pq.read_table(path).to_pylist()]
    return [plain(row) for row in rows[:limit]]


def plain(row):
    return {key: value for key, value in row.items() if not isinstance(value, dict)}


def own_ids(folder, limit):
    return [row["id"] for row in own_rows(folder, limit)]


def test_an_older_folder_gets_its_own_rows_not_another_count_from_the_cache(shared_data, tmp_path, cache):
    """The harness hands `datasets` the folder's checked files, not the folder (builders/dataset_reader.py), so the
    cache entry follows the files: a folder written by an older build (plain test.parquet, no dataset_info) no longer
    shares one with another folder of its name."""
    task = get_task("mhalubench")
    load_rows(_as_older_build(mini("mhalubench", tmp_path / "mini")), task)
    real = _as_older_build(build("mhalubench", shared_data / "mhalubench", tmp_path / "real" / "mhalubench"))
    rows, total = load_rows(real, task, limit=3)
    assert total == 200 and [row["id"] for row in rows] == own_ids(real, 3)


def test_an_older_folder_gets_its_own_rows_not_the_same_count_in_another_order(shared_data, tmp_path, cache):
    task = get_task("mhalubench")
    items = json.loads((shared_data / "mhalubench" / "image_to_text_annotated.json").read_text())
    for name, order in (("first", items), ("second", items[::-1])):
        release = tmp_path / name / "release"
        release.mkdir(parents=True)
        (release / "image_to_text_annotated.json").write_text(json.dumps(order))
        folder = _as_older_build(build("mhalubench", release, tmp_path / name / "out" / "mhalubench"))
        rows, _ = load_rows(folder, task, limit=2)
        assert [plain(row) for row in rows] == own_rows(folder, 2)
    assert own_rows(tmp_path / "first" / "out" / "mhalubench", 2) != own_rows(folder, 2)


def test_hallubench_run_evaluates_the_new_folders_rows(tmp_path, cache, monkeypatch):
    from test_publish_hub import ChatModelTestDouble

    from hallubench import models
    from hallubench.cli.main import main

    monkeypatch.setitem(models.MODELS, "test_double", ChatModelTestDouble)

    def run(data, out):
        assert main(["run", "--model", "test_double", "--model-args", "pretrained=org/m", "--tasks", "cmm",
                     "--data-dir", str(data), "--output-dir", str(out), "--limit", "3", "--num-frames", "2"]) == 0
        return [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]

    mini("cmm", tmp_path / "mini")
    assert len(run(tmp_path / "mini", tmp_path / "run-mini")) == 3  # fills the cache with the mini rows
    release = make_release("cmm", tmp_path / "other-release")
    probes = json.loads((release / "all_data_final_reorg.json").read_text())[::-1]  # another release, same size
    (release / "all_data_final_reorg.json").write_text(json.dumps(probes))
    build("cmm", release, tmp_path / "other" / "cmm")
    records = run(tmp_path / "other", tmp_path / "run-other")
    assert [(r["id"], r["prompt"]) for r in records] == \
        [(f"cmm-{i:04d}", p["question"] + " Answer with yes or no.") for i, p in enumerate(probes[:3])]
