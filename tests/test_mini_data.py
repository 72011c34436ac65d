"""No silent synthetic data: `run` and `crosscheck` need --data-dir; `--data-dir mini` (and `demo`) use the mini
benchmarks, and results made on them say so in results.json, in the terminal table and on the Hub card;
`publish` refuses them unless --allow-mini-data. A ranking of such runs says so in its table, leaderboard.md,
crosscheck.json and Hub card, and `rank --push-to-hub` refuses it unless --allow-mini-data."""
from __future__ import annotations

import json
import shutil

import pytest
import yaml
from hub_server import StandInHub
from test_publish_hub import MODEL, TOKEN, ChatModelTestDouble

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
    server = StandInHub({}).serve_in_process(monkeypatch, tmp_path)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    yield server
    server.close()


def test_publish_refuses_mini_results(mini_run, hub, capsys):
    out, _ = mini_run
    assert main(["publish", str(out), "--repo", "me/mini"]) == 2
    err = capsys.readouterr().err
    assert "embedded synthetic mini benchmarks" in err and "--allow-mini-data" in err
    assert hub.requests == []  # refused before anything went to the Hub


def test_publish_with_the_flag_says_mini_on_the_card_and_leaves_the_model_repo_alone(mini_run, hub, capsys):
    out, _ = mini_run
    assert main(["publish", str(out), "--repo", "me/mini", "--allow-mini-data", "--allow-partial"]) == 0
    assert "model results skipped: scores on the synthetic mini benchmarks" in capsys.readouterr().out
    [commit] = hub.commits
    card = commit["files"]["README.md"].decode()
    assert "hallubench-mini-data" in card and "(mini data)" in card
    assert "**Mini data.** cmm, mhalubench ran on hallubench's embedded synthetic mini benchmarks" in card


def test_run_push_to_hub_refuses_mini_results_unless_allowed(mini_run, hub, tmp_path, capsys):
    argv = ["run", "--from-outputs", str(mini_run[0]), "--output-dir", str(tmp_path / "rescored"), "--push-to-hub",
            "me/mini"]
    assert main(argv) == 2 and hub.requests == []
    assert "--allow-mini-data" in capsys.readouterr().err
    # allowed as mini data, the run is still a --limit run: refused as partial (`publish --allow-partial` takes it)
    assert main([*argv, "--allow-mini-data"]) == 2 and hub.requests == []
    assert "--allow-partial" in capsys.readouterr().err


def test_rescoring_keeps_the_mark(mini_run, tmp_path):
    out, _ = mini_run
    assert main(["run", "--from-outputs", str(out), "--output-dir", str(tmp_path / "rescored")]) == 0
    assert json.loads((tmp_path / "rescored" / "results.json").read_text())["run"]["mini_data"] == ["cmm", "mhalubench"]


def _with_mini_data(run_dir, tasks):
    """`run_dir`'s results.json saying that `tasks` ran on the mini benchmarks."""
    from hallubench.harness.results_schema import Results
    from hallubench.harness.runner import write_results

    results = Results.from_dict(json.loads((run_dir / "results.json").read_text()))
    results.run.mini_data = tasks
    write_results(results, run_dir)
    return run_dir


def _rank(mini_run, tmp_path, b_tasks, *flags):
    """`hallubench rank a=<the mini run> b=<its copy, marked mini for b_tasks> --push-to-hub me/ranking`."""
    out, _ = mini_run
    b = _with_mini_data(shutil.copytree(out, tmp_path / "b"), b_tasks)
    ranking = tmp_path / "ranking"
    code = main(["rank", f"a={out}", f"b={b}", "--output-dir", str(ranking), "--cache", str(tmp_path / "j.sqlite"),
                 "--push-to-hub", "me/ranking", *flags])
    return code, ranking


def _card(commit):
    card = commit["files"]["README.md"].decode()
    return yaml.safe_load(card.split("---\n")[1]), card


def test_a_ranking_of_mini_runs_says_so_and_is_pushed_only_when_allowed(mini_run, hub, tmp_path, capsys):
    # a ran cmm and mhalubench on mini data; b's results.json marks only cmm, which is not ranked (no samples).
    code, ranking = _rank(mini_run, tmp_path, ["cmm"])
    assert code == 2
    printed, err = capsys.readouterr()
    notice = ("MINI DATA: runs made on the embedded synthetic mini benchmarks (--data-dir mini): a (mhalubench). "
              "This ranking is a pipeline check, not a measurement of the models.")
    assert f"{notice}\n\nmhalubench\n" in printed  # the terminal's plain text; leaderboard.md holds the markdown
    assert (ranking / "leaderboard.md").read_text().startswith(f"# CrossCheck leaderboard (mini data)\n\n**{notice}**")
    assert json.loads((ranking / "crosscheck.json").read_text())["mini_data"] == {"a": ["mhalubench"]}
    assert f"{ranking} ranks runs made on the embedded synthetic mini benchmarks (a (mhalubench))" in err
    assert "--allow-mini-data" in err and hub.requests == []  # refused before anything went to the Hub

    code, ranking = _rank(mini_run, tmp_path / "again", ["cmm"], "--allow-mini-data")
    assert code == 0
    [commit] = hub.commits
    meta, card = _card(commit)
    assert "hallubench-mini-data" in meta["tags"] and f"# CrossCheck leaderboard (mini data)\n\n**{notice}**" in card


def test_a_ranking_whose_mini_tasks_are_not_ranked_is_not_marked(mini_run, hub, tmp_path, capsys):
    _with_mini_data(mini_run[0], ["cmm"])  # only cmm ran on mini data, and cmm is not ranked
    code, ranking = _rank(mini_run, tmp_path, [])
    assert code == 0
    assert "MINI DATA" not in capsys.readouterr().out
    assert "MINI DATA" not in (ranking / "leaderboard.md").read_text()
    assert json.loads((ranking / "crosscheck.json").read_text())["mini_data"] == {}
    [commit] = hub.commits
    meta, card = _card(commit)
    assert "hallubench-mini-data" not in meta["tags"] and "MINI DATA" not in card and "(mini data)" not in card
