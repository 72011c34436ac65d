"""Builders on the authors' real files (mhalubench, sac3, avhallubench annotations), read back with plain datasets."""
from __future__ import annotations

import json
import shutil

import pytest
from builders_support import image_bytes, link, load_plain, tiny_mp4

from hallubench.builders import BENCHMARKS, build, build_with_summary
from hallubench.errors import BuildError
from hallubench.cli.main import main


@pytest.fixture
def tiny_png(tmp_path):
    path = tmp_path / "tiny.png"
    path.write_bytes(image_bytes((200, 30, 30)))
    return path


def test_mhalubench_real_file_gives_200_responses_661_segments_1142_claims(shared_data, tmp_path):
    out = tmp_path / "mhalubench"
    assert main(["build", "mhalubench", "--source", str(shared_data / "mhalubench"), "--out", str(out)]) == 0
    rows = load_plain(out, [None], tmp_path)["None"]["rows"]
    assert len(rows) == 200
    assert sum(len(r["segments"]) for r in rows) == 661
    assert sum(len(s["claims"]) for r in rows for s in r["segments"]) == 1142
    raw = json.loads((shared_data / "mhalubench" / "image_to_text_annotated.json").read_text())
    assert [r["response"] for r in rows] == [item["repsonse"] for item in raw]
    assert [r["segments"][0]["claims"][0]["claim_label"] for r in rows] == \
        [item["annotation"][0]["claims"][0]["claim_label"] for item in raw]
    assert all(r["image"] is None for r in rows)  # the shared folder has no images/
    assert len({r["id"] for r in rows}) == 200
    card = (out / "README.md").read_text()
    assert "license: mit" in card and "chen-etal-2024-unified" in card and "no images/ folder" in card
    assert (out / "LICENSE").read_text() == (shared_data / "mhalubench" / "LICENSE").read_text()


def test_mhalubench_images_are_copied_and_a_missing_one_is_named(shared_data, tmp_path, tiny_png):
    release = tmp_path / "release"
    release.mkdir()
    shutil.copy(shared_data / "mhalubench" / "image_to_text_annotated.json", release)
    names = [item["image_name"] for item in json.loads((release / "image_to_text_annotated.json").read_text())]
    for name in names[1:]:
        link(tiny_png, release / "images" / name)
    with pytest.raises(BuildError, match=rf"row 0 \(id 'mhalubench-0000'\): media file .*{names[0]} is missing"):
        build("mhalubench", release, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    summary = build_with_summary("mhalubench", release, tmp_path / "out", skip_missing=True)
    rows = load_plain(summary.path, [None], tmp_path)["None"]["rows"]
    assert len(rows) == 199 and rows[0]["image"]["path"] == f"images/{names[1]}"
    assert all((summary.path / r["image"]["path"]).read_bytes() == tiny_png.read_bytes() for r in rows)
    skipped = [json.loads(line) for line in (summary.path / "skipped.jsonl").read_text().splitlines()]
    assert [(s["index"], s["id"]) for s in skipped] == [(0, "mhalubench-0000")]


def test_sac3_real_files_give_four_configs_with_parsed_lists(shared_data, tmp_path):
    out = tmp_path / "sac3"
    assert main(["build", "sac3", "--source", str(shared_data / "sac3"), "--out", str(out)]) == 0
    loaded = load_plain(out, ["prime", "senator", "hotpotqa", "nq_open"], tmp_path)
    assert {name: len(c["rows"]) for name, c in loaded.items()} == \
        {"prime": 500, "senator": 500, "hotpotqa": 250, "nq_open": 250}
    for name, config in loaded.items():
        assert config["features"] == BENCHMARKS["sac3"].FEATURES[name].to_dict()
    assert all(r["hallucinated"] for r in loaded["prime"]["rows"] + loaded["senator"]["rows"])
    hotpot = json.loads((shared_data / "sac3" / "hotpotQA_250_eval_labeled-SC.json").read_text())
    rows = loaded["hotpotqa"]["rows"]
    assert [r["hallucinated"] for r in rows] == [item["label"] == "False" for item in hotpot]
    assert 0 < sum(r["hallucinated"] for r in rows) < 250
    assert [r["self_judgments"] for r in rows] == [item["self_SC"] for item in hotpot]  # raw judge strings
    assert [r["target_answer"] for r in rows] == [item["generated_answer"] for item in hotpot]
    nq = loaded["nq_open"]["rows"][0]
    assert isinstance(nq["right_answers"], list) and isinstance(nq["target_answer"], str)
    assert loaded["senator"]["rows"][0]["id"] == "senator-0000"
    card = (out / "README.md").read_text()
    assert "license: apache-2.0" in card and "zhang2023sac3" in card and "Intuit" in (out / "LICENSE").read_text()


def test_sac3_python_list_strings_parse_to_the_same_rows(shared_data, tmp_path):
    release = tmp_path / "release"
    shutil.copytree(shared_data / "sac3", release, copy_function=shutil.copyfile)
    release.chmod(0o755)
    path = release / "nq_open_250_eval_labeled-SC.json"
    items = json.loads(path.read_text())
    path.write_text(json.dumps([{k: str(v) if isinstance(v, list) else v for k, v in item.items()} for item in items]))
    as_strings = load_plain(build("sac3", release, tmp_path / "strings"), ["nq_open"], tmp_path)
    as_lists = load_plain(build("sac3", shared_data / "sac3", tmp_path / "lists"), ["nq_open"], tmp_path)
    assert as_strings == as_lists

    items[3]["perb_SC"] = "['unclosed"
    path.write_text(json.dumps(items))
    with pytest.raises(BuildError, match=r"nq_open_250_eval_labeled-SC.json: row 3 .*'perb_SC' is a string that is not"):
        build("sac3", release, tmp_path / "bad")


def avhallubench_release(shared_data, tmp_path, extra=()):
    """The official layout from annotations_175.json (plus `extra` records) with one tiny mp4 per id."""
    release = tmp_path / "avh-release"
    records = [{**item, "source": "test-corpus"} for item in
               json.loads((shared_data / "avhallubench" / "annotations_175.json").read_text())] + list(extra)
    release.mkdir()
    (release / "data.json").write_text(json.dumps(records))
    clip = tiny_mp4(tmp_path / "clip.mp4")
    for video_id in {r["video_id"] for r in records}:
        link(clip, release / "videos" / f"{video_id}.mp4")
    return release, records


def test_avhallubench_keeps_every_annotation_and_flags_the_stray_id(shared_data, tmp_path):
    release, records = avhallubench_release(shared_data, tmp_path)
    out = tmp_path / "avh"
    assert main(["build", "avhallubench", "--source", str(release), "--out", str(out)]) == 0
    rows = load_plain(out, [None], tmp_path)["None"]["rows"]
    assert len(rows) == len(records) == 176
    assert [r["id"] for r in rows] == [r["video_id"] for r in records]
    assert {"'3631211612", "3631211612"} <= {r["id"] for r in rows}
    assert all(r["video"] == f"videos/{r['video_id']}.mp4" and (out / r["video"]).is_file() for r in rows)
    card = (out / "README.md").read_text()
    assert "\"'3631211612\"" in card and "differs only by those characters from the id '3631211612'" in card
    assert "license: apache-2.0" in card and "sun2024crosscheckgpt" in card and not (out / "skipped.jsonl").exists()


def test_avhallubench_duplicates_identical_kept_once_conflicting_named(shared_data, tmp_path):
    annotations = json.loads((shared_data / "avhallubench" / "annotations_175.json").read_text())
    repeat = {**annotations[5], "source": "test-corpus"}
    release, _ = avhallubench_release(shared_data, tmp_path, extra=[repeat])
    summary = build_with_summary("avhallubench", release, tmp_path / "out")
    assert summary.rows == {"default": 176}
    assert [(s["index"], s["id"]) for s in summary.skipped] == [(176, repeat["video_id"])]
    assert "identical duplicate of row 5" in (summary.path / "skipped.jsonl").read_text()

    records = json.loads((release / "data.json").read_text())
    records[-1]["visual_description"] = "Something else."
    (release / "data.json").write_text(json.dumps(records))
    with pytest.raises(BuildError, match=rf"rows 5 and 176 share the id '{repeat['video_id']}' but differ"):
        build("avhallubench", release, tmp_path / "conflict", skip_missing=True)
    assert not (tmp_path / "conflict").exists()


@pytest.mark.parametrize("change, message", [
    (lambda item: item["annotation"][1]["claims"][0].update(claim_label="maybe"),
     r"annotation\[1\]\.claims\[0\]\.claim_label is 'maybe'"),
    (lambda item: item["annotation"][0].pop("segment_category"), r"annotation\[0\]\.segment_category must be a list"),
    (lambda item: item.pop("repsonse"), r"missing field\(s\) 'repsonse'"),
    (lambda item: item["annotation"][0].update(claims=[]), r"annotation\[0\]\.claims must be a non-empty list"),
    (lambda item: item["annotation"][0].update(segment_label="non-hallucination"),
     r"annotation\[0\]\.segment_label is 'non-hallucination' but its claims make it 'hallucination'"),
], ids=["bad-claim-label", "missing-category", "missing-response", "no-claims", "label-contradicts-claims"])
def test_mhalubench_bad_annotation_names_row_and_place(shared_data, tmp_path, change, message):
    items = json.loads((shared_data / "mhalubench" / "image_to_text_annotated.json").read_text())
    change(items[3])
    release = tmp_path / "release"  # --out may not lie inside the release
    release.mkdir()
    (release / "image_to_text_annotated.json").write_text(json.dumps(items))
    with pytest.raises(BuildError, match=r"image_to_text_annotated.json: row 3 \(id 'mhalubench-0003'\): " + message):
        build("mhalubench", release / "image_to_text_annotated.json", tmp_path / "out")
    assert build_with_summary("mhalubench", release, tmp_path / "out", skip_missing=True).rows == {"default": 199}
