"""results.png: per scored task, its fraction-valued metrics (and the share of unreadable answers) for the
whole task and each group, side by side, with ±1 standard error bars, so a model's profile across e.g.
CMM's sub-categories is seen at a glance, and which differences are noise. A task or group scored mostly on
unreadable answers is flagged in red under its bars. A run on the embedded mini benchmarks is marked MINI DATA on
the chart itself (`title_figure`, used by leaderboard.png too)."""
from __future__ import annotations

import textwrap
from pathlib import Path

from hallubench.harness.results_schema import MOSTLY_UNREADABLE, GroupResult, Results
from hallubench.harness.uncertainty import STDERR, reported_fractions

PLOT = "results.png"
TITLE_WIDTH = 100  # characters per title line
LEGEND_ROW = 6  # metrics whose legend fits in one row above the bars


def _fractions(result: GroupResult) -> dict[str, float]:
    """The fraction metrics (those with a standard error), plus the unreadable share of the answered samples."""
    values = reported_fractions(result.metrics)
    if result.unreadable_share is not None:
        values["unreadable share"] = result.unreadable_share
    return values


def _label(group: str, result: GroupResult) -> str:
    flag = f"\nMOSTLY UNREADABLE (>{MOSTLY_UNREADABLE:.0%})" if result.mostly_unreadable else ""
    left_out = f", {result.n_without_media} without media" if result.n_without_media else ""
    return f"{group} (n={result.n_selected}{left_out}){flag}"


def _stderr(result: GroupResult, metric: str) -> float:
    return result.metrics.get(metric + STDERR) or 0.0


def title_figure(fig, title: str | None, mini: str | None) -> None:
    """The figure's title and, for a chart made on the embedded synthetic mini benchmarks (`mini` says which), the
    MINI DATA mark: a red banner line in the title and a watermark across the chart, so the chart cannot be
    mistaken for a measurement when it travels without its table."""
    lines = [title] if title else []
    if mini:
        lines.append(f"MINI DATA ({mini}): synthetic embedded benchmarks, a pipeline check, not a measurement")
    lines = [textwrap.fill(line, TITLE_WIDTH) for line in lines]  # a long line would widen the saved chart
    if mini:
        fig.text(0.5, 0.5, "MINI DATA", ha="center", va="center", rotation=25, fontsize=64, weight="bold",
                 color="tab:red", alpha=0.15)
    if lines:
        fig.suptitle("\n".join(lines), color="tab:red" if mini else "black", fontsize=12)


def pyplot():
    """matplotlib's pyplot on the Agg backend (no display needed). Its import takes half a second or more: a run
    starts it in the background while the model works (harness/prefetch.in_background)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_results(results: Results, path: Path) -> Path | None:
    """Write the chart to `path`; None (nothing written) when no task has a metric of its own."""
    tasks = {name: task for name, task in sorted(results.tasks.items()) if task.metric is not None}
    if not tasks:
        return None
    plt = pyplot()
    # CMM has 18 groups (sub-category and sub-category × granularity): widen so their labels stay legible.
    width = max(11.0, 0.75 * max(len(task.groups) + 1 for task in tasks.values()))
    # Constrained layout keeps the labels and an outside legend in the figure in one drawing (tight_layout plus
    # bbox_inches="tight" drew the chart twice: about half of the time a short run spent after its last sample).
    fig, axes = plt.subplots(len(tasks), 1, figsize=(width, 3.6 * len(tasks)), squeeze=False, layout="constrained")
    for ax, (name, task) in zip(axes[:, 0], tasks.items()):
        groups = {"all": task, **task.groups}
        values = {group: _fractions(result) for group, result in groups.items()}
        metrics = list(dict.fromkeys(m for v in values.values() for m in v))
        width = 0.8 / max(len(metrics), 1)
        for i, metric in enumerate(metrics):
            xs = [g + (i - (len(metrics) - 1) / 2) * width for g in range(len(groups))]
            ax.bar(xs, [values[group].get(metric, 0.0) for group in groups], width, label=metric,
                   yerr=[_stderr(result, metric) for result in groups.values()], capsize=2, error_kw={"lw": 0.8})
        ax.set_xticks(range(len(groups)), [_label(g, r) for g, r in groups.items()], fontsize=8,
                      rotation=30, ha="right")
        for tick, result in zip(ax.get_xticklabels(), groups.values()):
            if result.mostly_unreadable:
                tick.set_color("red")
        ax.set_ylim(0, 1.18)  # headroom for the legend
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
        flag = f": {task.unreadable_share:.0%} of its answers unreadable" if task.mostly_unreadable else ""
        ax.set_title(f"{name} ({task.metric}){flag}", color="red" if flag else "black")
        if not metrics:  # every sample failed (no answer to score or read): say so instead of empty axes
            ax.text(0.5, 0.5, "no scores: no sample of this task was answered", ha="center", va="center",
                    transform=ax.transAxes)
        elif len(metrics) <= LEGEND_ROW:
            ax.legend(fontsize=7, ncol=len(metrics), loc="upper center")
        else:  # MHaluBench's 16 scores (two levels, Table 2's columns) would not fit in one row above the bars
            ax.legend(fontsize=7, ncol=-(-len(metrics) // 12), loc="upper left", bbox_to_anchor=(1.0, 1.02))
    title_figure(fig, None, ", ".join(results.run.mini_data))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
