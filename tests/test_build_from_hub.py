"""Benchmarks from the Hub: `hallubench build <benchmark>` downloads the official release with
huggingface_hub.snapshot_download and records repo and commit; `--source hub:<repo>[@rev]`; `--data-dir <repo id>`.

Everything runs against a stand-in Hub on 127.0.0.1 (tests/hub_server.py) through HF_ENDPOINT, in a fresh
interpreter (huggingface_hub reads HF_ENDPOINT at import) with its own HF_HOME.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import datasets
import pytest
from builders_support import tiny_mp4, tiny_wav
from hub_server import Repo, StandInHub

from hallubench.builders.mini import make_release
from hallubench.builders.mini.cmm import SUB_CATEGORIES
from hallubench.builders.mini.files import FIXED_ZIP_TIME


def hallubench(args: list[str], hub: StandInHub | None, home: Path, offline: bool = False, code: str | None = None):
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_TOKEN", "HF_ENDPOINT")}
    env.update(HF_HOME=str(home), HF_DATASETS_CACHE=str(home / "datasets"), HF_HUB_DISABLE_PROGRESS_BARS="1",
               HF_DATASETS_DISABLE_PROGRESS_BARS="1", HF_HUB_DISABLE_TELEMETRY="1")
    if hub is not None:
        env["HF_ENDPOINT"] = hub.url
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    command = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "hallubench", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def mini_cmm_release(tmp_path_factory) -> Path:
    """The mini CMM release as the Hub repo DAMO-NLP-SG/CMM holds it: the JSON next to reorg_raw_files.zip."""
    return make_release("cmm", tmp_path_factory.mktemp("cmm-release"), zipped=True)


@pytest.fixture
def hub(mini_cmm_release):
    server = StandInHub({"DAMO-NLP-SG/CMM": Repo.from_folder(mini_cmm_release)})
    yield server
    server.close()


def card_source(folder: Path) -> dict:
    from huggingface_hub.repocard import metadata_load

    return metadata_load(folder / "README.md")["hallubench"]["source"]


def test_build_without_source_downloads_the_official_release_and_records_repo_and_commit(hub, mini_cmm_release,
                                                                                         tmp_path):
    done = hallubench(["build", "cmm", "--out", str(tmp_path / "cmm")], hub, tmp_path / "home")
    assert done.returncode == 0, done.stderr[-2000:]
    commit = hub.repos["DAMO-NLP-SG/CMM"].commit
    assert f"built from the Hub release DAMO-NLP-SG/CMM at commit {commit}" in done.stdout
    assert card_source(tmp_path / "cmm") == {"repo_id": "DAMO-NLP-SG/CMM", "commit": commit}
    assert f"at commit `{commit}`" in (tmp_path / "cmm" / "README.md").read_text()
    rows = datasets.load_dataset(str(tmp_path / "cmm"), "all", split="test",
                                 cache_dir=str(tmp_path / "cache"))
    official = json.loads((mini_cmm_release / "all_data_final_reorg.json").read_text())
    assert rows["question"] == [item["question"] for item in official]
    assert all((tmp_path / "cmm" / path).is_file() for path in rows["video_path"] if path)
    assert ("GET", "/api/datasets/DAMO-NLP-SG/CMM/revision/main") in hub.requests
    # A second build is served from the huggingface_hub cache: no file is downloaded again.
    downloads = sum(method == "GET" and "/resolve/" in path for method, path in hub.requests)
    again = hallubench(["build", "cmm", "--out", str(tmp_path / "again")], hub, tmp_path / "home")
    assert again.returncode == 0, again.stderr[-2000:]
    assert sum(method == "GET" and "/resolve/" in path for method, path in hub.requests) == downloads


def test_source_hub_names_another_repo_and_revision(hub, mini_cmm_release, tmp_path):
    hub.repos["me/cmm-copy"] = Repo.from_folder(mini_cmm_release)
    commit = hub.repos["me/cmm-copy"].commit
    done = hallubench(["build", "cmm", "--source", f"hub:me/cmm-copy@{commit}", "--out", str(tmp_path / "cmm")],
                      hub, tmp_path / "home")
    assert done.returncode == 0, done.stderr[-2000:]
    assert card_source(tmp_path / "cmm") == {"repo_id": "me/cmm-copy", "commit": commit}
    bad = hallubench(["build", "cmm", "--source", "hub:me/cmm-copy@v9", "--out", str(tmp_path / "bad")],
                     hub, tmp_path / "home")
    assert bad.returncode == 1 and "has no revision 'v9'" in bad.stderr and not (tmp_path / "bad").exists()
    missing = hallubench(["build", "cmm", "--source", "hub:me/nothing", "--out", str(tmp_path / "bad")],
                         hub, tmp_path / "home")
    assert missing.returncode == 1 and "no Hub dataset repo me/nothing" in missing.stderr


def test_offline_the_error_says_what_to_download_and_where(tmp_path):
    done = hallubench(["build", "cmm", "--out", str(tmp_path / "cmm")], None, tmp_path / "home", offline=True)
    assert done.returncode == 1
    assert "could not download DAMO-NLP-SG/CMM from the Hub" in done.stderr
    assert "hf download DAMO-NLP-SG/CMM --repo-type dataset --local-dir DIR" in done.stderr
    assert "pass that folder as --source" in done.stderr and not (tmp_path / "cmm").exists()
    sac3 = hallubench(["build", "sac3", "--out", str(tmp_path / "sac3")], None, tmp_path / "home", offline=True)
    assert sac3.returncode == 1 and "github.com/intuit/sac3" in sac3.stderr


def full_size_cmm_release(folder: Path, media: Path) -> Path:
    """A CMM release with the official size: 2,400 probes (1,200 samples x a yes and a no probe, 400 per
    sub_category) in all_data_final_reorg.json next to reorg_raw_files.zip, each sample with its own tiny media."""
    mp4, wav = tiny_mp4(media / "clip.mp4").read_bytes(), tiny_wav(media / "tone.wav").read_bytes()
    rows = []
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / "reorg_raw_files.zip", "w", compression=zipfile.ZIP_STORED) as zf:
        for sub_category, (category, samples) in SUB_CATEGORIES.items():
            for k in range(200):
                sample = samples[k % len(samples)]
                paths = {}
                for kind, present, ext, data in (("video_path", sample.visual, "mp4", mp4),
                                                 ("audio_path", sample.sound, "wav", wav)):
                    paths[kind] = None
                    if present is not None:
                        name = f"reorg_raw_files/{category}/{sub_category}/{sample.sample_id}_{k:03d}.{ext}"
                        zf.writestr(zipfile.ZipInfo(name, date_time=FIXED_ZIP_TIME), data)
                        paths[kind] = f"./{name}"
                for question, answer in ((sample.present, "yes"), (sample.absent, "no")):
                    rows.append({"category": category, "sub_category": sub_category, "modality": sample.modality,
                                 "granularity": sample.granularity, "correlation_type": sample.correlation_type,
                                 **paths, "question": question, "answer": answer})
    (folder / "all_data_final_reorg.json").write_text(json.dumps(rows, indent=4))
    return folder


def test_build_cmm_from_the_hub_gives_2400_rows(tmp_path):
    release = full_size_cmm_release(tmp_path / "release", tmp_path / "media")
    server = StandInHub({"DAMO-NLP-SG/CMM": Repo.from_folder(release)})
    try:
        done = hallubench(["build", "cmm", "--out", str(tmp_path / "cmm")], server, tmp_path / "home")
    finally:
        server.close()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "  all: 2400 rows" in done.stdout
    assert card_source(tmp_path / "cmm")["commit"] == server.repos["DAMO-NLP-SG/CMM"].commit
    cache = str(tmp_path / "cache")
    for sub_category in SUB_CATEGORIES:
        rows = datasets.load_dataset(str(tmp_path / "cmm"), sub_category, split="test", cache_dir=cache)
        assert len(rows) == 400 and rows["answer"].count("yes") == 200
    assert len(datasets.load_dataset(str(tmp_path / "cmm"), "all", split="test", cache_dir=cache)) == 2400


LOAD_FROM_HUB = """
import json, sys
from hallubench.benchmarks import get_task
from hallubench.harness.data import dataset_dir, load_rows, resolve_data_dir
folder = resolve_data_dir(sys.argv[1])
rows, total = load_rows(dataset_dir(folder, get_task("cmm")), get_task("cmm"), limit=3)
print(json.dumps({"ids": [r["id"] for r in rows], "questions": [r["question"] for r in rows], "total": total}))
"""


@pytest.mark.parametrize("layout", ["one benchmark", "benchmark folders"])
def test_data_dir_takes_the_hub_repo_of_a_built_dataset(layout, mini_cmm_release, tmp_path):
    from hallubench.builders import build

    folder = build("cmm", mini_cmm_release, tmp_path / "built" / "cmm")
    repo = Repo.from_folder(folder if layout == "one benchmark" else folder.parent)
    server = StandInHub({"me/hallubench-cmm": repo})
    try:
        done = hallubench(["me/hallubench-cmm"], server, tmp_path / "home", code=LOAD_FROM_HUB)
        missing = hallubench(["me/other"], server, tmp_path / "home", code=LOAD_FROM_HUB)
    finally:
        server.close()
    assert done.returncode == 0, done.stderr[-2000:]
    official = json.loads((mini_cmm_release / "all_data_final_reorg.json").read_text())
    assert json.loads(done.stdout) == {"ids": ["cmm-0000", "cmm-0001", "cmm-0002"], "total": len(official),
                                       "questions": [item["question"] for item in official[:3]]}
    assert missing.returncode == 1
    assert "--data-dir me/other (no such folder here, so read as a Hub dataset repo id): no Hub dataset repo me/other" \
        in missing.stderr


def test_cchall_reads_the_hubs_parquet_shards_in_order(tmp_path):
    import pyarrow.parquet as pq

    from hallubench.builders import build

    single = make_release("cchall", tmp_path / "single")
    table = pq.read_table(single / "test.parquet")
    half = table.num_rows // 2
    (tmp_path / "sharded" / "data").mkdir(parents=True)
    for k, part in enumerate((table.slice(0, half), table.slice(half))):
        pq.write_table(part, tmp_path / "sharded" / "data" / f"test-{k:05d}-of-00002.parquet")
    cache = str(tmp_path / "cache")
    rows = [datasets.load_dataset(str(build("cchall", tmp_path / form, tmp_path / "out" / form / "cchall")), "all",
                                  split="test", cache_dir=cache).to_list() for form in ("single", "sharded")]
    assert rows[0] == rows[1] and len(rows[0]) == table.num_rows
