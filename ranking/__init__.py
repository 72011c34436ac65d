"""CrossCheck ranking pipeline: evidence runs of several models through the harness, sentence judging
behind the judgment cache, CrossCheck aggregation (metrics/crosscheck) and the leaderboard report.

    from hallubench.ranking import ModelSpec, crosscheck, rank
    ranking = crosscheck([ModelSpec("a", "hf", {"pretrained": "PATH_A"}), ...], ["avhallubench_visual"], "out")
    print(ranking.table(markdown=False))   # plain text; ranking.table() is leaderboard.md's markdown

The names are imported on first use, so importing a light submodule (e.g. for the CLI's flag choices)
does not load the pipeline, torch and evaluate.
"""
from importlib import import_module

_EXPORTS = {"crosscheck": "pipeline", "rank": "pipeline", "Ranking": "board", "ModelSpec": "specs"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
