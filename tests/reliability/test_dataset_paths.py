"""One confinement rule for every path a dataset folder names: its card's `configs: data_files:` patterns (every
pattern of every config), the card file itself, row media (tests/reliability/test_untrusted_datasets.py), local or
a Hub dataset's snapshot. Each escape is a DataFilesOutsideDatasetError (exit 2) naming the folder, the config and
the pattern, before any model loads; nothing outside the folder is read. And every dataset read goes through the
one reader, builders/dataset_reader.py: no other module of the package calls `datasets` on a folder."""
import ast
import shutil
import sys
from pathlib import Path

import pytest

from hallubench.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from test_architecture import modules  # noqa: E402  (every module of the package, as setup.cfg maps them)

READER = "hallubench.builders.dataset_reader"
# What reads a dataset folder, or a card, by itself: `datasets`' loaders follow a card's `configs:` wherever they lead.
FOLLOWS_A_CARD = {"load_dataset", "load_dataset_builder", "load_from_disk", "get_dataset_config_names",
                  "get_dataset_split_names", "get_dataset_infos", "get_dataset_config_info", "get_dataset_default_config_name",
                  "metadata_load", "from_parquet"}


def readers_outside_the_reader(root: Path) -> list[str]:
    """`module:line name` for every call of a FOLLOWS_A_CARD function in a module other than the one reader."""
    found = []
    for name, path in modules(root).items():
        if name == READER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
                if called in FOLLOWS_A_CARD:
                    found.append(f"{name}:{node.lineno} {called}")
    return found


def test_only_the_one_reader_loads_a_dataset_or_reads_a_card():
    assert readers_outside_the_reader(ROOT) == []


def test_the_walk_finds_a_planted_reader(tmp_path):
    shutil.copy(ROOT / "setup.cfg", tmp_path / "setup.cfg")
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "x.py").write_text("import datasets as d\n\ndef f(p):\n    return d.load_dataset(str(p))\n")
    (tmp_path / "view").mkdir()
    (tmp_path / "view" / "y.py").write_text("from datasets import load_from_disk\nload_from_disk('x')\n")
    assert readers_outside_the_reader(tmp_path) == ["hallubench.harness.x:4 load_dataset",
                                                    "hallubench.view.y:2 load_from_disk"]


@pytest.fixture
def cmm(data_dir, tmp_path):
    """A copy of the mini CMM folder, and a folder beside it holding a copy of its `all` rows: were a card to lead
    there, the run would read and score those rows."""
    folder = tmp_path / "datasets" / "cmm"
    shutil.copytree(data_dir / "cmm", folder)
    data = next(folder.glob("data/all/*.parquet"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(data, elsewhere / data.name)
    return folder, data.relative_to(folder).as_posix(), elsewhere


def with_pattern(folder: Path, old: str, new: str) -> None:
    card = folder / "README.md"
    text = card.read_text(encoding="utf-8")
    assert old in text
    card.write_text(text.replace(f"path: {old}", f"path: '{new}'"), encoding="utf-8")


def refused_before_the_model(tmp_path, data_dir, capsys, *needles):
    """`hallubench run` on `data_dir` with an hf model whose folder holds no weights: exit 2 with a message holding
    every needle, before the weights are looked at (that would say "cannot load"), no sample written."""
    (tmp_path / "empty-checkpoint").mkdir(exist_ok=True)
    code = main(["run", "--model", "hf", "--model-args", f"pretrained={tmp_path / 'empty-checkpoint'}", "--tasks", "cmm",
                 "--limit", "2", "--data-dir", str(data_dir), "--output-dir", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "data_files pattern" in err and "cannot load" not in err and "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)
    assert not (tmp_path / "run" / "samples.jsonl").exists()
    return err


@pytest.mark.parametrize("attack", ["dotdot", "absolute", "glob-dotdot", "url-hf", "url-https", "chained", "non-ascii",
                                    "backslash"])
def test_a_data_files_pattern_out_of_the_folder_is_refused(cmm, tmp_path, capsys, attack):
    folder, data, elsewhere = cmm
    if attack == "non-ascii":
        elsewhere = elsewhere.rename(tmp_path / "données-ünïcode")
    pattern = {"dotdot": "../../elsewhere/*.parquet", "absolute": f"{elsewhere}/*.parquet",
               "glob-dotdot": "data/**/../../../elsewhere/*.parquet", "url-hf": "hf://datasets/org/other/*.parquet",
               "url-https": "https://example.com/rows.parquet", "chained": "zip://*.parquet::../rows.zip",
               "non-ascii": "../../données-ünïcode/*.parquet", "backslash": "..\\..\\elsewhere\\*.parquet"}[attack]
    with_pattern(folder, data, pattern)
    refused_before_the_model(tmp_path, folder.parent, capsys, str(folder), "config 'all'", repr(pattern))


def test_a_pattern_of_a_config_the_run_does_not_read_is_refused_too(cmm, tmp_path, capsys):
    folder, _, _ = cmm
    other = next(folder.glob("data/audio-language/*.parquet")).relative_to(folder).as_posix()
    with_pattern(folder, other, "../../elsewhere/*.parquet")
    refused_before_the_model(tmp_path, folder.parent, capsys, "config 'audio-language'")


def test_a_data_folder_linked_out_of_the_dataset_is_refused(cmm, tmp_path, capsys):
    folder, data, elsewhere = cmm
    shutil.rmtree(folder / "data" / "all")
    (folder / "data" / "all").symlink_to(elsewhere, target_is_directory=True)  # same file name, outside
    refused_before_the_model(tmp_path, folder.parent, capsys, str(folder), "config 'all'", repr(data),
                             "outside the dataset folder")


def test_a_data_file_linked_out_of_the_dataset_is_refused(cmm, tmp_path, capsys):
    folder, data, elsewhere = cmm
    (folder / data).unlink()
    (folder / data).symlink_to(elsewhere / Path(data).name)
    refused_before_the_model(tmp_path, folder.parent, capsys, "config 'all'", repr(data))


def test_a_card_linked_out_of_the_dataset_is_refused(cmm, tmp_path, capsys):
    folder, _, elsewhere = cmm
    (folder / "README.md").rename(elsewhere / "README.md")
    (folder / "README.md").symlink_to(elsewhere / "README.md")
    (tmp_path / "empty-checkpoint").mkdir()
    assert main(["run", "--model", "hf", "--model-args", f"pretrained={tmp_path / 'empty-checkpoint'}", "--tasks",
                 "cmm", "--data-dir", str(folder.parent), "--output-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"{folder}: its README.md is a link to a file outside the dataset folder" in err, err


def test_data_files_inside_the_folder_under_non_ascii_names_still_load(cmm, tmp_path, capsys):
    """The rule refuses where a path leads, not what it is called: a folder named `données [v2]` (a glob's magic
    characters included) holding the data file reads as before."""
    folder, data, _ = cmm
    moved = f"données [v2]/{Path(data).name}"
    (folder / "données [v2]").mkdir()
    (folder / data).rename(folder / moved)
    with_pattern(folder, data, moved.replace("[", "[[]"))
    from hallubench.benchmarks import get_task
    from hallubench.harness.data import load_rows

    rows, total = load_rows(folder, get_task("cmm"), limit=2)
    assert [row["id"] for row in rows] == ["cmm-0000", "cmm-0001"] and total > 2


def test_a_hub_datasets_card_cannot_lead_out_of_its_snapshot(cmm, tmp_path, capsys, monkeypatch):
    from hub_server import Repo, StandInHub

    folder, data, _ = cmm
    with_pattern(folder, data, "../../../../../elsewhere/*.parquet")
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    hub = StandInHub({"evil/cmm": Repo(files)}).serve_in_process(monkeypatch, tmp_path)
    try:
        err = refused_before_the_model(tmp_path, "evil/cmm", capsys, "config 'all'",
                                       repr("../../../../../elsewhere/*.parquet"), "snapshots")
    finally:
        hub.close()
    assert "leads outside the dataset folder" in err


def test_hidden_files_match_only_a_pattern_that_names_them(tmp_path):
    """As `datasets` resolves a pattern: a `.cache/` or `.x.parquet` beside the data is no data file of `*`."""
    from hallubench.builders.dataset_reader import matched_files

    for name in ("data/a.parquet", "data/.b.parquet", ".cache/c.parquet", "__x__/d.parquet"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    names = {pattern: [p.relative_to(tmp_path).as_posix() for p in matched_files(tmp_path, pattern, "w")]
             for pattern in ("data/*.parquet", "**/*.parquet", "data/.*.parquet", ".cache/*", "__x__/*")}
    assert names == {"data/*.parquet": ["data/a.parquet"], "**/*.parquet": ["data/a.parquet"],
                     "data/.*.parquet": ["data/.b.parquet"], ".cache/*": [".cache/c.parquet"],
                     "__x__/*": ["__x__/d.parquet"]}
