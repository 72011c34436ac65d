"""Sentence-level judges for CrossCheckGPT ranking: split responses into sentences, judge each
sentence against evidence passages (LLM / NLI / embedding), cache every judgment on disk.

Importing this package imports each of its modules but the heavy ones in HEAVY (torch): a judge registers its
factory where it is defined (`@register_judge`), or by a lazy target next to its config (judges/configs.py)."""
from hallubench.judges.base import BaseJudge, Judge, Judgment
from hallubench.judges.judgment_cache import JudgmentCache, default_cache_path
from hallubench.judges.cached_judge import CachedJudge
from hallubench.judges.responses import CrossCheckRecords, judge_responses
from hallubench.judges.sentences import sentence_backend, split_sentences
from hallubench.registry import discover_modules

__all__ = [
    "BaseJudge",
    "CachedJudge",
    "CrossCheckRecords",
    "Judge",
    "Judgment",
    "JudgmentCache",
    "default_cache_path",
    "judge_responses",
    "sentence_backend",
    "split_sentences",
]

HEAVY = ("embedding", "nli")  # behind the lazy targets of judges/configs.py
discover_modules(__name__, __path__, skip=HEAVY)
