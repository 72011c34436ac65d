"""CrossCheck ranking pipeline: evidence runs of several models through the harness, sentence judging
behind the judgment cache, CrossCheck aggregation (metrics/crosscheck) and the leaderboard report.

    from hallubench.ranking import ModelSpec, crosscheck, rank
    ranking = crosscheck([ModelSpec("a", "hf", {"pretrained": "PATH_A"}), ...], ["avhallubench_visual"], "out")
    print(ranking.table())
"""
from hallubench.ranking.pipeline import crosscheck, rank
from hallubench.ranking.report import Ranking
from hallubench.ranking.specs import ModelSpec

__all__ = ["ModelSpec", "Ranking", "crosscheck", "rank"]
