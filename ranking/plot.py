"""leaderboard.png: under a title naming the judge (and the MINI DATA mark for rankings of mini runs), per
board, the CrossCheck scores (bars, best on top, each labelled with its value inside the bar, with their
bootstrap 95% intervals as error bars) beside the eta weights each target gave each evidence model (heatmap;
per-query weights are averaged over queries)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from hallubench.ranking.board import Ranking


def eta_matrix(eta: dict, targets: list[str]) -> tuple[list[str], np.ndarray]:
    """Evidence names and a targets x evidence array of weights (0 where a target did not use one)."""
    flat = {}
    for t in targets:
        weights = eta[t]
        if weights and isinstance(next(iter(weights.values())), dict):  # "query" weighting: doc -> weights
            docs = list(weights.values())
            weights = {e: sum(d.get(e, 0.0) for d in docs) / len(docs) for e in {e for d in docs for e in d}}
        flat[t] = weights
    evidence = sorted({e for w in flat.values() for e in w})
    return evidence, np.array([[flat[t].get(e, 0.0) for e in evidence] for t in targets])


def _label_scores(ax, scores: list[float], upper: list[float], right: float) -> None:
    """Each score written inside its bar (clear of the interval's whisker at the bar's end), or right of the whisker
    when the bar is too short to hold it."""
    for y, (score, high) in enumerate(zip(scores, upper)):
        if score >= 0.2 * right:
            ax.annotate(f"{score:.3f}", (0, y), xytext=(4, 0), textcoords="offset points", va="center", ha="left",
                        fontsize=9, weight="bold", color="white")
        else:
            ax.annotate(f"{score:.3f}", (high, y), xytext=(6, 0), textcoords="offset points", va="center",
                        ha="left", fontsize=9)


def plot_ranking(ranking: "Ranking", path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hallubench.harness.plot import title_figure

    boards = ranking.boards
    height = sum(max(2.0, 0.45 * len(b.results["ranking"]) + 1.2) for b in boards)
    fig, axes = plt.subplots(len(boards), 2, figsize=(12, height + 0.8), squeeze=False,
                             gridspec_kw={"width_ratios": [1, 1.3]})
    for (bars, heat), board in zip(axes, boards):
        order = board.results["ranking"]
        scores = [board.results["scores"][m] for m in order]
        intervals = ranking.uncertainty[board.name]["intervals"]
        upper = [intervals[m][1] for m in order]
        xerr = np.clip([[s - intervals[m][0] for m, s in zip(order, scores)],
                        [high - s for high, s in zip(upper, scores)]], 0.0, None)
        bars.barh(range(len(order)), scores, color="tab:blue", xerr=xerr, capsize=3, error_kw={"lw": 0.8})
        bars.set_yticks(range(len(order)), order)
        bars.invert_yaxis()
        right = max(1.0, *upper) * 1.08  # CrossCheck scores are in [0, 1]: one scale for every board
        bars.set_xlim(0, right)
        bars.set_xlabel("CrossCheck score (lower = less hallucination), 95% interval")
        bars.set_title(board.name + (" (our extension)" if board.extension else ""))
        _label_scores(bars, scores, upper, right)
        evidence, weights = eta_matrix(board.results["eta"], order)
        image = heat.imshow(weights, vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
        heat.set_xticks(range(len(evidence)), evidence, rotation=45, ha="right", fontsize=8)
        heat.set_yticks(range(len(order)), order, fontsize=8)
        heat.set_title("η: weight of each evidence model")
        for (y, x), w in np.ndenumerate(weights):
            heat.text(x, y, f"{w:.2f}", ha="center", va="center", fontsize=8, color="w" if w < 0.5 else "k")
        fig.colorbar(image, ax=heat, fraction=0.04)
    judge = ranking.judge.get("judge_id") or ranking.judge.get("kind", "?")
    title_figure(fig, f"CrossCheck leaderboard (best first; judge {judge}, η weighting "
                      f"{ranking.config.get('weighting', '?')})", ", ".join(sorted(ranking.mini_data)) or None)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
