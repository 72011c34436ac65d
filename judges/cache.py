"""Renamed judges/judgment_cache.py; this alias for code importing the old name goes in the next release."""
from hallubench.judges.judgment_cache import (CACHE_ENV, CACHE_FILE, JudgmentCache, default_cache_path,  # noqa: F401
                                              judgment_key)
