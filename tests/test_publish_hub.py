"""`hallubench publish` against the stand-in Hub (tests/hub_server.py, a real HTTP server on 127.0.0.1 that takes
pushes and pull requests as the Hub does): what is committed (files, parsed contents, eval results with the
benchmark's revision), that publishing again updates the open PR, that the token only ever travels in the
Authorization header, and that every refusal comes before the first commit: nothing half-published.

The run folders are made by the real harness (`hallubench run`) on the mini cmm and mhalubench datasets, with a
scripted chat model test double that answers yes, no, fails once and answers unparseably once.
"""
import io
import itertools
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from huggingface_hub import parse_eval_result_entries

from hallubench.cli.main import main
from hallubench.harness.results_schema import Results
from hallubench.harness.runner import write_results
from hallubench.models import GenerationError, TextPart
from hub_server import Repo, StandInHub

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


def _run(datasets: Path, out: Path, *extra: str) -> Path:
    from hallubench import models

    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(models.MODELS, "test_double", ChatModelTestDouble)
        assert main(["run", "--model", "test_double", "--model-args", f"pretrained={MODEL}", "--data-dir", str(datasets),
                     "--output-dir", str(out), "--tasks", "cmm,mhalubench", "--num-samples", "2", "--num-frames", "2",
                     *extra]) == 0
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    from hallubench.builders import build
    from hallubench.builders.mini import make_release

    root = tmp_path_factory.mktemp("publish")
    for name in ("cmm", "mhalubench"):
        build(name, make_release(name, root / "releases" / name), root / "datasets" / name)
    return root / "datasets"


@pytest.fixture(scope="module")
def run_dir(built) -> Path:
    """A whole-benchmark run (no --limit) on local built folders."""
    return _run(built, built.parent / "run")


@pytest.fixture(scope="module")
def partial_dir(built) -> Path:
    return _run(built, built.parent / "partial", "--limit", "4")


@pytest.fixture
def hub(monkeypatch, tmp_path, built):
    """The stand-in Hub holding the model repo and the cmm benchmark (the built folder the runs read), as
    huggingface_hub's endpoint; no token anywhere but HF_TOKEN where a test sets it."""
    server = StandInHub({BENCHMARK: Repo.from_folder(built / "cmm"),
                         "org/mhalubench-bench": Repo.from_folder(built / "mhalubench")},
                        models={MODEL: Repo({"config.json": b"{}"})})
    server.serve_in_process(monkeypatch, tmp_path)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    yield server
    server.close()


def _results(run_dir: Path) -> Results:
    return Results.from_dict(json.loads((run_dir / "results.json").read_text()))


def _copy(run_dir: Path, to: Path, **model_args) -> Path:
    shutil.copytree(run_dir, to)
    if model_args:
        results = _results(to)
        results.model.args = {**results.model.args, **model_args}
        write_results(results, to)
    return to


def _assert_token_hidden(hub, run_dir, *texts):
    for call in hub.seen:
        assert call["headers"]["authorization"] == f"Bearer {TOKEN}", call["url"]
        assert TOKEN not in call["url"] and TOKEN.encode() not in call["body"]
        assert all(TOKEN not in v for k, v in call["headers"].items() if k != "authorization")
    for call in hub.library_calls:
        assert TOKEN not in str(call)
    for text in texts:
        assert TOKEN not in text
    for path in Path(run_dir).rglob("*"):
        assert path.is_dir() or TOKEN.encode() not in path.read_bytes(), path


def _assert_nothing_published(hub):
    assert hub.commits == [] and REPO not in hub.repos and not hub.pulls


def test_run_folder_has_failed_and_unparsed_samples_and_records_its_data(run_dir, built):
    from hallubench.harness.dataset_source import data_fingerprint
    from hallubench.benchmarks import get_task

    cmm = _results(run_dir).tasks["cmm"]
    assert cmm.n_selected == cmm.n_total > 4 and (cmm.n_errors, cmm.n_unparsed) == (cmm.n_total // 4, cmm.n_total // 4)
    assert cmm.dataset == {"id": None, "revision": data_fingerprint(built / "cmm", get_task("cmm"))}
    assert cmm.dataset["revision"].startswith("sha256:")


def test_publish_commits_results_samples_card_and_eval_results_at_the_benchmark_revision(
        run_dir, hub, monkeypatch, capfd, caplog):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    caplog.set_level(logging.DEBUG)
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    assert main(["publish", str(run_dir), "--repo", REPO, "--benchmark-ids", f"cmm={BENCHMARK}"]) == 0
    out, err = capfd.readouterr()

    order = [path for _, path in hub.requests]  # the model and benchmark repos were checked before any write
    first_write = order.index("/api/repos/create")
    assert order.index(f"/api/models/{MODEL}") < first_write and order.index(f"/api/datasets/{BENCHMARK}") < first_write
    dataset, model = hub.commits
    assert (dataset["kind"], dataset["repo"], dataset["revision"]) == ("dataset", REPO, "main")
    results = _results(run_dir)
    assert dataset["files"][f"{FOLDER}/results.json"] == (run_dir / "results.json").read_bytes()
    assert set(dataset["files"]) == {f"{FOLDER}/results.json", f"{FOLDER}/results.png", "README.md",
                                     f"{FOLDER}/samples/cmm.parquet", f"{FOLDER}/samples/mhalubench.parquet"}
    cmm = pq.read_table(io.BytesIO(dataset["files"][f"{FOLDER}/samples/cmm.parquet"])).to_pylist()
    assert len(cmm) == results.tasks["cmm"].n_total and sum(r["error"] is not None for r in cmm) == results.tasks["cmm"].n_errors
    card = dataset["files"]["README.md"].decode()
    assert f"# hallubench results: {MODEL}" in card and "partial" not in card.lower()
    assert f"- cmm: a local folder at `{results.tasks['cmm'].dataset['revision']}`" in card

    assert (model["kind"], model["repo"], model["create_pr"]) == ("model", MODEL, True)
    assert set(model["files"]) == {".eval_results/hallubench_cmm.yaml"}
    raw = yaml.safe_load(model["files"][".eval_results/hallubench_cmm.yaml"])
    entries = parse_eval_result_entries(raw)
    assert {e.task_id: e.value for e in entries} == {f"cmm_{n}": results.tasks["cmm"].metrics[n]
                                                     for n in ("pa", "hr", "accuracy")}
    # the run read a local folder holding the very data files of the benchmark repo: entries name its commit
    assert {(e.dataset_id, e.dataset_revision) for e in entries} == {(BENCHMARK, hub.repos[BENCHMARK].commit)}
    assert all(entry["dataset"]["revision"] == hub.repos[BENCHMARK].commit for entry in raw)
    assert {e.source_url for e in entries} == {f"{hub.url}/datasets/{REPO}"}
    assert f"{hub.url}/{MODEL}/discussions/1" in out
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before
    _assert_token_hidden(hub, run_dir, out, err, caplog.text)


def test_publishing_again_commits_to_the_open_pull_request(run_dir, hub, monkeypatch, capfd):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    args = ["publish", str(run_dir), "--repo", REPO, "--benchmark-ids", f"cmm={BENCHMARK}"]
    assert main(args) == 0
    hub.pulls[("model", MODEL)][0]["repo"].files[".eval_results/hallubench_gone.yaml"] = b"[]"  # an older task's
    assert main(args) == 0
    pulls = hub.pulls[("model", MODEL)]
    assert len(pulls) == 1
    second = [c for c in hub.commits if c["kind"] == "model"][1]
    assert (second["revision"], second["create_pr"]) == ("refs/pr/1", False)
    assert second["deleted"] == [".eval_results/hallubench_gone.yaml"]
    assert set(pulls[0]["repo"].files) == {"config.json", ".eval_results/hallubench_cmm.yaml"}
    assert capfd.readouterr().out.count(f"{hub.url}/{MODEL}/discussions/1") == 2
    pulls[0]["status"] = "merged"  # a merged PR is not reopened: the next publish opens a new one
    assert main(args) == 0
    assert [p["num"] for p in hub.pulls[("model", MODEL)]] == [1, 2]


def test_a_run_reading_the_hub_records_repo_and_commit_and_publishes_that_revision(built, hub, monkeypatch, tmp_path):
    out = _run(BENCHMARK, tmp_path / "from-hub", "--tasks", "cmm")
    sha = hub.repos[BENCHMARK].commit
    assert _results(out).tasks["cmm"].dataset == {"id": BENCHMARK, "revision": sha}
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert main(["publish", str(out), "--repo", REPO, "--benchmark-ids", f"cmm={BENCHMARK}"]) == 0
    model = [c for c in hub.commits if c["kind"] == "model"][0]
    entries = parse_eval_result_entries(yaml.safe_load(model["files"][".eval_results/hallubench_cmm.yaml"]))
    assert {e.dataset_revision for e in entries} == {sha}


def _other_data(repo: Repo) -> Repo:
    """The benchmark repo with one data file of other content (another fingerprint in its name and the card)."""
    files = dict(repo.files)
    old = next(p for p in files if p.startswith("data/") and p.endswith(".parquet"))
    new = old.rpartition("-")[0] + "-0123456789abcdef.parquet"
    files[new] = files.pop(old) + b"\0"
    files["README.md"] = files["README.md"].replace(old.encode(), new.encode())
    return Repo(files)


BAD_BENCHMARKS = {
    "no such repo": ("cmm=org/not-there", "no Hub dataset repo org/not-there"),
    "a model repo": (f"cmm={MODEL}", f"no Hub dataset repo {MODEL}"),
    "a path": ("cmm=../../etc", "'../../etc' is not a Hub repo id"),
    "not a benchmark of the run": ("cchall=org/cchall", "the run has no benchmark 'cchall'"),
    "no eval.yaml": ("cmm=org/plain", "the dataset repo has no eval.yaml"),
    "another framework's eval.yaml": ("cmm=org/lighteval", "its eval.yaml is not hallubench's"),
    "another benchmark": ("cmm=org/mhalubench-bench", "its eval.yaml defines no task cmm_accuracy, cmm_hr, cmm_pa"),
    "other data": ("cmm=org/cmm-other", "whose data files are not those of org/cmm-other"),
}


@pytest.mark.parametrize("case", sorted(BAD_BENCHMARKS))
def test_a_bad_benchmark_id_is_refused_before_anything_is_committed(case, run_dir, hub, monkeypatch, capfd):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    hub.repos["org/plain"] = Repo({"README.md": b"---\nlicense: mit\n---\n"})
    hub.repos["org/lighteval"] = Repo({"eval.yaml": b"name: x\nevaluation_framework: lighteval\ntasks: []\n"})
    hub.repos["org/cmm-other"] = _other_data(hub.repos[BENCHMARK])
    flag, message = BAD_BENCHMARKS[case]
    assert main(["publish", str(run_dir), "--repo", REPO, "--benchmark-ids", flag]) == 2
    out, err = capfd.readouterr()
    assert message in err and "Traceback" not in err, err
    _assert_nothing_published(hub)
    _assert_token_hidden(hub, run_dir, out, err)


@pytest.mark.parametrize("model_id, message", [
    ("bad id", "--model-id 'bad id' is not a Hub repo id"),
    ("../../etc", "--model-id '../../etc' is not a Hub repo id"),
    ("org/not-there", "no Hub model repo org/not-there"),
])
def test_a_bad_model_id_is_refused_before_the_results_dataset_is_committed(model_id, message, run_dir, hub,
                                                                           monkeypatch, capfd):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert main(["publish", str(run_dir), "--repo", REPO, "--model-id", model_id,
                 "--benchmark-ids", f"cmm={BENCHMARK}"]) == 2
    err = capfd.readouterr().err
    assert message in err and "Traceback" not in err, err
    _assert_nothing_published(hub)


def test_a_bad_results_repo_id_is_refused_before_any_request(run_dir, hub, monkeypatch, capfd):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert main(["publish", str(run_dir), "--repo", "me/../x"]) == 2
    assert "--repo 'me/../x' is not a Hub repo id" in capfd.readouterr().err and hub.requests == []


def test_a_partial_run_is_refused_unless_allowed_then_marked_and_kept_off_the_model_repo(partial_dir, hub,
                                                                                         monkeypatch, capfd):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    args = ["publish", str(partial_dir), "--repo", REPO, "--benchmark-ids", f"cmm={BENCHMARK}"]
    assert main(args) == 2
    err = capfd.readouterr().err
    assert "--limit 4" in err and "--allow-partial" in err and "scored 4 of its" in err
    _assert_nothing_published(hub)
    assert main(args + ["--allow-partial"]) == 0
    out = capfd.readouterr().out
    assert [c["kind"] for c in hub.commits] == ["dataset"] and "a partial run's scores" in out
    card = hub.commits[0]["files"]["README.md"].decode()
    assert "(partial run)" in card and "> **Partial run.** it ran with --limit 4" in card
    assert "hallubench-partial-run" in yaml.safe_load(card.split("---\n")[1])["tags"]


def test_a_run_folder_missing_samples_is_refused(run_dir, hub, monkeypatch, capfd, tmp_path):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    folder = _copy(run_dir, tmp_path / "run")
    samples = next(folder.glob("samples*.jsonl"))
    lines = samples.read_text().splitlines(keepends=True)
    samples.write_text("".join(lines[:-1]))
    assert main(["publish", str(folder), "--repo", REPO]) == 2
    err = capfd.readouterr().err  # the one run-folder check (harness/run_state.py) refuses it before publish's own
    assert "records of it" in err and "--from-outputs" in err
    _assert_nothing_published(hub)


def test_two_checkpoints_sharing_a_basename_get_two_folders_and_a_taken_folder_is_refused(run_dir, hub, monkeypatch,
                                                                                          capfd, tmp_path):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    first = _copy(run_dir, tmp_path / "a", pretrained="/ckpt/qwen2_5_omni")
    second = _copy(run_dir, tmp_path / "b", pretrained="/ckpt/seed2/qwen2_5_omni")
    for folder in (first, second):
        assert main(["publish", str(folder), "--repo", REPO]) == 0
    assert {p.partition("/")[0] for p in hub.repos[REPO].files if "/" in p} == {"ckpt--qwen2_5_omni",
                                                                                "ckpt--seed2--qwen2_5_omni"}
    held = dict(hub.repos[REPO].files)
    # --model-id names the folder: a second checkpoint under the first one's name is refused, nothing replaced
    assert main(["publish", str(first), "--repo", REPO, "--model-id", "org/omni", "--no-model-results"]) == 0
    assert main(["publish", str(second), "--repo", REPO, "--model-id", "org/omni", "--no-model-results"]) == 2
    err = capfd.readouterr().err
    assert "folder org--omni/ already holds the results of '/ckpt/qwen2_5_omni'" in err and "--model-id" in err
    assert hub.repos[REPO].files["org--omni/results.json"] == (first / "results.json").read_bytes()
    assert all(hub.repos[REPO].files[p] == d for p, d in held.items() if p != "README.md")
    # the same model published again replaces its own folder
    assert main(["publish", str(first), "--repo", REPO, "--model-id", "org/omni", "--no-model-results"]) == 0


def test_local_model_path_skips_model_results_with_a_note(run_dir, hub, capfd, tmp_path):
    local = _copy(run_dir, tmp_path / "run", pretrained=str(tmp_path))
    assert main(["publish", str(local), "--repo", REPO, "--token", TOKEN, "--private"]) == 0
    out, err = capfd.readouterr()
    assert [c["kind"] for c in hub.commits] == ["dataset"]
    create = next(c for c in hub.seen if c["url"] == "/api/repos/create")
    assert json.loads(create["body"])["visibility"] == "private"
    assert "model results skipped" in out and "--model-id" in out
    _assert_token_hidden(hub, local, out, err)


def test_hub_error_text_echoing_the_token_is_masked(run_dir, hub, capfd, monkeypatch):
    from huggingface_hub import HfApi

    def refuse(*args, **kwargs):
        raise OSError(f"token {TOKEN} has no write access to {REPO}")

    monkeypatch.setattr(HfApi, "create_commit", refuse)
    assert main(["publish", str(run_dir), "--repo", REPO, "--token", TOKEN, "--no-model-results"]) == 2
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
    assert _results(rescored).tasks["cmm"].dataset == _results(run_dir).tasks["cmm"].dataset
    assert pq.read_table(io.BytesIO(files[f"{FOLDER}/samples/cmm.parquet"])).num_rows == _results(run_dir).tasks["cmm"].n_total


def test_a_second_model_joins_the_first_in_the_results_repo(run_dir, hub, monkeypatch, tmp_path):
    import datasets

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    other = _copy(run_dir, tmp_path / "other", pretrained="org/other-model")
    hub.models["org/other-model"] = Repo({})
    for folder in (run_dir, other):
        assert main(["publish", str(folder), "--repo", REPO, "--benchmark-ids", f"cmm={BENCHMARK}"]) == 0
    first, second = [c for c in hub.commits if c["kind"] == "dataset"]
    assert not set(second["files"]) & (set(first["files"]) - {"README.md"})  # nothing of the first is overwritten
    card = second["files"]["README.md"].decode()
    configs = {c["config_name"]: c["data_files"][0]["path"] for c in yaml.safe_load(card.split("---\n")[1])["configs"]}
    assert configs == {f"{m}--{t}": f"{m}/samples/{t}.parquet"
                       for m in (FOLDER, "org--other-model") for t in ("cmm", "mhalubench")}
    repo = tmp_path / "repo"  # the repo after both commits, read with plain datasets
    for path, data in hub.repos[REPO].files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes(data)
    n = {t: r.n_total for t, r in _results(run_dir).tasks.items()}
    for name in configs:
        rows = datasets.load_dataset(str(repo), name, split="test", cache_dir=str(tmp_path / "c")).num_rows
        assert rows == n[name.rpartition("--")[2]]
    models = [c for c in hub.commits if c["kind"] == "model"]
    assert [c["repo"] for c in models] == [MODEL, "org/other-model"]


def _second_process(hub, *argv) -> tuple[int, str]:
    """`hallubench ARGV` in another process, against the stand-in Hub and without a token: (exit code, stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "HF_TOKEN"}
    done = subprocess.run([sys.executable, "-m", "hallubench", *map(str, argv)], capture_output=True, text=True,
                          env={**env, "HF_ENDPOINT": hub.url, "HF_TOKEN_PATH": os.devnull}, timeout=300)
    return done.returncode, done.stderr


@pytest.mark.slow  # starts second processes
def test_a_writer_or_a_second_publish_starting_mid_publish_is_refused_naming_it(run_dir, hub, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    folder = _copy(run_dir, tmp_path / "run")
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    refused = {}

    def contend(kind, repo):  # while the results commit is on its way
        refused["re-score"] = _second_process(hub, "run", "--from-outputs", folder)
        refused["publish"] = _second_process(hub, "publish", folder, "--repo", REPO)

    hub.on_commit = contend
    assert main(["publish", str(folder), "--repo", REPO, "--no-model-results"]) == 0
    assert set(refused) == {"re-score", "publish"}
    for code, err in refused.values():
        assert code == 2 and f"{folder} is being uploaded by hallubench publish pid {os.getpid()}" in err, err
    assert len(hub.commits) == 1
    # Nothing changed: the refused re-score wrote no results.json, and the lock's record is empty again.
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("repo", ["me/../x", "../../etc", "me/a b"])
def test_a_ranking_push_to_a_bad_repo_id_is_refused_before_any_request(repo, hub, monkeypatch, tmp_path):
    from hallubench.errors import PublishError
    from hallubench.publish.rankings import push_ranking
    from hallubench.ranking.report import FILES
    from run_folder_support import seal

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    for name in FILES:
        (tmp_path / name).write_text("{}" if name.endswith(".json") else "x")
    seal(tmp_path)  # whole, so only the repo id is wrong
    with pytest.raises(PublishError, match="is not a Hub repo id"):
        push_ranking(tmp_path, repo)
    assert hub.requests == []
