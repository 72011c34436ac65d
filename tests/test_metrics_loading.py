"""Bare-name loading after `hallubench metrics install` (or the first use of hallubench), and the Space layout /
upload of `metrics push`, to a test double and to the stand-in Hub, from which evaluate.load("ORG/<name>") loads."""
import importlib.metadata
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import evaluate
import pytest

from hallubench.cli.main import main
from hallubench.metrics import install as metrics

MINE = ("pa_hr", "cchall", "mhalubench")


def test_available_lists_every_metric_folder():
    found = metrics.available()
    assert set(MINE) <= set(found)
    expected = {p.name for p in metrics.METRICS_DIR.iterdir() if (p / f"{p.name}.py").is_file()}
    assert set(found) == expected
    with pytest.raises(ValueError, match="unknown metric 'nope'.*; valid metrics: .*pa_hr"):
        metrics.script("nope")


def test_install_writes_evaluates_cache_layout_and_is_idempotent(tmp_path):
    first = metrics.install(tmp_path)
    assert {item.name for item in first} == set(metrics.available()) and all(item.changed for item in first)
    for item in first:
        module_dir = tmp_path / "evaluate_modules" / "metrics" / f"evaluate-metric--{item.name}"
        assert item.path.parent.parent == module_dir and len(item.path.parent.name) == 64
        assert item.path.read_bytes() == metrics.script(item.name).read_bytes()
        for package in (tmp_path / "evaluate_modules", module_dir.parent, module_dir, item.path.parent):
            assert (package / "__init__.py").is_file()
    stale = first[0].path.parent.parent / ("0" * 64)
    stale.mkdir()
    second = metrics.install(tmp_path)
    assert [(i.name, i.path, i.changed) for i in second] == [(i.name, i.path, False) for i in first]
    assert not stale.exists()  # evaluate takes the newest copy, so older ones must go


@pytest.mark.parametrize("name", list(metrics.available()))
def test_every_metric_is_one_self_contained_file(name):
    from evaluate.loading import get_imports

    relative = [imported for kind, imported, *_ in get_imports(str(metrics.script(name))) if kind != "library"]
    assert not relative, f"{name} imports {relative} relatively; evaluate copies only the one script"


def test_ensure_installed_replaces_another_version_and_then_does_nothing(tmp_path, monkeypatch):
    first = metrics.ensure_installed(tmp_path)
    assert {item.name for item in first} == set(metrics.available())
    assert metrics.ensure_installed(tmp_path) == []  # already this hallubench's copies: nothing written
    newer = tmp_path / "newer" / "pa_hr.py"
    newer.parent.mkdir()
    newer.write_text(metrics.script("pa_hr").read_text() + "\n# a newer release\n")
    packaged = metrics.available()
    monkeypatch.setattr(metrics, "available", lambda: {**packaged, "pa_hr": newer})  # a newer hallubench's folder
    changed = [item for item in metrics.ensure_installed(tmp_path) if item.changed]
    assert [item.name for item in changed] == ["pa_hr"] and changed[0].path.read_bytes() == newer.read_bytes()
    cached = [p for p in changed[0].path.parent.parent.iterdir() if p.is_dir()]
    assert cached == [changed[0].path.parent]  # the older copy is gone: evaluate would take the newest by mtime


def test_ensure_installed_on_a_read_only_cache_warns_and_goes_on(tmp_path, monkeypatch):
    def refuse(cache):
        raise PermissionError(13, "Permission denied", str(cache))

    monkeypatch.setattr(metrics, "install", refuse)
    with pytest.warns(UserWarning, match="hallubench metrics install"):
        assert metrics.ensure_installed(tmp_path / "ro") == []


LOAD_ALL = """
import doctest, json, sys
import evaluate
out = {}
for name in sys.argv[1:]:
    metric = evaluate.load(name)
    module = sys.modules[type(metric).__module__]
    failed, attempted = doctest.testmod(module, extraglobs={"evaluate": evaluate})
    out[name] = {"file": module.__file__, "class": type(metric).__name__, "failed": failed, "attempted": attempted}
out["pa_hr_accuracy"] = evaluate.load("pa_hr").compute(predictions=["Yes.", "no"], references=["yes", "yes"])["accuracy"]
print(json.dumps(out))
"""


def test_bare_name_load_offline_from_another_directory(tmp_path):
    cache, elsewhere = tmp_path / "modules", tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert main(["metrics", "install", "--modules-cache", str(cache)]) == 0
    # HF_EVALUATE_OFFLINE too: evaluate ignores HF_HUB_OFFLINE, and without it a network that swallows
    # connections makes each load wait minutes for the Hub (see hallubench.metrics).
    env = {**os.environ, "HF_MODULES_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", LOAD_ALL, *MINE], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for name in MINE:
        assert Path(out[name]["file"]).is_relative_to(cache / "evaluate_modules" / "metrics" / f"evaluate-metric--{name}")
        assert out[name]["attempted"] > 0 and out[name]["failed"] == 0, out[name]
    assert out["pa_hr_accuracy"] == 0.5


class FakeHubHandler(BaseHTTPRequestHandler):
    """Test double for the Hub: answers 404 (no such Space) to everything and records the paths asked for."""

    asked: list = []

    def do_HEAD(self):
        self.asked.append(self.path)
        self.send_response(404)
        self.end_headers()

    do_GET = do_HEAD

    def log_message(self, *args):
        pass


def test_bare_name_load_online_falls_back_to_the_installed_copy(tmp_path):
    """Online, evaluate first asks the Hub for evaluate-metric/pa_hr; the 404 sends it to the cache."""
    cache = tmp_path / "modules"
    metrics.install(cache)
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHubHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {**os.environ, "HF_MODULES_CACHE": str(cache), "HF_ENDPOINT": f"http://127.0.0.1:{server.server_port}",
           "HF_UPDATE_DOWNLOAD_COUNTS": "0", "HF_EVALUATE_OFFLINE": "0", "HF_HUB_OFFLINE": "0"}
    try:
        done = subprocess.run([sys.executable, "-c", LOAD_ALL, "pa_hr"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["pa_hr"]["failed"] == 0
    assert any("/spaces/evaluate-metric/pa_hr/" in path for path in FakeHubHandler.asked)


def test_list_and_install_cli(tmp_path, capsys):
    assert main(["metrics", "list"]) == 0
    listed = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(metrics.available())
    assert main(["metrics", "install", "--modules-cache", str(tmp_path)]) == 0
    assert main(["metrics", "install", "--modules-cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "pa_hr: installed at" in out and "pa_hr: up to date at" in out and str(tmp_path) in out


def test_push_dry_run_lays_out_an_evaluate_space(tmp_path, capsys):
    out_dir = tmp_path / "pa_hr-space"
    assert main(["metrics", "push", "pa_hr", "--repo", "someone/pa_hr", "--dry-run", "--out", str(tmp_path)]) == 0
    assert "not uploaded to someone/pa_hr" in capsys.readouterr().out
    assert [p.name for p in tmp_path.iterdir()] == ["pa_hr-space"]
    assert sorted(p.name for p in out_dir.iterdir()) == ["README.md", "app.py", "pa_hr.py", "requirements.txt"]
    card = (out_dir / "README.md").read_text()
    assert card.startswith("---\n") and "sdk: gradio" in card and "app_file: app.py" in card
    app = (out_dir / "app.py").read_text()
    compile(app, "app.py", "exec")
    assert "launch_gradio_widget(module)" in app and '"pa_hr.py"' in app
    assert f"evaluate=={evaluate.__version__}" in (out_dir / "requirements.txt").read_text().splitlines()


@pytest.mark.parametrize("name", list(metrics.available()))
def test_space_requirements_name_every_third_party_import(tmp_path, name):
    from evaluate.loading import get_imports

    folder = metrics.layout_space(name, tmp_path / name)
    required = {line.split("==")[0].split(">=")[0] for line in (folder / "requirements.txt").read_text().splitlines()}
    imported = {library for kind, library, *_ in get_imports(str(folder / f"{name}.py")) if kind == "library"}
    # numpy comes with evaluate; the standard library needs no line; pip names the distribution (sklearn: scikit-learn)
    distributions = importlib.metadata.packages_distributions()
    needed = {distributions.get(library, [library])[0] for library in imported - sys.stdlib_module_names - {"numpy"}}
    assert needed <= required


class FakeHfApi:
    """Test double for huggingface_hub.HfApi: records the calls and the uploaded folder's files."""

    def __init__(self, token=None):
        self.calls = []

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", repo_id, kwargs))
        return f"https://huggingface.co/spaces/{repo_id}"

    def upload_folder(self, *, repo_id, folder_path, **kwargs):
        files = {p.name: p.read_text() for p in Path(folder_path).iterdir()}
        self.calls.append(("upload_folder", repo_id, {**kwargs, "files": files}))


def test_push_creates_a_gradio_space_and_uploads_the_layout():
    api = FakeHfApi()
    url = metrics.push("cchall", "someone/cchall", api=api)
    assert url == "https://huggingface.co/spaces/someone/cchall"
    (create, repo, create_kwargs), (upload, upload_repo, upload_kwargs) = api.calls
    assert (create, repo, upload, upload_repo) == ("create_repo", "someone/cchall", "upload_folder", "someone/cchall")
    assert create_kwargs == {"repo_type": "space", "space_sdk": "gradio", "exist_ok": True}
    assert upload_kwargs["repo_type"] == "space"
    assert sorted(upload_kwargs["files"]) == ["README.md", "app.py", "cchall.py", "requirements.txt"]
    assert upload_kwargs["files"]["cchall.py"] == metrics.script("cchall").read_text()


def test_push_cli_uploads_through_hfapi(monkeypatch, capsys):
    import huggingface_hub

    made = []
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda token=None: made.append(FakeHfApi(token)) or made[-1])
    assert main(["metrics", "push", "mhalubench", "--repo", "someone/mhalubench"]) == 0
    assert [call[0] for call in made[0].calls] == ["create_repo", "upload_folder"]
    assert "uploaded mhalubench to https://huggingface.co/spaces/someone/mhalubench" in capsys.readouterr().out


def test_push_rejects_unknown_metric(capsys):
    with pytest.raises(SystemExit):
        main(["metrics", "push", "nope", "--repo", "someone/nope", "--dry-run"])
    assert "invalid choice: 'nope'" in capsys.readouterr().err


def test_push_repo_takes_exactly_one_metric(capsys):
    assert main(["metrics", "push", "--repo", "someone/x", "--dry-run"]) == 2
    assert "hallubench metrics: error: --repo names one Space" in capsys.readouterr().err


LOAD_FROM_SPACE = """
import json, sys
import evaluate
metric = evaluate.load(sys.argv[1])
print(json.dumps({"file": sys.modules[type(metric).__module__].__file__, "class": type(metric).__name__}))
"""


def test_push_namespace_publishes_every_metric_as_a_space_that_evaluate_loads_online(tmp_path):
    """`metrics push --namespace me` against the stand-in Hub, then evaluate.load("me/crosscheck") over HTTP
    in a fresh modules cache, as a community metric loads (no hallubench import in that process)."""
    from hub_server import StandInHub

    hub = StandInHub({})
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "home"), "HF_TOKEN": "hf_test",
           "HF_HUB_OFFLINE": "0", "HF_EVALUATE_OFFLINE": "0", "HF_UPDATE_DOWNLOAD_COUNTS": "0"}
    try:
        pushed = subprocess.run([sys.executable, "-m", "hallubench", "metrics", "push", "--namespace", "me"], env=env,
                                capture_output=True, text=True, timeout=300)
        assert pushed.returncode == 0, pushed.stderr
        assert set(hub.spaces) == {f"me/{name}" for name in metrics.available()}
        for name in metrics.available():
            files = hub.spaces[f"me/{name}"].files
            assert sorted(files) == sorted(["README.md", "app.py", f"{name}.py", "requirements.txt"])
            assert files[f"{name}.py"] == metrics.script(name).read_bytes()
            assert files["README.md"].startswith(b"---\n") and b"sdk: gradio" in files["README.md"]
            assert f'evaluate.load("me/{name}")' in pushed.stdout
        loaded = subprocess.run([sys.executable, "-c", LOAD_FROM_SPACE, "me/crosscheck"], cwd=tmp_path,
                                env={**env, "HF_MODULES_CACHE": str(tmp_path / "fresh-modules")},
                                capture_output=True, text=True, timeout=300)
    finally:
        hub.close()
    assert loaded.returncode == 0, loaded.stderr
    out = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert "me--crosscheck" in out["file"] and Path(out["file"]).is_relative_to(tmp_path / "fresh-modules")
    assert ("GET", "/spaces/me/crosscheck/resolve/main/crosscheck.py") in hub.requests
