"""CCHall builder on a test.parquet made here the way the Hub stores it (HF Image struct with embedded bytes)."""
from __future__ import annotations

import io
import json

import datasets
import numpy as np
import pyarrow.parquet as pq
import pytest
from builders_support import image_bytes, load_plain
from PIL import Image

from hallubench.builders import BENCHMARKS, build, build_with_summary
from hallubench.errors import BuildError
from hallubench.metrics.cchall.cchall import LABELS
from hallubench.cli.main import main

SOURCES = ("AMBER", "GQA", "xFlickrCO")
LANGUAGES = ("hr", "cy", "sw", "fr")
TEXT = ("dataset_source", "image_id", "question", "response1", "response2", "choice", "label", "language",
        "language_category")


def cchall_parquet(folder, broken=None):
    """test.parquet with 12 rows (4 per source); JPEG images on odd rows, PNG on even ones; `broken` maps
    row indices to the image value they get instead."""
    broken = broken or {}
    rows = []
    for index in range(12):
        color = (20 * index, 100, 255 - 20 * index)
        image = {"bytes": image_bytes(color, "JPEG" if index % 2 else "PNG"), "path": None}
        rows.append({"question_id": 1000 + index, "dataset_source": SOURCES[index // 4], "image_id": f"img{index}",
                     "question": f"What is in picture {index}?", "response1": f"A thing {index}.",
                     "response2": f"Une chose {index}.", "choice": "A. none B. cross-modal C. cross-lingual D. both",
                     "label": LABELS[index % 4], "language": LANGUAGES[index % 4], "language_category": "low",
                     "image": broken.get(index, image)})
    features = datasets.Features({"question_id": datasets.Value("int64"),
                                  **{name: datasets.Value("string") for name in TEXT}, "image": datasets.Image()})
    folder.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(folder / "test.parquet"))
    return folder, rows


def test_cchall_configs_per_source_and_images_as_png(tmp_path):
    release, source_rows = cchall_parquet(tmp_path / "release")
    out = tmp_path / "cchall"
    assert main(["build", "cchall", "--source", str(release), "--out", str(out)]) == 0
    loaded = load_plain(out, [*SOURCES, "all"], tmp_path)
    assert loaded["all"]["features"] == BENCHMARKS["cchall"].FEATURES.to_dict()
    everything = loaded["all"]["rows"]
    assert [r["id"] for r in everything] == [f"cchall-{i:04d}" for i in range(12)]
    for source in SOURCES:
        assert [r["id"] for r in loaded[source]["rows"]] == [r["id"] for r in everything if r["dataset_source"] == source]
        assert len(loaded[source]["rows"]) == 4
    for row, raw in zip(everything, source_rows):
        assert {k: row[k] for k in ("question_id", *TEXT)} == {k: raw[k] for k in ("question_id", *TEXT)}
        assert row["image"]["path"] == f"images/{row['id']}.png"  # a datasets.Image named by its file here
        with Image.open(out / row["image"]["path"]) as written, Image.open(io.BytesIO(raw["image"]["bytes"])) as original:
            assert written.format == "PNG"
            assert np.array_equal(np.asarray(written.convert("RGB")), np.asarray(original.convert("RGB")))
    assert (out / everything[0]["image"]["path"]).read_bytes() == source_rows[0]["image"]["bytes"]  # PNG kept as is
    card = (out / "README.md").read_text()
    assert "license: unknown" in card and "zhang-etal-2025-cchall" in card and "  default: true" in card


def test_cchall_rows_without_a_readable_image_are_named_or_skipped(tmp_path):
    release, _ = cchall_parquet(tmp_path / "release", broken={5: None, 9: {"bytes": b"not an image", "path": None}})
    with pytest.raises(BuildError, match=r"test.parquet: row 5 \(id 'cchall-0005'\): image has no embedded bytes"):
        build("cchall", release / "test.parquet", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    summary = build_with_summary("cchall", release, tmp_path / "out", skip_missing=True)
    assert summary.rows == {"AMBER": 4, "GQA": 3, "xFlickrCO": 3, "all": 10}
    skipped = [json.loads(line) for line in (summary.path / "skipped.jsonl").read_text().splitlines()]
    assert [(s["index"], s["id"]) for s in skipped] == [(5, "cchall-0005"), (9, "cchall-0009")]
    assert "not a readable image" in skipped[1]["reason"]
    assert not (summary.path / "images" / "cchall-0005.png").exists()


def test_cchall_bad_files_are_named(tmp_path):
    release, _ = cchall_parquet(tmp_path / "release")
    table = pq.read_table(release / "test.parquet").drop_columns(["label"])
    pq.write_table(table, release / "test.parquet")
    with pytest.raises(BuildError, match=r"test.parquet lacks the column\(s\) label"):
        build("cchall", release, tmp_path / "out")
    (release / "test.parquet").write_text("not parquet")
    with pytest.raises(BuildError, match=r"test.parquet is not a readable parquet file"):
        build("cchall", release, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]
