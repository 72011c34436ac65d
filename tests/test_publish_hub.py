"""`hallubench publish` against a test double of the Hub's HTTP API (huggingface_hub.set_client_factory
with an httpx2.MockTransport): what is sent (files, parsed contents, eval results), and that the token
only ever travels in the Authorization header.

The run folder is made by the real harness (`hallubench run`) on the mini cmm and mhalubench datasets,
with a scripted chat model test double that answers yes, no, fails once and answers unparseably once.
"""
import base64
import io
import itertools
import json
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx2
import pyarrow.parquet as pq
import pytest
import yaml
from huggingface_hub import constants, parse_eval_result_entries, set_client_factory
from huggingface_hub.utils._http import default_client_factory

from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.harness.results_schema import Results
from hallubench.harness.runner import write_results
from hallubench.models import GenerationError, TextPart

TOKEN = "hf_TestDoubleSecret0123456789abcdefXYZ"
MODEL = "org/some-model"
REPO = "me/some-model-hallubench"
FOLDER = "org--some-model"  # the model's folder in the results repo
BENCHMARK = "org/cmm-bench"  # a pushed `hallubench build cmm` folder, with its eval.yaml
CMM_SCRIPT = ("Yes.", "No", GenerationError, "I cannot tell")


class ChatModelTestDouble:
    """Scripted chat model: cmm probes get CMM_SCRIPT in turn (GenerationError is raised), captions are fixed."""

    name = "chat-model-test-double"
    fingerprint = "test-double-v1"
    accepts = frozenset({"image", "video", "audio"})

    def __init__(self, model: str):
        self.cmm_answers = itertools.cycle(CMM_SCRIPT)

    def generate(self, conversations, settings, seeds=None):
        outputs = []
        for conversation in conversations:
            text = " ".join(p.text for m in conversation for p in m.content if isinstance(p, TextPart))
            answer = next(self.cmm_answers) if "yes or no" in text else "A red circle on black."
            if answer is GenerationError:
                raise GenerationError("test double: scripted failure")
            outputs.append([answer] * settings.n)
        return outputs


class HubTestDouble:
    """Stands in for huggingface.co: records every request and answers repo creation, README YAML
    validation, preupload (every file "regular", so contents travel base64 in the commit) and commit."""

    def __init__(self, models=(MODEL,), refuse_commit: str | None = None):
        self.repos = {("model", m) for m in models}
        self.refuse_commit = refuse_commit  # answer the dataset commit with 403 and this error text
        self.requests: list[httpx2.Request] = []
        self.library_requests: list[httpx2.Request] = []
        self.commits: list[dict] = []
        self.unexpected: list[str] = []
        self.files: dict[tuple[str, str], dict[str, bytes]] = {}  # (kind, repo) -> what its commits hold
        self.on_commit = None  # called with (kind, repo) when a commit arrives, before it is answered

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        path, body = request.url.path, request.content
        if path == "/api/agent-harnesses":  # huggingface_hub's own daily user-agent registry fetch, no token
            self.library_requests.append(request)
            return httpx2.Response(404)
        self.requests.append(request)
        if request.method == "POST" and path == "/api/repos/create":
            payload = json.loads(body)
            repo = (payload["type"], f"{payload['organization']}/{payload['name']}")
            status = 409 if repo in self.repos else 200
            self.repos.add(repo)
            return httpx2.Response(status, json={"url": f"https://huggingface.co/datasets/{repo[1]}"})
        if request.method == "POST" and path == "/api/validate-yaml":
            front = json.loads(body)["content"].split("---\n")[1]
            ok = isinstance(yaml.safe_load(front), dict)
            return httpx2.Response(200 if ok else 400, json={"errors": [] if ok else [{"message": "bad"}]})
        listing = re.fullmatch(r"/api/(model|dataset)s/([^/]+/[^/]+)/tree/main", path)
        if request.method == "GET" and listing and listing.groups() in self.repos:
            held = self.files.get(listing.groups(), {})
            return httpx2.Response(200, json=[{"type": "file", "path": p, "size": len(d), "oid": "0" * 40}
                                              for p, d in sorted(held.items())])
        match = re.fullmatch(r"/api/(model|dataset)s/([^/]+/[^/]+)/(preupload|commit)/main", path)
        if request.method == "POST" and match:
            kind, repo_id, action = match.groups()
            if (kind, repo_id) not in self.repos:
                return httpx2.Response(404, headers={"X-Error-Code": "RepoNotFound"},
                                       json={"error": "Repository not found"})
            if action == "preupload":
                files = [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None}
                         for f in json.loads(body)["files"]]
                return httpx2.Response(200, json={"files": files})
            if self.refuse_commit is not None:
                return httpx2.Response(403, json={"error": self.refuse_commit})
            return self._commit(kind, repo_id, request)
        self.unexpected.append(f"{request.method} {request.url}")
        return httpx2.Response(404, json={"error": "not in the Hub test double"})

    def _commit(self, kind: str, repo_id: str, request: httpx2.Request) -> httpx2.Response:
        if self.on_commit:
            self.on_commit(kind, repo_id)
        lines = [json.loads(line) for line in request.content.splitlines()]
        files = {line["value"]["path"]: base64.b64decode(line["value"]["content"])
                 for line in lines if line["key"] == "file"}
        create_pr = request.url.params.get("create_pr") == "1"
        self.commits.append({"kind": kind, "repo": repo_id, "create_pr": create_pr, "header": lines[0]["value"],
                             "files": files, "keys": [line["key"] for line in lines]})
        if not create_pr:
            self.files.setdefault((kind, repo_id), {}).update(files)
        prefix = "datasets/" if kind == "dataset" else ""
        return httpx2.Response(200, json={
            "commitUrl": f"https://huggingface.co/{prefix}{repo_id}/commit/{'ab' * 20}", "commitOid": "ab" * 20,
            "pullRequestUrl": f"https://huggingface.co/{prefix}{repo_id}/discussions/1" if create_pr else None})


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from hallubench import models
    from hallubench.builders import build
    from hallubench.builders.mini import make_release

    root = tmp_path_factory.mktemp("publish")
    for name in ("cmm", "mhalubench"):
        build(name, make_release(name, root / "releases" / name), root / "datasets" / name)
    out = root / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(models.MODELS, "test_double", ChatModelTestDouble)
        assert main(["run", "--model", "test_double", "--model-args", f"pretrained={MODEL}",
                     "--data-dir", str(root / "datasets"), "--output-dir", str(out), "--tasks", "cmm,mhalubench",
                     "--limit", "4", "--num-samples", "2", "--num-frames", "2"]) == 0
    return out


@pytest.fixture
def hub(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the real Hub is never reachable; only the double answers
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-login-token"))
    double = HubTestDouble()
    set_client_factory(lambda: httpx2.Client(transport=httpx2.MockTransport(double)))
    yield double
    set_client_factory(default_client_factory)


def _results(run_dir: Path) -> Results:
    return Results.from_dict(json.loads((run_dir / "results.json").read_text()))


def _assert_token_hidden(hub, run_dir, *texts):
    for request in hub.requests:
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        assert TOKEN not in str(request.url) and TOKEN.encode() not in request.content
        assert all(TOKEN not in v for k, v in request.headers.items() if k != "authorization")
    for request in hub.library_requests:
        assert TOKEN not in str(request.url) and TOKEN not in str(request.headers)
    for text in texts:
        assert TOKEN not in text
    for path in Path(run_dir).rglob("*"):
        assert path.is_dir() or TOKEN.encode() not in path.read_bytes(), path


def test_run_folder_has_failed_and_unparsed_samples(run_dir):
    cmm = _results(run_dir).tasks["cmm"]
    assert (cmm.n_selected, cmm.n_errors, cmm.n_unparsed) == (4, 1, 1)


def test_publish_sends_results_samples_card_and_eval_results(run_dir, hub, monkeypatch, capfd, caplog, tmp_path):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="huggingface_hub")
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    assert main(["publish", str(run_dir), "--repo", REPO, "--benchmark-ids", f"cmm={BENCHMARK}"]) == 0
    out, err = capfd.readouterr()

    calls = [(r.method, r.url.path, r.url.params.get("create_pr")) for r in hub.requests]
    assert calls == [("POST", "/api/repos/create", None), ("GET", f"/api/datasets/{REPO}/tree/main", None),
                     ("POST", "/api/validate-yaml", None),
                     ("POST", f"/api/datasets/{REPO}/preupload/main", None),
                     ("POST", f"/api/datasets/{REPO}/commit/main", None),
                     ("POST", f"/api/models/{MODEL}/preupload/main", "1"),
                     ("POST", f"/api/models/{MODEL}/commit/main", "1")]
    assert not hub.unexpected
    assert json.loads(hub.requests[0].content) == {"name": REPO.split("/")[1], "organization": "me", "type": "dataset"}

    dataset, model = hub.commits
    assert (dataset["repo"], dataset["kind"], dataset["create_pr"]) == (REPO, "dataset", False)
    files = dataset["files"]
    assert set(files) == {"README.md", *(f"{FOLDER}/{name}" for name in ("results.json", "results.png",
                                                                        "samples/cmm.parquet", "samples/mhalubench.parquet"))}
    assert files[f"{FOLDER}/results.json"] == (run_dir / "results.json").read_bytes()
    assert files[f"{FOLDER}/results.png"] == (run_dir / "results.png").read_bytes()

    records, _ = store.read_jsonl(run_dir / "samples.jsonl")
    for task in ("cmm", "mhalubench"):
        rows = pq.read_table(io.BytesIO(files[f"{FOLDER}/samples/{task}.parquet"])).to_pylist()
        assert rows == [r for r in records if r["task"] == task]
    mhalu = pq.read_table(io.BytesIO(files[f"{FOLDER}/samples/mhalubench.parquet"])).to_pylist()
    assert all(len(row["samples"]) == 2 and row["media"]["image"]["path"] for row in mhalu)

    # The card's YAML configs load each task's samples with plain `datasets`.
    import datasets

    for path, data in files.items():
        (tmp_path / "repo" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "repo" / path).write_bytes(data)
    loaded = datasets.load_dataset(str(tmp_path / "repo"), f"{FOLDER}--cmm", split="test")
    assert loaded["id"] == [r["id"] for r in records if r["task"] == "cmm"]
    assert sum(e is not None for e in loaded["error"]) == 1

    card = files["README.md"].decode()
    results = _results(run_dir)
    metrics = {k: v for k, v in results.tasks["cmm"].metrics.items() if isinstance(v, float) and not k.endswith("_stderr")}
    assert metrics
    assert "| task | metric | value | n | unparsed | errors |" in card
    for name, value in metrics.items():
        stderr = results.tasks["cmm"].metrics.get(f"{name}_stderr")
        shown = f"{value:.4f}" + ("" if stderr is None else f" ± {stderr:.4f}")
        assert f"| cmm | {name} | {shown} | 4 | 1 | 1 |" in card
    assert "| mhalubench | - | scored by crosscheck" in card
    assert f"![metrics per task and group]({FOLDER}/results.png)" in card
    assert f"`{MODEL}`" in card and results.environment.git_hash in card
    assert f"hallubench {results.environment.packages['hallubench']}" in card
    assert "hallubench run --model test_double --model-args pretrained=org/some-model --tasks cmm,mhalubench" in card
    assert "--limit 4" in card and "--output-dir" not in card

    assert (model["repo"], model["kind"], model["create_pr"]) == (MODEL, "model", True)
    assert set(model["files"]) == {".eval_results/hallubench_cmm.yaml"}
    entries = parse_eval_result_entries(yaml.safe_load(model["files"][".eval_results/hallubench_cmm.yaml"]))
    # only the scores, each under a task id the benchmark's eval.yaml defines, on the benchmark dataset
    assert {e.task_id: e.value for e in entries} == {f"cmm_{name}": metrics[name] for name in ("pa", "hr", "accuracy")}
    assert {(e.dataset_id, e.source_url) for e in entries} == {(BENCHMARK, f"https://huggingface.co/datasets/{REPO}")}
    n_total = results.tasks["cmm"].n_total
    assert n_total > 4  # --limit 4: the entries must say they score a subset
    assert all(e.date == results.run.finished and f"n=4 of {n_total} (a subset), unparsed=1, errors=1" in e.notes
               for e in entries)

    assert f"https://huggingface.co/{MODEL}/discussions/1" in out
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before
    _assert_token_hidden(hub, run_dir, out, err, caplog.text)


def test_local_model_path_skips_model_results_with_a_note(run_dir, hub, capfd, tmp_path):
    local = tmp_path / "run"
    shutil.copytree(run_dir, local)
    results = _results(local)
    results.model.args = {"pretrained": str(tmp_path)}  # a checkpoint folder, not a Hub id
    write_results(results, local)
    assert main(["publish", str(local), "--repo", REPO, "--token", TOKEN, "--private"]) == 0
    out, err = capfd.readouterr()
    assert [c["kind"] for c in hub.commits] == ["dataset"]
    assert json.loads(hub.requests[0].content)["visibility"] == "private"
    assert "model results skipped" in out and "--model-id" in out
    _assert_token_hidden(hub, local, out, err)


def test_missing_model_repo_is_an_error_naming_it_and_hiding_the_token(run_dir, hub, capfd):
    assert main(["publish", str(run_dir), "--repo", REPO, "--token", TOKEN, "--model-id", "org/not-there",
                 "--benchmark-ids", f"cmm={BENCHMARK}"]) == 2
    out, err = capfd.readouterr()
    assert "org/not-there" in err and f"published at https://huggingface.co/datasets/{REPO}" in err
    assert [c["kind"] for c in hub.commits] == ["dataset"]
    _assert_token_hidden(hub, run_dir, out, err)


def test_hub_error_text_echoing_the_token_is_masked(run_dir, hub, capfd):
    hub.refuse_commit = f"token {TOKEN} has no write access to {REPO}"
    assert main(["publish", str(run_dir), "--repo", REPO, "--token", TOKEN]) == 2
    out, err = capfd.readouterr()
    assert f"publishing {run_dir} to dataset repo {REPO}" in err and "token *** has no write access" in err
    _assert_token_hidden(hub, run_dir, out, err)


def test_folder_without_results_json_is_a_clear_error(hub, tmp_path, capfd):
    assert main(["publish", str(tmp_path), "--repo", REPO, "--token", TOKEN]) == 2
    err = capfd.readouterr().err
    assert str(tmp_path) in err and "results.json" in err and "hallubench run" in err
    assert hub.requests == [] and not any(tmp_path.iterdir())  # no lock file left in a folder no run wrote


def test_no_token_is_a_clear_error_before_any_request(run_dir, hub, capfd):
    assert main(["publish", str(run_dir), "--repo", REPO]) == 2
    assert "HF_TOKEN" in capfd.readouterr().err and hub.requests == []


def test_push_after_run_publishes_the_rescored_folder(run_dir, hub, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    rescored = tmp_path / "rescored"
    assert main(["run", "--from-outputs", str(run_dir), "--output-dir", str(rescored), "--push-to-hub", REPO]) == 0
    files = hub.commits[0]["files"]
    assert files[f"{FOLDER}/results.json"] == (rescored / "results.json").read_bytes()
    assert pq.read_table(io.BytesIO(files[f"{FOLDER}/samples/cmm.parquet"])).num_rows == 4


def test_a_second_model_joins_the_first_in_the_results_repo(run_dir, hub, monkeypatch, tmp_path, capfd):
    import datasets

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    other = tmp_path / "other"
    shutil.copytree(run_dir, other)
    results = _results(other)
    results.model.args = {**results.model.args, "pretrained": "org/other-model"}
    write_results(results, other)
    hub.repos.add(("model", "org/other-model"))
    for folder in (run_dir, other):
        assert main(["publish", str(folder), "--repo", REPO, "--benchmark-ids", f"cmm={BENCHMARK}"]) == 0
    first, second = [c for c in hub.commits if c["kind"] == "dataset"]
    assert not set(second["files"]) & (set(first["files"]) - {"README.md"})  # nothing of the first is overwritten
    card = second["files"]["README.md"].decode()
    configs = {c["config_name"]: c["data_files"][0]["path"] for c in yaml.safe_load(card.split("---\n")[1])["configs"]}
    assert configs == {f"{m}--{t}": f"{m}/samples/{t}.parquet"
                       for m in (FOLDER, "org--other-model") for t in ("cmm", "mhalubench")}
    repo = tmp_path / "repo"  # the repo after both commits, read with plain datasets
    for path, data in {**first["files"], **second["files"]}.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes(data)
    for name in configs:
        assert datasets.load_dataset(str(repo), name, split="test", cache_dir=str(tmp_path / "c")).num_rows == 4
    models = [c for c in hub.commits if c["kind"] == "model"]
    assert [c["repo"] for c in models] == [MODEL, "org/other-model"]


def _second_process(*argv) -> tuple[int, str]:
    """`hallubench ARGV` in another process, offline and without a token: (exit code, stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "HF_TOKEN"}
    done = subprocess.run([sys.executable, "-m", "hallubench", *map(str, argv)], capture_output=True, text=True,
                          env={**env, "HF_HUB_OFFLINE": "1", "HF_TOKEN_PATH": os.devnull}, timeout=300)
    return done.returncode, done.stderr


@pytest.mark.slow  # starts second processes
def test_a_writer_or_a_second_publish_starting_mid_publish_is_refused_naming_it(run_dir, hub, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    folder = tmp_path / "run"
    shutil.copytree(run_dir, folder)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    refused = {}

    def contend(kind, repo):  # while the results commit is on its way
        refused["re-score"] = _second_process("run", "--from-outputs", folder)
        refused["publish"] = _second_process("publish", folder, "--repo", REPO)

    hub.on_commit = contend
    assert main(["publish", str(folder), "--repo", REPO, "--no-model-results"]) == 0
    assert set(refused) == {"re-score", "publish"}
    for code, err in refused.values():
        assert code == 2 and f"{folder} is being uploaded by hallubench publish pid {os.getpid()}" in err, err
    assert len(hub.commits) == 1
    # Nothing changed: the refused re-score wrote no results.json, and the lock's record is empty again.
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before
