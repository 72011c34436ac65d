"""CMM builder on releases made here in the official layout (folder and zip), plus the bad-input paths."""
from __future__ import annotations

import json
import zipfile
from collections import Counter

import pytest
from builders_support import link, load_here, load_plain, tiny_mp4, tiny_wav

from hallubench.builders import BENCHMARKS, build, build_with_summary
from hallubench.errors import BuildError, UnmarkedFolderError
from hallubench.builders.cmm import SUB_CATEGORIES
from hallubench.cli.main import main

SPURIOUS, PRIORS = "inter-modality_spurious_correlation", "over-reliance_unimodal_priors"
KINDS = {  # sub_category -> (category, has video, has audio)
    "visual-language": (SPURIOUS, True, False),
    "audio-language": (SPURIOUS, False, True),
    "visual-audio-language": (SPURIOUS, True, True),
    "overrely_visual_ignore_audio": (PRIORS, True, True),
    "overrely_audio_ignore_visual": (PRIORS, True, True),
    "overrely_language_ignore_visual": (PRIORS, True, False),
}
SUFFIXED = (4, 401, 2399)  # probes whose question carries the instruction the prompt adds


def cmm_release(tmp_path, samples=200, form="folder"):
    """all_data_final_reorg.json with 2 probes (yes, no) per sample, media in reorg_raw_files/ or the zip."""
    release = tmp_path / f"cmm-{form}"
    release.mkdir(parents=True)
    clip, sound = tiny_mp4(tmp_path / "clip.mp4"), tiny_wav(tmp_path / "sound.wav")
    probes, media = [], []
    for sub, (category, video, audio) in KINDS.items():
        for k in range(samples):
            stem = f"./reorg_raw_files/{category}/{sub}/{sub[:5]}_{k:03d}"
            media += [(clip, f"{stem}.mp4")] * video + [(sound, f"{stem}.wav")] * audio
            for answer in ("yes", "no"):
                probes.append({"category": category, "sub_category": sub, "modality": "video" if video else "audio",
                               "granularity": "object", "correlation_type": sub,
                               "video_path": f"{stem}.mp4" if video else None,
                               "audio_path": f"{stem}.wav" if audio else None,
                               "question": f"Did you see object {k} ({answer}) in the video?", "answer": answer})
    for index in SUFFIXED:
        if index < len(probes):
            probes[index]["question"] += " Answer with yes or no."
    (release / "all_data_final_reorg.json").write_text(json.dumps(probes))
    if form == "folder":
        for src, rel in media:
            link(src, release / rel)
    else:
        prefix = "./" if form == "zip" else "./reorg_raw_files/"  # "zip-content": members without the folder
        with zipfile.ZipFile(release / "reorg_raw_files.zip", "w") as archive:
            for src, rel in media:
                archive.write(src, rel.removeprefix(prefix))
    return release, probes


@pytest.fixture(scope="module")
def full_build(tmp_path_factory):
    """The 2,400-probe release in folder form, built through the CLI and read back with plain datasets."""
    tmp_path = tmp_path_factory.mktemp("cmm-full")
    release, probes = cmm_release(tmp_path)
    out = tmp_path / "cmm"
    assert main(["build", "cmm", "--source", str(release), "--out", str(out)]) == 0
    return probes, out, load_plain(out, [*SUB_CATEGORIES, "all", None], tmp_path)


def test_cmm_folder_release_gives_six_configs_of_400_and_all(full_build):
    probes, out, loaded = full_build
    everything = loaded["all"]["rows"]
    assert len(everything) == 2400 and loaded["None"]["rows"] == everything  # `all` is the default config
    assert loaded["all"]["features"] == BENCHMARKS["cmm"].FEATURES.to_dict()
    by_id = {row["id"]: row for row in everything}
    for sub in SUB_CATEGORIES:
        rows = loaded[sub]["rows"]
        assert len(rows) == 400 and Counter(r["answer"] for r in rows) == {"yes": 200, "no": 200}
        assert all(r["sub_category"] == sub and by_id[r["id"]] == r for r in rows)
    for row, probe in zip(everything, probes):
        for field in ("video_path", "audio_path"):
            if probe[field] is None:
                assert row[field] is None
            else:
                assert row[field] == probe[field].removeprefix("./") and (out / row[field]).is_file()
        assert row["question"] == probe["question"].removesuffix(" Answer with yes or no.")
        assert {k: row[k] for k in ("category", "sub_category", "answer")} == \
            {k: probe[k] for k in ("category", "sub_category", "answer")}
    assert sum(r["audio_path"] is None for r in loaded["visual-language"]["rows"]) == 400
    assert sum(r["video_path"] is None for r in loaded["audio-language"]["rows"]) == 400
    card = (out / "README.md").read_text()
    assert "license: other" in card and "Not redistributable" in card and "leng2024curse" in card
    assert f"{len(SUFFIXED)} question(s) ended with" in card


def test_cmm_zip_release_gives_the_same_rows_as_the_folder(full_build, tmp_path):
    _, folder, loaded = full_build
    zipped = build("cmm", cmm_release(tmp_path, form="zip")[0], tmp_path / "from-zip")
    for name in [*SUB_CATEGORIES, "all"]:
        assert load_here(zipped, name, tmp_path) == loaded[name]["rows"]
    for row in loaded["all"]["rows"]:
        for field in ("video_path", "audio_path"):
            if row[field]:
                assert (zipped / row[field]).read_bytes() == (folder / row[field]).read_bytes()


def test_cmm_zip_of_the_folder_content_works_too(tmp_path):
    folder = build("cmm", cmm_release(tmp_path, samples=2)[0], tmp_path / "from-folder")
    zipped = build("cmm", cmm_release(tmp_path, samples=2, form="zip-content")[0], tmp_path / "from-zip")
    rows = load_here(zipped, "all", tmp_path)
    assert len(rows) == 24 and rows == load_here(folder, "all", tmp_path)
    assert all((zipped / r["video_path"]).is_file() for r in rows if r["video_path"])


def edit(release, change):
    path = release / "all_data_final_reorg.json"
    probes = json.loads(path.read_text())
    change(probes)
    path.write_text(json.dumps(probes))


@pytest.mark.parametrize("change, message", [
    (lambda p: p[7].update(sub_category="visual-only"), r"row 7 \(id 'cmm-0007'\): unknown sub_category 'visual-only'"),
    (lambda p: p[7].pop("answer"), r"row 7 \(id 'cmm-0007'\): missing field\(s\) 'answer'"),
    (lambda p: p[7].update(answer="maybe"), r"row 7 \(id 'cmm-0007'\): answer must be 'yes' or 'no'"),
    (lambda p: p[7].update(video_path="./reorg_raw_files/x/missing.mp4"),
     r"row 7 \(id 'cmm-0007'\): media file .*missing.mp4 is missing"),
    (lambda p: p[7].update(audio_path="../../etc/passwd"), r"row 7 \(id 'cmm-0007'\): audio_path '../../etc/passwd' is not under"),
], ids=["unknown-sub-category", "missing-field", "bad-answer", "missing-media", "escaping-path"])
def test_cmm_bad_row_names_file_row_and_id_and_leaves_no_folder(tmp_path, change, message):
    release, _ = cmm_release(tmp_path, samples=2)
    edit(release, change)
    with pytest.raises(BuildError, match=r"all_data_final_reorg.json: " + message + r".*--skip-missing"):
        build("cmm", release, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir() if ".building-" in p.name] == []


def test_cmm_skip_missing_reports_every_skipped_row(tmp_path, capsys):
    release, _ = cmm_release(tmp_path, samples=2)
    edit(release, lambda p: (p[3].update(sub_category="nope"), p[10].update(video_path="./reorg_raw_files/gone.mp4")))
    out = tmp_path / "out"
    assert main(["build", "cmm", "--source", str(release), "--out", str(out)]) == 1
    assert "row 3 (id 'cmm-0003')" in capsys.readouterr().err and not out.exists()
    assert main(["build", "cmm", "--source", str(release), "--out", str(out), "--skip-missing"]) == 0
    printed = capsys.readouterr().out
    assert "skipped 2 row(s)" in printed and "row 3 (id 'cmm-0003')" in printed and "row 10 (id 'cmm-0010')" in printed
    skipped = [json.loads(line) for line in (out / "skipped.jsonl").read_text().splitlines()]
    assert [(s["index"], s["id"]) for s in skipped] == [(3, "cmm-0003"), (10, "cmm-0010")]
    assert "unknown sub_category 'nope'" in skipped[0]["reason"] and "gone.mp4 is missing" in skipped[1]["reason"]
    rows = load_plain(out, ["all"], tmp_path)["all"]["rows"]
    assert len(rows) == 22 and {"cmm-0003", "cmm-0010"}.isdisjoint(r["id"] for r in rows)
    assert "2 row(s) of the release were left out" in (out / "README.md").read_text()


def test_cmm_file_level_problems_are_named(tmp_path):
    release, _ = cmm_release(tmp_path, samples=1)
    (release / "all_data_final_reorg.json").write_text('[{"category": ')
    with pytest.raises(BuildError, match=r"all_data_final_reorg.json is not readable JSON"):
        build("cmm", release, tmp_path / "out")
    (release / "all_data_final_reorg.json").write_text('{"probes": []}')
    with pytest.raises(BuildError, match=r"all_data_final_reorg.json holds a JSON dict, expected a list"):
        build("cmm", release, tmp_path / "out")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BuildError, match=r"neither reorg_raw_files/ nor reorg_raw_files.zip found"):
        build("cmm", empty, tmp_path / "out")
    (empty / "reorg_raw_files.zip").write_bytes(b"not a zip")
    with pytest.raises(BuildError, match=r"reorg_raw_files.zip is not a readable zip"):
        build("cmm", empty, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_output_folder_is_replaced_only_with_overwrite(tmp_path):
    release, _ = cmm_release(tmp_path, samples=1)
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("old")
    with pytest.raises(BuildError, match=r"already exists and is not empty: choose another --output-dir or pass --overwrite"):
        build("cmm", release, out)
    assert (out / "keep.txt").read_text() == "old"
    with pytest.raises(UnmarkedFolderError, match=r"holds files that hallubench did not write"):
        build_with_summary("cmm", release, out, overwrite=True)  # a folder hallubench did not make is never deleted
    assert (out / "keep.txt").read_text() == "old"
    (out / "keep.txt").unlink()
    build("cmm", release, out)
    (out / "stray.txt").write_text("left in a built folder")
    summary = build_with_summary("cmm", release, out, overwrite=True)
    assert summary.rows["all"] == 12 and not (out / "stray.txt").exists() and (out / "README.md").is_file()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_unknown_benchmark_lists_the_valid_names(tmp_path):
    from hallubench.registry import BUILDERS

    with pytest.raises(BuildError, match=f"unknown benchmark 'no_such_benchmark'; valid benchmarks: {', '.join(sorted(BUILDERS))}"):
        build("no_such_benchmark", tmp_path, tmp_path / "out")
