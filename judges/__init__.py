"""Sentence-level judges for CrossCheckGPT ranking: split responses into sentences, judge each
sentence against evidence passages (LLM / NLI / embedding), cache every judgment on disk."""
from hallubench.judges.base import BaseJudge, Judge, Judgment
from hallubench.judges.judgment_cache import JudgmentCache, default_cache_path
from hallubench.judges.cached_judge import CachedJudge
from hallubench.judges.responses import CrossCheckRecords, judge_responses
from hallubench.judges.sentences import sentence_backend, split_sentences

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
