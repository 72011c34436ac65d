"""Writes never follow links, and `--overwrite` replaces only a folder hallubench made (hallubench/writes.py).

Every writer of hallubench/writes.py, harness/atomic.py, the sample store and the folder lock is handed a folder where
its file, and the temporary twin it writes first, are symbolic links to a file outside: the outside file must keep
its bytes, and the writer must refuse (LinkedPathError) or replace the link by its own file. A source walk fails on
any open for appending or updating outside the one helper, and on an `os.open` that writes without O_NOFOLLOW, so a
writer added later goes through it. `run` meets a linked `samples_rank0.jsonl` (a case that appended through it);
`build --overwrite` and `view --output-dir` meet a folder holding a thesis."""
import ast
from pathlib import Path

import pytest

from hallubench.cli.main import build_parser, main
from hallubench.errors import HallubenchError, LinkedPathError
from hallubench.harness import atomic, store
from hallubench.harness.folder_lock import FolderLock
from hallubench.writes import MARK, open_append, temporary_path, write_atomically, write_text_atomically

from conftest import openai_run_argv

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["builders", "cli", "harness", "judges", "loaders", "metrics", "models", "publish", "ranking", "view",
            "hallubench", "benchmarks", "testing"]
OUTSIDE_BYTES = b"someone else's file\n"


def _writers(root):
    """(name, the file it writes, a call that writes it) for every writer, each in a folder of its own under `root`."""
    record = {"key": "k", "task": "t", "id": "1", "error": None}
    writers = {
        "write_atomically": ("a.json", lambda f: write_atomically(f / "a.json", lambda t: t.write_text("{}"))),
        "write_text_atomically": ("b.md", lambda f: write_text_atomically(f / "b.md", "new")),
        "write_files": ("results.json", lambda f: atomic.write_files(f, {"results.json": lambda t: t.write_text("{}")},
                                                                      "results")),
        "manifest": (atomic.MANIFEST, lambda f: atomic.write_files(f, {"c.json": lambda t: t.write_text("{}")}, "x")),
        "sample append": (store.rank_file(Path(), 0).name,
                          lambda f: store.SampleWriter(store.rank_file(f, 0)).append(record)),
        "steps append": (store.rank_file(Path(), 1, store.STEPS).name,
                         lambda f: store.SampleWriter(store.rank_file(f, 1, store.STEPS)).append(record)),
        "open_append": ("journal.jsonl", lambda f: open_append(f / "journal.jsonl").close()),
        "merge": (store.MERGED, lambda f: store.merge(f)),
        "folder lock": (".hallubench.lock", lambda f: FolderLock(f, "run").release()),
    }
    for number, (name, (file_name, write)) in enumerate(writers.items()):
        folder = root / str(number)
        folder.mkdir(parents=True)
        yield name, folder / file_name, lambda write=write, folder=folder: write(folder)


@pytest.mark.parametrize("twin", [False, True], ids=["the file", "its temporary twin"])
def test_no_writer_writes_through_a_link(tmp_path, twin):
    for name, target, write in _writers(tmp_path / "writers"):
        outside = tmp_path / f"outside-{name.replace(' ', '-')}"
        outside.write_bytes(OUTSIDE_BYTES)
        link = temporary_path(target) if twin else target
        link.symlink_to(outside)
        try:
            write()
        except LinkedPathError as err:
            assert str(link) in str(err) and str(outside) in str(err), err
        except HallubenchError:  # a reader refused the linked file first (not a record, say): nothing written either
            pass
        assert outside.read_bytes() == OUTSIDE_BYTES, f"{name} wrote through a link at {link.name}"


def _calls(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            yield node, node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def test_every_append_or_update_goes_through_the_one_helper():
    raw = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            for call, name in _calls(path):
                mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
                if name in ("open", "fdopen") and isinstance(mode, ast.Constant) and isinstance(mode.value, str) \
                        and ("a" in mode.value or "+" in mode.value) and where != "hallubench/writes.py":
                    raw.append(f"{where}:{call.lineno} open(..., {mode.value!r})")
                flags = ast.unparse(call.args[1]) if name == "open" and len(call.args) > 1 else ""
                if name == "open" and "os." in flags and any(f in flags for f in ("O_WRONLY", "O_RDWR", "O_CREAT")) \
                        and "O_NOFOLLOW" not in flags and ast.unparse(call.args[0]) != "os.devnull":
                    raw.append(f"{where}:{call.lineno} os.open({flags}) without O_NOFOLLOW")
    assert raw == [], "append and update through hallubench/writes.py (open_append, open_update)"


def test_run_refuses_a_linked_rank_file_and_leaves_its_target(server, data_dir, tmp_path, capfd, offline):
    out = tmp_path / "run"
    out.mkdir()
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes(b"")  # a file with no records yet, as a rank file starts
    store.rank_file(out, 0).symlink_to(outside)
    assert main(openai_run_argv(server, data_dir, out)) == 2
    err = capfd.readouterr().err
    # resuming reads the rank file before writing it: the door refuses the link there, before any write
    assert f"{store.rank_file(out, 0)} leads outside {out} (a link to {outside})" in err, err
    assert "Traceback" not in err and len([line for line in err.splitlines() if "error" in line]) == 1, err
    assert outside.read_bytes() == b"" and not server.requests, "nothing generated, nothing appended through it"


def _overwriting_commands():
    """Every command with an --overwrite flag (walked from the parser), plus `view`, which replaces its site."""
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    return sorted({name for name, sub in commands.items()
                   if any("--overwrite" in action.option_strings for action in sub._actions)} | {"view"})


def _replace(command, out, tmp_path):
    """`command` writing its output into `out`, with --overwrite where it has the flag."""
    if command == "build":
        from hallubench.builders.mini import make_release

        release = tmp_path / "release"
        if not release.exists():
            make_release("cmm", release)
        return main(["build", "cmm", "--source", str(release), "--output-dir", str(out), "--overwrite"])
    if command == "view":
        from view_support import write_run

        run = tmp_path / "a-run"
        if not run.exists():
            write_run(run, "yes", ["yes", "no"], tmp_path, "clip.mp4")
        return main(["view", str(run), "--output-dir", str(out)])
    raise AssertionError(f"no way to call {command} here: add one")


@pytest.mark.parametrize("command", _overwriting_commands())
def test_overwrite_replaces_only_a_folder_hallubench_made(command, tmp_path, capfd):
    thesis = tmp_path / "thesis"
    thesis.mkdir()
    (thesis / "chapter1.tex").write_text("years of work")
    assert _replace(command, thesis, tmp_path) == 2
    err = capfd.readouterr().err
    assert "hallubench did not write" in err and "Traceback" not in err, err
    assert (thesis / "chapter1.tex").read_text() == "years of work"
    made = tmp_path / "made"
    assert _replace(command, made, tmp_path) == 0, capfd.readouterr().err
    assert (made / MARK).is_file()
    (made / "stray.txt").write_text("left in the folder hallubench made")
    assert _replace(command, made, tmp_path) == 0, capfd.readouterr().err
    assert not (made / "stray.txt").exists()
