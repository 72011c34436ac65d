"""Renamed judges/cached_judge.py; this alias for code importing the old name goes in the next release."""
from hallubench.judges.cached_judge import JUDGE_FAILURES, STOPS, CachedJudge, JudgeError  # noqa: F401
