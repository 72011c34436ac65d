"""No silent synthetic data: `run` and `crosscheck` need --data-dir; `--data-dir mini` (and `demo`) use the mini
benchmarks, and results made on them say so in results.json, in the terminal table and on the Hub card;
`publish` refuses them unless --allow-mini-data."""
from __future__ import annotations

import json

import pytest
from test_publish_hub import MODEL, TOKEN, ChatModelTestDouble, HubTestDouble  # noqa: F401 (hub fixture below)

from hallubench.cli.main import main
from hallubench.harness.data import GUIDANCE

RUN = ["run", "--model", "test_double", "--model-args", f"pretrained={MODEL}", "--tasks", "cmm,mhalubench",
       "--limit", "2", "--num-samples", "1", "--num-frames", "2"]


@pytest.fixture
def double_model(monkeypatch):
    from hallubench import models

    monkeypatch.setitem(models.MODELS, "test_double", ChatModelTestDouble)


@pytest.fixture(scope="module")
def mini_cache(tmp_path_factory):
    """HALLUBENCH_CACHE for this module: `--data-dir mini` builds the mini benchmarks here once."""
    return tmp_path_factory.mktemp("hallubench-cache")


@pytest.fixture
def mini_run(mini_cache, double_model, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HALLUBENCH_CACHE", str(mini_cache))
    out = tmp_path / "run"
    assert main([*RUN, "--data-dir", "mini", "--output-dir", str(out)]) == 0
    return out, capsys.readouterr().out


@pytest.mark.parametrize("command", [RUN, ["crosscheck", "--models", "a,b", "--tasks", "avhallubench_visual"]])
def test_without_data_dir_run_and_crosscheck_refuse_with_guidance(command, double_model, tmp_path, monkeypatch,
                                                                 capsys):
    monkeypatch.setenv("HALLUBENCH_CACHE", str(tmp_path / "cache"))
    assert main([*command, "--output-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "--data-dir is required" in err and GUIDANCE in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()  # nothing built, nothing run


def test_a_missing_data_folder_is_named_with_guidance(double_model, tmp_path, capsys):
    assert main([*RUN, "--data-dir", str(tmp_path / "nowhere"), "--output-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"--data-dir {tmp_path / 'nowhere'}: no such folder" in err and "hallubench build" in err


def test_mini_results_say_so_in_results_json_and_the_table(mini_run):
    out, printed = mini_run
    results = json.loads((out / "results.json").read_text())
    assert results["run"]["mini_data"] == ["cmm", "mhalubench"]
    assert results["run"]["options"]["data_dir"] == "mini"
    assert "MINI DATA: cmm, mhalubench ran on the embedded synthetic mini benchmarks" in printed
    assert printed.index("MINI DATA") < printed.index("| task |")


def test_a_folder_of_mini_datasets_given_by_path_is_marked_too(mini_cache, double_model, tmp_path, monkeypatch):
    from hallubench.harness.data import default_data_dir, ensure_mini

    monkeypatch.setenv("HALLUBENCH_CACHE", str(mini_cache))
    folder = ensure_mini(default_data_dir())
    assert main([*RUN, "--data-dir", str(folder), "--output-dir", str(tmp_path / "run")]) == 0
    assert json.loads((tmp_path / "run" / "results.json").read_text())["run"]["mini_data"] == ["cmm", "mhalubench"]


def test_real_data_results_are_not_marked(double_model, tmp_path, capsys):
    from hallubench.builders import build
    from hallubench.builders.mini import make_release

    for name in ("cmm", "mhalubench"):  # a built release, not marked mini, as a real one would be
        build(name, make_release(name, tmp_path / "releases" / name), tmp_path / "datasets" / name)
    assert main([*RUN, "--data-dir", str(tmp_path / "datasets"), "--output-dir", str(tmp_path / "run")]) == 0
    assert json.loads((tmp_path / "run" / "results.json").read_text())["run"]["mini_data"] == []
    assert "MINI DATA" not in capsys.readouterr().out


@pytest.fixture
def hub(monkeypatch, tmp_path):
    import httpx2
    from huggingface_hub import constants, set_client_factory
    from huggingface_hub.utils._http import default_client_factory

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-login-token"))
    double = HubTestDouble()
    set_client_factory(lambda: httpx2.Client(transport=httpx2.MockTransport(double)))
    yield double
    set_client_factory(default_client_factory)


def test_publish_refuses_mini_results(mini_run, hub, capsys):
    out, _ = mini_run
    assert main(["publish", str(out), "--repo", "me/mini"]) == 2
    err = capsys.readouterr().err
    assert "embedded synthetic mini benchmarks" in err and "--allow-mini-data" in err
    assert hub.requests == []  # refused before anything went to the Hub


def test_publish_with_the_flag_says_mini_on_the_card_and_leaves_the_model_repo_alone(mini_run, hub, capsys):
    out, _ = mini_run
    assert main(["publish", str(out), "--repo", "me/mini", "--allow-mini-data"]) == 0
    assert "model results skipped: scores on the synthetic mini benchmarks" in capsys.readouterr().out
    [commit] = hub.commits
    card = commit["files"]["README.md"].decode()
    assert "hallubench-mini-data" in card and "(mini data)" in card
    assert "**Mini data.** cmm, mhalubench ran on hallubench's embedded synthetic mini benchmarks" in card


def test_rescoring_keeps_the_mark(mini_run, tmp_path):
    out, _ = mini_run
    assert main(["run", "--from-outputs", str(out), "--output-dir", str(tmp_path / "rescored")]) == 0
    assert json.loads((tmp_path / "rescored" / "results.json").read_text())["run"]["mini_data"] == ["cmm", "mhalubench"]
