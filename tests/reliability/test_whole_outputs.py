"""Every output of several files is swapped in whole: a ranking folder (`rank`), a run's results.json and charts
(`run`, `run --from-outputs`) and the viewer's site. The write of each of its files is failed in turn (the files
are those the writer itself hands to harness/atomic.py, so a file added next year is failed too): where the disk
refuses while writing, the folder is wholly the old one and the message says so, and its readers still read it;
where the swap itself is cut half-way, the message says the folder mixes old and new files and every reader
refuses it until the same command, run again, makes it wholly new. A real full disk (RLIMIT_FSIZE) does the same."""
import errno
import json
import resource
import signal
from pathlib import Path

import pytest

from hallubench.cli.main import main
from hallubench.errors import MixedOutputError
from hallubench.harness import atomic, run_state
from hallubench.harness import rescore as rescore_module
from hallubench.ranking.report import reading_ranking

from conftest import API_KEY, ROOT, answers_run_folder, openai_run_argv

TASK = "avhallubench_visual"
RED = "A red square moves to the left. A tone beeps twice a second."
DOG = "A dog plays the piano in a kitchen. A crowd cheers loudly."


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HB_RELIABILITY_KEY", API_KEY)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_TOKEN_PATH", str(ROOT / "tests" / "reliability" / "no-hub-login"))


def _snapshot(folder):
    return {path.name: path.read_bytes() for path in sorted(Path(folder).iterdir())
            if path.is_file() and path.name != ".hallubench.lock"}


def _names(monkeypatch, command):
    """The files `command` writes together, manifest last: those whose temporary twins atomic.write_files flushes."""
    seen, fsync = [], atomic.fsync_file

    def spy(path):
        seen.append(Path(path).name[1:].replace(".tmp", "", 1))  # the name of the file it stands in for
        return fsync(path)

    with monkeypatch.context() as patch:
        patch.setattr(atomic, "fsync_file", spy)
        assert command() == 0
    assert seen and seen[-1] == atomic.MANIFEST, seen
    return seen


def _disk_full_at(monkeypatch, name):
    """The disk is full when the temporary twin of `name` is flushed."""
    fsync = atomic.fsync_file

    def full(path):
        if Path(path).name == atomic.temporary_path(Path(name)).name:
            raise OSError(errno.ENOSPC, "No space left on device")
        fsync(path)

    monkeypatch.setattr(atomic, "fsync_file", full)


def _swap_cut_at(monkeypatch, name):
    """Renaming the new `name` into place fails (the swap is cut there)."""
    replace = atomic.os.replace

    def cut(src, dst):
        if Path(dst).name == name:
            raise OSError(errno.EIO, "Input/output error")
        replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", cut)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    return {"a": answers_run_folder(root / "a", RED, [RED, "A red square slides left."]),
            "b": answers_run_folder(root / "b", RED, [RED, "A tone beeps. The red square moves."]),
            "dog": answers_run_folder(root / "dog", DOG, [DOG, "A dog plays piano."])}


def _rank(runs, names, out, cache):
    return main(["rank", *(str(runs[name]) for name in names), "--output-dir", str(out), "--cache", str(cache),
                 "--weighting", "uniform"])


def _models(out):
    return sorted(json.loads((out / "crosscheck.json").read_text())["boards"][TASK]["scores"])


def test_a_ranking_is_replaced_whole_or_not_at_all(runs, tmp_path, monkeypatch, capfd):
    cache = tmp_path / "j.sqlite"
    names = _names(monkeypatch, lambda: _rank(runs, ["a", "b", "dog"], tmp_path / "warm", cache))
    out = tmp_path / "ranking"
    assert _rank(runs, ["a", "b"], out, cache) == 0
    old = _snapshot(out)
    capfd.readouterr()
    for name in names:
        with monkeypatch.context() as patch:
            _disk_full_at(patch, name)
            assert _rank(runs, ["a", "b", "dog"], out, cache) == 2, name
        err = capfd.readouterr().err
        assert f"cannot write {out / name}: No space left on device" in err, err
        assert f"nothing of the new ranking was put in place: {out} still holds its previous files, unchanged" in err
        assert _snapshot(out) == old, f"a full disk at {name} changed the ranking"
        with reading_ranking(out, "push-to-hub"):  # whole, and not refused: the old ranking can still be pushed
            pass
    first = names[0]
    for name in names:
        with monkeypatch.context() as patch:
            _swap_cut_at(patch, name)
            assert _rank(runs, ["a", "b", "dog"], out, cache) == 2, name
        err = capfd.readouterr().err
        if name == first:  # nothing was replaced yet
            assert "still holds its previous files, unchanged" in err and _snapshot(out) == old, err
            continue
        assert "was cut off while its files were replaced, so it mixes old and new files" in err, err
        for purpose in ("view", "push-to-hub"):
            with pytest.raises((MixedOutputError, run_state.folder_lock.FolderBusy)):
                with reading_ranking(out, purpose):
                    pass
        assert main(["view", str(out), "--out", str(tmp_path / "site")]) == 2
        assert "half-written" in capfd.readouterr().err
        assert _rank(runs, ["a", "b"], out, cache) == 0  # the same command makes it whole again
        assert _snapshot(out).keys() == old.keys() and _models(out) == ["a", "b"]
        capfd.readouterr()
    assert _rank(runs, ["a", "b", "dog"], out, cache) == 0 and _models(out) == ["a", "b", "dog"]
    atomic.check_files(out, "")


def test_a_really_full_disk_leaves_the_previous_ranking(runs, tmp_path, capfd):
    cache = tmp_path / "j.sqlite"
    assert _rank(runs, ["a", "b", "dog"], tmp_path / "warm", cache) == 0  # every judgment cached: no cache write
    out = tmp_path / "ranking"
    assert _rank(runs, ["a", "b"], out, cache) == 0
    old = _snapshot(out)
    capfd.readouterr()
    limit = max(len(data) for name, data in old.items() if name != "leaderboard.png") + 1
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))  # the old files fit, the bigger new ones do not
    try:
        code = _rank(runs, ["a", "b", "dog"], out, cache)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    err = capfd.readouterr().err
    assert code == 2 and "cannot write" in err and "File too large" in err, err
    assert "still holds its previous files, unchanged" in err
    assert _snapshot(out) == old and not [p for p in out.iterdir() if ".tmp" in p.name]
    assert main(["view", str(out), *(str(runs[name]) for name in ("a", "b", "dog")), "--out", str(tmp_path / "site")]) == 0


def test_a_runs_results_and_charts_are_replaced_whole_or_not_at_all(server, data_dir, tmp_path, monkeypatch,
                                                                    capfd):
    out = tmp_path / "run"
    assert main(openai_run_argv(server, data_dir, out)) == 0
    rescore = ["run", "--from-outputs", str(out)]  # writes results.json and its charts anew, in place
    names = _names(monkeypatch, lambda: main(rescore))
    old = _snapshot(out)
    made = names
    assert {"results.json", "results.png", atomic.MANIFEST} <= set(made)
    capfd.readouterr()
    for name in made:
        with monkeypatch.context() as patch:
            _disk_full_at(patch, name)
            assert main(rescore) == 2, name
        err = capfd.readouterr().err
        assert f"cannot write {out / name}" in err and f"{out} still holds its previous files, unchanged" in err
        assert _snapshot(out) == old
        with run_state.read_run_folder(out, "publish"):
            pass
    # each re-score's results.json differs from the last (its start time), so a cut swap leaves two outputs mixed
    stamps = (f"2026-11-28T00:00:{second:02d}+00:00" for second in range(60))
    monkeypatch.setattr(rescore_module, "utc_now", lambda: next(stamps))
    for name in made[1:]:
        with monkeypatch.context() as patch:
            _swap_cut_at(patch, name)
            assert main(rescore) == 2, name
        assert "mixes old and new files" in capfd.readouterr().err
        with pytest.raises(MixedOutputError, match=r"mixes two outputs.*hallubench run --from-outputs"):
            with run_state.read_run_folder(out, "publish"):
                pass
        for argv in (["publish", str(out), "--repo", "me/x", "--allow-mini-data", "--allow-partial"],
                     ["rank", str(out), f"other={out}", "--output-dir", str(tmp_path / "ranking")]):
            assert main(argv) == 2 and "mixes two outputs" in capfd.readouterr().err
        assert main(rescore) == 0
        with run_state.read_run_folder(out, "publish"):
            pass


def _site_files(site):
    return {path.relative_to(site): path.read_bytes() for path in site.rglob("*") if path.is_file()}


def test_the_site_is_replaced_whole_or_not_at_all(runs, tmp_path, monkeypatch, capfd):
    ranking = tmp_path / "ranking"
    assert _rank(runs, ["a", "b"], ranking, tmp_path / "j.sqlite") == 0
    site, argv = tmp_path / "site", ["view", str(ranking), str(runs["a"]), str(runs["b"]), "--out", str(tmp_path / "site")]
    written, write_text = [], Path.write_text

    def spy(path, *args, **kwargs):
        written.append(path.name)
        return write_text(path, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Path, "write_text", spy)
        assert main(argv) == 0
    old = _site_files(site)
    assert {"index.html", "items.js"} <= set(written)
    capfd.readouterr()
    for page in dict.fromkeys(written):  # every file the site writes, in turn
        def full(path, *args, page=page, **kwargs):
            if path.name == page:
                raise OSError(errno.ENOSPC, "No space left on device")
            return write_text(path, *args, **kwargs)

        with monkeypatch.context() as patch:
            patch.setattr(Path, "write_text", full)
            assert main(argv) == 2, page
        err = capfd.readouterr().err
        assert f"cannot write {site}: No space left on device" in err and f"{site} is as it was" in err, err
        assert _site_files(site) == old, f"a full disk at {page} changed the site"
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []
