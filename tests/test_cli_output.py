"""What a person sees: no other library's progress bars or warnings around hallubench's output, charts of mini
runs marked MINI DATA, a leaderboard chart with a title and value labels clear of the error bars, and a named
error when --skip-missing leaves nothing to build."""
import os
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

from hallubench.cli.main import main

matplotlib.use("Agg")

FOREIGN = ("Loading weights", "Writing model shards", "Generating test split", "Creating parquet", "[transformers]",
           "Map:", "Filter:")


def _saved_texts(monkeypatch) -> list[list[str]]:
    """Every text (titles included) of each figure saved from now on."""
    from matplotlib.figure import Figure

    saved, original = [], Figure.savefig

    def savefig(fig, *args, **kwargs):
        texts = [t.get_text() for t in fig.texts] + [fig._suptitle.get_text() if fig._suptitle else ""]
        saved.append(texts + [t.get_text() for ax in fig.axes for t in (ax.title, *ax.texts)])
        return original(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return saved


def test_a_run_shows_hallubench_output_only(tiny_checkpoint, mini_datasets, tmp_path):
    """A fresh process (as a person runs it): stderr has hallubench's own bar, none of the libraries' bars or
    warnings, and stdout no runs of blank lines."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_VERBOSITY", "PROGRESS_BARS", "LOG_LEVEL"))}
    env["HF_HUB_OFFLINE"] = "1"
    model = tiny_checkpoint("qwen2_5_omni")
    done = subprocess.run([sys.executable, "-m", "hallubench", "run", "--model", "hf", "--model-args",
                           f"pretrained={model},dtype=float32", "--tasks", "cmm", "--data-dir", str(mini_datasets),
                           "-o", str(tmp_path / "run"), "--limit", "2", "--gen-kwargs", "max_new_tokens=3",
                           "--num-frames", "2"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "hallubench run: 100%" in done.stderr
    assert not [word for word in FOREIGN if word in done.stderr + done.stdout], done.stderr
    assert "\n\n\n" not in done.stdout


def test_make_tiny_model_prints_nothing(tmp_path, capfd):
    from hallubench.testing.tiny_models import make_tiny_model

    make_tiny_model("qwen2_vl", tmp_path)
    assert capfd.readouterr().out == ""  # the tokenizer trainer's progress wrote blank lines to fd 1


def test_results_chart_of_a_mini_run_is_marked_and_a_real_one_is_not(monkeypatch, tmp_path):
    from hallubench.harness.plot import plot_results
    from hallubench.harness.results_schema import Results, RunInfo, TaskResult

    saved = _saved_texts(monkeypatch)
    task = TaskResult(task="cmm", metric="pa_hr", n_selected=4, metrics={"pa": 0.5, "pa_stderr": 0.1})
    plot_results(Results(tasks={"cmm": task}, run=RunInfo(mini_data=["cmm"])), tmp_path / "mini.png")
    plot_results(Results(tasks={"cmm": task}), tmp_path / "real.png")
    mini, real = saved
    assert "MINI DATA" in mini and any(text.startswith("MINI DATA (cmm): synthetic") for text in mini)
    assert not any("MINI" in text for text in real)


def _ranking(mini: dict):
    from hallubench.ranking.board import Board, Ranking

    order = ["model-a", "model-b", "model-c"]
    results = {"ranking": order, "scores": {"model-a": 0.31, "model-b": 0.62, "model-c": 0.08},
               "eta": {t: {e: 1 / 3 for e in order} for t in order}}
    intervals = {"model-a": (0.2, 0.45), "model-b": (0.5, 0.7), "model-c": (0.02, 0.15)}
    return Ranking(boards=[Board("avhallubench_visual", [], {}, results)], judge={"judge_id": "embedding:x"},
                   config={"weighting": "task"}, runs={}, uncertainty={"avhallubench_visual": {"intervals": intervals}},
                   mini_data=mini)


def test_leaderboard_chart_has_a_title_and_value_labels_clear_of_the_error_bars(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection

    from hallubench.ranking.plot import plot_ranking

    figures = []
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure to measure it
    saved = _saved_texts(monkeypatch)
    plot_ranking(_ranking({}), tmp_path / "leaderboard.png")
    fig = figures[0]
    assert fig._suptitle.get_text().startswith("CrossCheck leaderboard") and "embedding:x" in fig._suptitle.get_text()
    assert not any("MINI" in text for text in saved[0])
    bars = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    labels = [t for t in bars.texts if t.get_text() in ("0.310", "0.620", "0.080")]
    assert len(labels) == 3
    whiskers = [seg for c in bars.collections if isinstance(c, LineCollection) for seg in c.get_segments()]
    assert whiskers
    for label in labels:
        box = label.get_window_extent(renderer)
        for seg in whiskers:
            (x0, y0), (x1, y1) = bars.transData.transform(seg)
            assert not (box.x0 <= max(x0, x1) and min(x0, x1) <= box.x1 and box.y0 <= max(y0, y1)
                        and min(y0, y1) <= box.y1), f"label {label.get_text()} sits on an error bar"
        assert box.x1 <= bars.get_window_extent(renderer).x1  # inside the plot, not cut at its edge


def test_leaderboard_chart_of_mini_runs_is_marked(tmp_path, monkeypatch):
    from hallubench.ranking.plot import plot_ranking

    saved = _saved_texts(monkeypatch)
    plot_ranking(_ranking({"model-a": ["avhallubench_visual"]}), tmp_path / "leaderboard.png")
    assert "MINI DATA" in saved[0]
    assert any("MINI DATA (model-a)" in text for text in saved[0])


def test_skip_missing_with_no_row_left_is_a_named_error(tmp_path, capsys):
    from hallubench.builders.folder import build_release
    from hallubench.builders.mini import build_all  # noqa: F401  registers the mini releases
    from hallubench.errors import NothingLeftToBuildError
    from hallubench.registry import BUILDERS, MINI_RELEASES

    release = MINI_RELEASES["avhallubench"](tmp_path / "release")
    for video in (Path(release) / "videos").iterdir():
        video.unlink()
    out = tmp_path / "out"
    assert main(["build", "avhallubench", "--source", str(release), "--out", str(out), "--skip_missing"]) == 1
    err = capsys.readouterr().err
    assert "hallubench build: error: " in err and "Traceback" not in err
    assert "no row of config 'default' is left to build: all 5 were skipped" in err and "is missing" in err
    assert not out.exists()
    with pytest.raises(NothingLeftToBuildError):
        build_release(BUILDERS["avhallubench"], release, out, skip_missing=True)


MISSING_FROM_HUB = """
import sys
from hallubench.benchmarks import get_task
from hallubench.errors import ConfigError
from hallubench.harness.data import dataset_dir, resolve_data_dir
try:
    dataset_dir(resolve_data_dir(sys.argv[1]), get_task("cchall"), sys.argv[1])
except ConfigError as err:
    print(err)
"""


def test_a_hub_data_dir_without_the_benchmark_says_how_to_get_it_not_to_build_into_the_cache(tmp_path):
    from hub_server import Repo, StandInHub

    from hallubench.builders import build
    from hallubench.builders.mini import make_release

    folder = build("cmm", make_release("cmm", tmp_path / "release"), tmp_path / "built" / "cmm")
    server = StandInHub({"me/hallubench-data": Repo.from_folder(folder.parent)})
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_TOKEN")}
    env.update(HF_ENDPOINT=server.url, HF_HOME=str(tmp_path / "home"))
    try:
        done = subprocess.run([sys.executable, "-c", MISSING_FROM_HUB, "me/hallubench-data"], env=env,
                              capture_output=True, text=True, timeout=300)
    finally:
        server.close()
    assert done.returncode == 0, done.stderr[-2000:]
    message = done.stdout
    assert message.startswith("--data-dir me/hallubench-data: that Hub dataset repo holds no built 'cchall' dataset")
    assert "it holds: cmm" in message and "`hallubench build cchall --output-dir datasets/cchall`" in message
    assert str(tmp_path / "home") not in message  # never a folder inside the Hub download cache
