"""probes.png: CMM Figure 2's chart for a `--perturb` ladder run with `--answer-probs`.

Figure 2 plots, for one probe whose answer is "no", the probability of a hallucinatory "yes" and of a correct "no"
against the blur (2a, 2b) or noise (2c) level. Here each panel is one ladder (kind) and one group of the task ("all"
and each group of its first breakdown, e.g. CMM's sub-categories), over the probes whose reference is "no": the
mean P("yes") and P("no") at each level, clean to degraded, with their 95% bootstrap intervals shaded.
"""
from __future__ import annotations

from pathlib import Path

from hallubench.harness.answer_probs import UNPERTURBED
from hallubench.harness.plot import title_figure
from hallubench.harness.results_schema import Results

PROBES_PLOT = "probes.png"
NEGATIVE = "reference=no"  # Figure 2's probes: the correct answer is "no", so a "yes" is the hallucination
LINES = (("yes", 'hallucinatory "yes"', "tab:red"), ("no", 'correct "no"', "tab:blue"))


def _panels(results: Results) -> list[tuple[str, str, str, list[str], dict]]:
    """(task, kind, group, levels of the kind, by_level) per panel."""
    panels = []
    for name, task in sorted(results.tasks.items()):
        probs = task.answer_probs
        if not probs:
            continue
        kinds: dict[str, list[str]] = {}
        for label in probs["levels"]:
            kinds.setdefault(label.partition("=")[0] if label != UNPERTURBED else UNPERTURBED, []).append(label)
        groups = dict.fromkeys(group for level in probs["by_level"].values() for group in level if " / " not in group)
        for kind, levels in kinds.items():
            for group in sorted(groups, key=lambda g: (g != "all", g)):
                panels.append((name, kind, group, levels, probs["by_level"]))
    return panels


def plot_probes(results: Results, path: Path) -> Path | None:
    """Write the chart to `path`; None (nothing written) when no task recorded answer probabilities."""
    panels = _panels(results)
    if not panels:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(4, len(panels))
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.4 * rows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, (task, kind, group, levels, by_level) in zip(axes.flat, panels):
        cells = [by_level[level].get(group, {}).get(NEGATIVE) for level in levels]
        xs = [x for x, cell in enumerate(cells) if cell]
        for word, label, color in LINES:
            means = [cells[x][word] for x in xs]
            ax.plot(xs, means, marker="o", color=color, label=label)
            ax.fill_between(xs, [cells[x][f"{word}_ci"][0] for x in xs], [cells[x][f"{word}_ci"][1] for x in xs],
                            color=color, alpha=0.2)
        if not xs:
            ax.text(0.5, 0.5, 'no probe answered "no" here', ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks(range(len(levels)), [level.partition("=")[2] or level for level in levels])
        n = max((cell["n"] for cell in cells if cell), default=0)
        ax.set_xlabel("blur sigma (px)" if kind.endswith("blur") else "SNR (dB)" if kind == "audio_snr" else kind)
        ax.set_ylim(0, 1)
        ax.set_ylabel('probability (reference "no")')
        ax.set_title(f"{task}: {group} (n={n})", fontsize=9)
        ax.legend(fontsize=7)
    title_figure(fig, 'P("yes") and P("no") of the first reply token against the perturbation level (CMM Fig. 2)',
                 ", ".join(results.run.mini_data))
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
