"""results.png: which values are charted, and that a run writes the chart next to results.json."""
from PIL import Image

from hallubench.harness.plot import _fractions, _label, plot_results
from hallubench.harness.results_schema import GroupResult, Results, TaskResult


def test_fractions_are_the_metrics_with_a_stderr_plus_the_unreadable_share():
    result = GroupResult(n_selected=8, n_unparsed=2, n_scored=6, n_unreadable=2, unreadable_share=0.25,
                         metrics={"pa": 0.5, "pa_stderr": 0.1, "hr": 1.0, "hr_stderr": None, "other": 0.5,
                                  "unparsed": 2, "flag": True, "by_group": {}, "pa_ci": None})
    assert _fractions(result) == {"pa": 0.5, "hr": 1.0, "unreadable share": 0.25}  # stderrs are error bars
    assert "unreadable share" not in _fractions(GroupResult(n_selected=8, n_without_media=8))  # nothing answered


def test_a_score_made_mostly_of_unreadable_answers_is_flagged_in_red(tmp_path, monkeypatch):
    import matplotlib.axes

    titles = []
    monkeypatch.setattr(matplotlib.axes.Axes, "set_title",
                        lambda self, text, **kw: titles.append((text, kw.get("color"))))
    noisy = TaskResult(task="sac3_prime", metric="sac3", n_selected=3, n_unreadable=3, unreadable_share=1.0,
                       mostly_unreadable=True, metrics={"sc2_accuracy": 1.0})
    fine = TaskResult(task="cmm", metric="pa_hr", n_selected=4, unreadable_share=0.0, metrics={"pa": 0.5})
    plot_results(Results(tasks={"sac3_prime": noisy, "cmm": fine}), tmp_path / "results.png")
    assert titles == [("cmm (pa_hr)", "black"), ("sac3_prime (sac3): 100% of its answers unreadable", "red")]
    assert _label("all", noisy).endswith("MOSTLY UNREADABLE (>20%)") and "UNREADABLE" not in _label("all", fine)
    assert _label("audio-language", GroupResult(n_selected=8, n_without_media=8)) == "audio-language (n=8, 8 without media)"


def test_chart_is_written_only_when_a_task_has_its_own_metric(tmp_path):
    scored = TaskResult(task="cmm", metric="pa_hr", n_selected=4, n_unparsed=1,
                        metrics={"pa": 0.5, "pa_stderr": 0.2, "hr": 0.25, "hr_stderr": None},
                        groups={"visual-language": GroupResult(n_selected=4)})
    cross_run = TaskResult(task="avhallubench_visual", metric=None, scored_by="crosscheck", n_selected=3)
    assert plot_results(Results(tasks={"avhallubench_visual": cross_run}), tmp_path / "none.png") is None
    assert not (tmp_path / "none.png").exists()
    path = plot_results(Results(tasks={"cmm": scored, "avhallubench_visual": cross_run}), tmp_path / "results.png")
    with Image.open(path) as image:
        assert image.format == "PNG" and image.width > 500
