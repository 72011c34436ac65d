"""The embedded mini releases: official layouts and field names, media that decode and say what the labels say,
byte-for-byte determinism, and generation in seconds.

Media truth is checked from the pixels and samples themselves (nearest-colour masks, FFT peaks), against
the wording of the annotations, not against the specs that drew them.
"""
import hashlib
import io
import json
import re
import time
import zipfile
from pathlib import Path

import av
import numpy as np
import pyarrow.parquet as pq
import pytest
import soundfile as sf
from PIL import Image

from hallubench.builders import build
from hallubench.builders.mini import RELEASES, build_all, make_release
from hallubench.builders.mini.synthetic import COLORS
from hallubench.registry import BUILDERS
from hallubench.loaders import load_audio

CMM_FIELDS = ["category", "sub_category", "modality", "granularity", "correlation_type",
              "video_path", "audio_path", "question", "answer"]
CMM_SUB_CATEGORIES = {"visual-language", "audio-language", "visual-audio-language", "overrely_visual_ignore_audio",
                      "overrely_audio_ignore_visual", "overrely_language_ignore_visual"}
CCHALL_COLUMNS = ["question_id", "dataset_source", "image_id", "question", "response1", "response2", "choice",
                  "label", "language", "language_category", "image"]
CCHALL_TYPES = ["Non-hallucination", "Cross-modal, non-cross-lingual hallucination",
                "Cross-lingual, non-cross-modal hallucination", "Cross-modal, cross-lingual hallucination"]
OTHER_LANGUAGES = {"hr", "cy", "sw", "cs", "nl", "sv", "fr", "es", "pt"}
SAC3_FILES = {"prime-500-SC.json", "senator-500-SC.json", "hotpotQA_250_eval_labeled-SC.json",
              "nq_open_250_eval_labeled-SC.json"}
SHAPE_PHRASE = re.compile(r"\b(red|green|blue|yellow|white|black) (circle|square|triangle)s?\b")


@pytest.fixture(scope="session")
def releases(tmp_path_factory):
    root = tmp_path_factory.mktemp("mini")
    start = time.perf_counter()
    made = {name: make_release(name, root / name) for name in RELEASES}
    made["cmm_zipped"] = make_release("cmm", root / "cmm_zipped", zipped=True)
    print(f"\nmade all mini releases (and the zipped CMM) in {time.perf_counter() - start:.2f} s")
    return made


# ---- media probes (test helpers) ----

def shapes_in(pixels: np.ndarray, min_pixels: int = 100) -> set[tuple[str, str]]:
    """(colour, "circle"|"square") of each non-background colour blob, told apart by how much of its box it fills."""
    names = list(COLORS)
    palette = np.array([COLORS[n] for n in names], dtype=np.float32)
    distance = np.linalg.norm(pixels[..., None, :].astype(np.float32) - palette, axis=-1)
    nearest = np.where(distance.min(-1) < 60, distance.argmin(-1), -1)
    counts = {i: int((nearest == i).sum()) for i in range(len(names))}
    background = max(counts, key=counts.get)
    found = set()
    for i, count in counts.items():
        if i == background or count < min_pixels:
            continue
        ys, xs = np.nonzero(nearest == i)
        fill = count / ((np.ptp(ys) + 1) * (np.ptp(xs) + 1))
        found.add((names[i], "square" if fill > 0.88 else "circle" if fill > 0.6 else "triangle"))
    return found


def video_frames(path: Path) -> np.ndarray:
    with av.open(str(path)) as container:
        return np.stack([frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)])


def audio_samples(path: Path) -> tuple[np.ndarray, int]:
    if path.suffix == ".wav":
        samples, sr = sf.read(path, dtype="float32")
        return samples, sr
    return load_audio(path, sr=16000).samples, 16000


def dominant_hz(samples: np.ndarray, sr: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples))
    return float(np.fft.rfftfreq(samples.size, 1 / sr)[spectrum.argmax()])


def is_beeping(samples: np.ndarray, sr: int) -> bool:
    """True when a good share of 50 ms windows is near-silent (the tone pauses)."""
    window = sr // 20
    rms = np.sqrt((samples[: samples.size // window * window].reshape(-1, window) ** 2).mean(1))
    return (rms < 0.1 * rms.max()).mean() > 0.3


def tree_hashes(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def load_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


# ---- AVHalluBench ----

def test_avhallubench_layout(releases, shared_data):
    root = releases["avhallubench"]
    rows = load_json(root / "data.json")
    upstream_keys = set(load_json(shared_data / "avhallubench" / "annotations_175.json")[0])
    assert 4 <= len(rows) <= 6
    for row in rows:
        assert list(row) == ["video_id", "source", "audio_description", "visual_description"]
        assert upstream_keys <= set(row)
        assert re.fullmatch(r"[\w-]{11}_[\d.]+_[\d.]+", row["video_id"]), row["video_id"]
    assert sorted(p.name for p in (root / "videos").iterdir()) == sorted(f"{r['video_id']}.mp4" for r in rows)
    assert sorted(p.name for p in root.iterdir()) == ["data.json", "videos"]


def test_avhallubench_media_match_descriptions(releases):
    root = releases["avhallubench"]
    for row in load_json(root / "data.json"):
        path = root / "videos" / f"{row['video_id']}.mp4"
        frames = video_frames(path)
        color, shape, motion = re.search(r"a (\w+) (circle|square) (moving|standing)", row["visual_description"]).groups()
        assert (color, shape) in shapes_in(frames[len(frames) // 2]), row["visual_description"]
        mask = np.all(np.abs(frames.astype(int) - COLORS[color]) < 60, axis=-1)
        first_x, last_x = (np.nonzero(mask[i])[1].mean() for i in (0, -1))
        assert (last_x - first_x > 20) == (motion == "moving"), row["visual_description"]
        freq = float(re.search(r"(\d+) Hz", row["audio_description"]).group(1))
        samples, sr = audio_samples(path)
        assert abs(dominant_hz(samples, sr) - freq) < 5, row["audio_description"]
        assert is_beeping(samples, sr) == ("beeping" in row["audio_description"]), row["audio_description"]


# ---- CMM ----

def cmm_rows(root: Path) -> list[dict]:
    return load_json(root / "all_data_final_reorg.json")


def test_cmm_layout_fields_and_balance(releases):
    root = releases["cmm"]
    rows = cmm_rows(root)
    assert {r["sub_category"] for r in rows} == CMM_SUB_CATEGORIES
    for sub in CMM_SUB_CATEGORIES:
        answers = [r["answer"] for r in rows if r["sub_category"] == sub]
        assert answers.count("yes") == answers.count("no") >= 4, sub
    for row in rows:
        assert list(row) == CMM_FIELDS
        assert row["answer"] in ("yes", "no")
        assert not row["question"].endswith("Answer with yes or no.")
        assert row["granularity"] in ("object-level", "event-level")
        assert (row["video_path"] is None) == (row["sub_category"] == "audio-language")
        assert (row["audio_path"] is None) == (row["sub_category"] in ("visual-language", "overrely_language_ignore_visual"))
        for key, suffix in (("video_path", ".mp4"), ("audio_path", ".wav")):
            if row[key] is not None:
                prefix = f"./reorg_raw_files/{row['category']}/{row['sub_category']}/"
                assert row[key].startswith(prefix) and row[key].endswith(suffix), row[key]
                assert (root / row[key]).is_file(), row[key]


def test_cmm_questions_true_to_media(releases):
    root = releases["cmm"]
    checked = 0
    for row in cmm_rows(root):
        said_yes = row["answer"] == "yes"
        seen = re.fullmatch(r"Did you see an? (\w+) (circle|square) in the video\?", row["question"])
        if seen:
            shapes = shapes_in(video_frames(root / row["video_path"])[0])
            assert (tuple(seen.groups()) in shapes) == said_yes, row
            checked += 1
        if row["question"].startswith("Did you hear") and re.search(r"beep|steady|continuous", row["question"]):
            samples, sr = audio_samples(root / row["audio_path"])
            assert is_beeping(samples, sr) == (("beep" in row["question"]) == said_yes), row
            checked += 1
    assert checked >= 15


def test_cmm_soundtracks_agree(releases):
    """A sample with video and sound carries the same tone in its mp4 track and its wav."""
    root = releases["cmm"]
    pairs = {(r["video_path"], r["audio_path"]) for r in cmm_rows(root) if r["video_path"] and r["audio_path"]}
    assert len(pairs) == 12
    for video, audio in pairs:
        assert abs(dominant_hz(*audio_samples(root / video)) - dominant_hz(*audio_samples(root / audio))) < 5


def test_cmm_zipped_holds_the_same_tree(releases):
    plain, zipped = releases["cmm"], releases["cmm_zipped"]
    assert sorted(p.name for p in zipped.iterdir()) == ["all_data_final_reorg.json", "reorg_raw_files.zip"]
    assert (plain / "all_data_final_reorg.json").read_bytes() == (zipped / "all_data_final_reorg.json").read_bytes()
    with zipfile.ZipFile(zipped / "reorg_raw_files.zip") as zf:
        inside = {name: hashlib.sha256(zf.read(name)).hexdigest() for name in zf.namelist()}
    folder = {f"reorg_raw_files/{k}": v for k, v in tree_hashes(plain / "reorg_raw_files").items()}
    assert inside == folder


# ---- CCHall ----

def test_cchall_parquet_is_hf_datasets_layout(releases):
    table = pq.read_table(releases["cchall"] / "test.parquet")
    assert table.column_names == CCHALL_COLUMNS
    assert str(table.schema.field("image").type) == "struct<bytes: binary, path: string>"
    assert str(table.schema.field("question_id").type) == "int64"
    features = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
    assert features["image"]["_type"] == "Image"
    rows = table.to_pylist()
    assert {r["label"] for r in rows} == set(CCHALL_TYPES)
    assert len({r["dataset_source"] for r in rows}) >= 3
    assert {r["language"] for r in rows} == OTHER_LANGUAGES
    assert {r["language_category"] for r in rows} == {"high resource", "medium resource", "low resource"}
    assert len({r["question_id"] for r in rows}) == len(rows)
    for row in rows:
        assert row["choice"] == "\n".join(f"{letter}. {name}" for letter, name in zip("ABCD", CCHALL_TYPES))


def test_cchall_english_responses_true_to_images(releases):
    """response1 names only drawn shapes exactly when the English side is not hallucinated."""
    for row in pq.read_table(releases["cchall"] / "test.parquet").to_pylist():
        image = Image.open(io.BytesIO(row["image"]["bytes"]))
        assert image.format == "PNG"
        drawn = shapes_in(np.asarray(image.convert("RGB")))
        named = set(SHAPE_PHRASE.findall(row["response1"]))
        assert named, row["response1"]
        english_right = row["label"] in (CCHALL_TYPES[0], CCHALL_TYPES[2])
        assert (named <= drawn) == english_right, (row["question_id"], named, drawn)
        assert row["response2"] != row["response1"]


# ---- MHaluBench ----

def test_mhalubench_keys_match_upstream(releases, shared_data):
    upstream = load_json(shared_data / "mhalubench" / "image_to_text_annotated.json")
    mini = load_json(releases["mhalubench"] / "image_to_text_annotated.json")

    def key_sets(items):
        return ({tuple(i) for i in items}, {tuple(s) for i in items for s in i["annotation"]},
                {tuple(c) for i in items for s in i["annotation"] for c in s["claims"]})

    assert key_sets(mini) == key_sets(upstream)
    assert "repsonse" in mini[0]
    assert {i["task_type"] for i in mini} == {"image-caption", "vqa"}


def test_mhalubench_labels_consistent_and_true_to_images(releases):
    root = releases["mhalubench"]
    items = load_json(root / "image_to_text_annotated.json")
    assert sorted(p.name for p in (root / "images").iterdir()) == sorted(i["image_name"] for i in items)
    labels = set()
    for item in items:
        assert item["repsonse"] == " ".join(s["segment"] for s in item["annotation"])
        drawn = shapes_in(np.asarray(Image.open(root / "images" / item["image_name"]).convert("RGB")))
        for segment in item["annotation"]:
            claims = segment["claims"]
            assert (segment["segment_label"] == "hallucination") == any(c["claim_label"] == "hallucination" for c in claims)
            assert set(segment["segment_category"]) == {cat for c in claims for cat in c["claim_category"]}
            for claim in claims:
                labels.add(claim["claim_label"])
                exists = re.fullmatch(r"There is an? (\w+) (circle|square|triangle)", claim["claim"])
                if exists:
                    assert (tuple(exists.groups()) in drawn) == (claim["claim_label"] == "non-hallucination"), claim
    assert labels == {"hallucination", "non-hallucination"}


# ---- SAC3 ----

def test_sac3_files_and_keys_match_upstream(releases, shared_data):
    root = releases["sac3"]
    assert {p.name for p in root.iterdir()} == SAC3_FILES
    for name in SAC3_FILES:
        upstream, mini = load_json(shared_data / "sac3" / name)[0], load_json(root / name)
        assert len(mini) >= 3
        for item in mini:
            assert list(item) == list(upstream), name
            assert [type(v) for v in item.values()] == [type(v) for v in upstream.values()], name
            for key in ("question_perturb", "self_evaluations", "perb_evaluations", "self_SC", "perb_SC"):
                assert len(item[key]) == 10, (name, key)
            assert [q.split(". ", 1)[0] for q in item["question_perturb"]] == [str(i) for i in range(1, 11)]


def test_sac3_judge_strings_parse_and_vary(releases):
    guesses = []
    for name in SAC3_FILES:
        for item in load_json(releases["sac3"] / name):
            for judged in item["self_SC"] + item["perb_SC"]:
                match = re.fullmatch(r"Guess: (Yes|No)\nProbability: ([01](?:\.\d+)?)", judged)
                assert match, judged
                guesses.append(match.group(1))
    assert {"Yes", "No"} <= set(guesses)


# ---- whole set ----

def test_releases_are_deterministic_and_quick(releases, tmp_path):
    """Each registered mini release: the same bytes when made again, in seconds (under 30 s each on two shared cores)."""
    seconds = {}
    for name in RELEASES:
        start = time.perf_counter()
        again = make_release(name, tmp_path / name)
        seconds[name] = time.perf_counter() - start
        assert tree_hashes(again) == tree_hashes(releases[name]), name
    print("\nremade the mini releases: " + ", ".join(f"{name} {s:.2f} s" for name, s in seconds.items()))
    assert all(s < 30 for s in seconds.values()), seconds


def test_bad_arguments_say_what_to_do(tmp_path):
    with pytest.raises(ValueError, match=f"choose one of {', '.join(sorted(RELEASES))}"):
        make_release("no_such_benchmark", tmp_path)
    with pytest.raises(ValueError, match=r"only to releases whose media ship as a zip \(cmm\)"):
        make_release("sac3", tmp_path, zipped=True)


MEDIA_COLUMNS = ("video", "video_path", "audio_path", "image")


def release_row_count(name: str, release: Path, scratch: Path) -> int:
    """The raw records the benchmark's own builder reads from its mini release, over its builder configs."""
    builder_cls = BUILDERS[name]
    return sum(len(list(builder_cls(source=release, media_root=scratch, config_name=config.name,
                                    cache_dir=str(scratch / ".cache")).read_records()[1]))
               for config in builder_cls.BUILDER_CONFIGS)


def test_build_all_keeps_every_row_and_its_media(tmp_path, monkeypatch):
    """Every registered mini release builds with nothing left out, one row per record its builder reads (its
    output configs hold an `all` config or split the rows), unique ids, and every media file in the folder."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    built = build_all(tmp_path)
    assert set(built) == set(RELEASES)
    for name, folder in built.items():
        assert (folder / "README.md").is_file() and not (folder / "skipped.jsonl").exists(), name
        every = sorted(folder.glob("data/all/test-*.parquet"))  # cmm and cchall: `all` next to the subsets
        tables = every or sorted(folder.glob("data/*/test-*.parquet"))
        rows = [row for table in tables for row in pq.read_table(table).to_pylist()]
        assert len(rows) == release_row_count(name, tmp_path / "releases" / name, tmp_path / "scratch" / name), name
        assert len({row["id"] for row in rows}) == len(rows), name
        for row in rows:
            for column in MEDIA_COLUMNS:
                if row.get(column) is not None:
                    value = row[column]  # datasets.Image: named by its file; AMBER keeps a path (one image, many rows)
                    path = value["path"] if isinstance(value, dict) else value
                    assert (folder / path).is_file(), (name, row["id"], column)


def test_zipped_and_folder_cmm_build_the_same_rows(releases, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    tables = [pq.read_table(next((build("cmm", releases[form], tmp_path / form) / "data" / "all").glob("test-*.parquet")))
              .to_pylist() for form in ("cmm", "cmm_zipped")]
    assert tables[0] == tables[1] and len(tables[0]) == len(cmm_rows(releases["cmm"]))
