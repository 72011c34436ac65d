"""AMBER builder on the mini release (the authors' GitHub layout + image/), from disk and from the stand-in Hub,
and its refusals of releases the amber metric could not score as the authors do."""
from __future__ import annotations

import json
import shutil

import datasets
import pytest
from hub_server import Repo, StandInHub
from test_build_from_hub import card_source, hallubench

from hallubench.builders import build
from hallubench.builders.mini import make_release
from hallubench.errors import BuildError


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return make_release("amber", tmp_path_factory.mktemp("amber-release"))


@pytest.fixture(scope="module")
def built(release, tmp_path_factory):
    return build("amber", release, tmp_path_factory.mktemp("amber-built") / "amber", mini=True)


def official(release, name):
    return json.loads((release / "data" / name).read_text())


def rows(folder, config, tmp_path):
    return datasets.load_dataset(str(folder), config, split="test", cache_dir=str(tmp_path / "cache")).to_list()


def test_rows_are_the_release_queries_joined_with_their_annotations(release, built, tmp_path):
    queries, annotations = official(release, "query/query_all.json"), official(release, "annotations.json")
    got = rows(built, "all", tmp_path)
    assert [r["query_id"] for r in got] == [q["id"] for q in queries]
    for row, query in zip(got, queries):
        annotation = annotations[query["id"] - 1]
        assert row["id"] == f"amber-{query['id']}" and row["query"] == query["query"]
        assert row["image"] == f"image/{query['image']}" and (built / row["image"]).is_file()
        assert row["type"] == annotation["type"]
        if annotation["type"] == "generative":
            assert (row["answer"], row["truth"], row["hallu"]) == (None, annotation["truth"], annotation["hallu"])
        else:
            assert (row["answer"], row["truth"], row["hallu"]) == (annotation["truth"], [], [])


@pytest.mark.parametrize("config, query_file", [
    ("generative", "query_generative.json"), ("discriminative", "query_discriminative.json"),
    ("existence", "query_discriminative-existence.json"), ("attribute", "query_discriminative-attribute.json"),
    ("relation", "query_discriminative-relation.json"),
])
def test_each_config_holds_its_query_file(release, built, config, query_file, tmp_path):
    assert [r["query_id"] for r in rows(built, config, tmp_path)] == \
        [q["id"] for q in official(release, f"query/{query_file}")]


def test_card_names_the_official_home(built):
    card = (built / "README.md").read_text()
    assert "github.com/junyangwang0410/AMBER" in card and "Google Drive" in card and "Synthetic mini" in card


def copy_release(release, tmp_path):
    return shutil.copytree(release, tmp_path / "release")


def test_a_release_without_images_says_where_they_come_from(release, tmp_path):
    copy = copy_release(release, tmp_path)
    shutil.rmtree(copy / "image")
    with pytest.raises(BuildError, match="image/ folder.*Google Drive"):
        build("amber", copy, tmp_path / "out")


@pytest.mark.parametrize("name, change", [
    ("relation.json", lambda text: text.replace('"sky": []', '"sky": ["heaven"]')),
    ("safe_words.txt", lambda text: text + "\ntable"),
])
def test_a_release_with_another_lexicon_is_refused(release, tmp_path, name, change):
    copy = copy_release(release, tmp_path)
    path = copy / "data" / name
    path.write_text(change(path.read_text()))
    with pytest.raises(BuildError, match=f"{name} differs from the lexicon"):
        build("amber", copy, tmp_path / "out")


def test_annotations_out_of_id_order_are_refused(release, tmp_path):
    copy = copy_release(release, tmp_path)
    annotations = official(copy, "annotations.json")
    annotations[0], annotations[1] = annotations[1], annotations[0]
    (copy / "data" / "annotations.json").write_text(json.dumps(annotations))
    with pytest.raises(BuildError, match="entry 0 has id 2, expected 1"):
        build("amber", copy, tmp_path / "out")


def test_bad_rows_name_the_row_or_are_skipped(release, tmp_path):
    copy = copy_release(release, tmp_path)
    annotations = official(copy, "annotations.json")
    annotations[0]["truth"] = ["sky", "unicorn"]
    (copy / "data" / "annotations.json").write_text(json.dumps(annotations))
    (copy / "image" / "AMBER_2.jpg").unlink()
    with pytest.raises(BuildError, match=r"row 0 \(id 'amber-1'\).*unicorn"):
        build("amber", copy, tmp_path / "out")
    out = build("amber", copy, tmp_path / "skipping", skip_missing=True)
    skipped = [json.loads(line) for line in (out / "skipped.jsonl").read_text().splitlines()]
    images = {q["id"]: q["image"] for q in official(copy, "query/query_all.json")}
    without_image = {f"amber-{i}" for i, name in images.items() if name == "AMBER_2.jpg"}
    assert {s["id"] for s in skipped} == {"amber-1"} | without_image


def test_build_from_a_hub_copy_in_the_authors_layout_and_without_source_says_where(release, tmp_path):
    """No Hub copy of AMBER in the authors' layout exists: without --source the build says where to download it;
    a copy pushed in that layout builds with --source hub:ORG/NAME (served here by the stand-in Hub)."""
    hub = StandInHub({"someone/amber-copy": Repo.from_folder(release)})
    try:
        refused = hallubench(["build", "amber", "--out", str(tmp_path / "none")], hub, tmp_path / "home")
        done = hallubench(["build", "amber", "--source", "hub:someone/amber-copy", "--out", str(tmp_path / "amber")],
                          hub, tmp_path / "home")
        commit = hub.repos["someone/amber-copy"].commit
    finally:
        hub.close()
    assert refused.returncode != 0 and "github.com/junyangwang0410/AMBER" in refused.stderr
    assert done.returncode == 0, done.stderr[-2000:]
    assert card_source(tmp_path / "amber") == {"repo_id": "someone/amber-copy", "commit": commit}
    assert len(rows(tmp_path / "amber", "all", tmp_path)) == len(official(release, "annotations.json"))
