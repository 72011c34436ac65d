"""`CachedJudge`: any judge behind the on-disk judgment cache, so each unique pair is judged once."""
from __future__ import annotations

from tqdm.auto import tqdm

from hallubench.judges.base import BaseJudge, Judge, Judgment, Pair
from hallubench.judges.cache import JudgmentCache, judgment_key


class CachedJudge(BaseJudge):
    """Looks every pair up in `cache`, judges only the missing unique pairs (in batches of `batch_size`,
    each batch stored as soon as it is judged, so an interrupted run keeps its work), returns all.

    Missing pairs go out ordered by passage length, then passage, then sentence length: pairs sharing a
    passage (an LLM judge's shared prompt prefix) run together and every batch holds similar lengths (less
    padding). A progress bar with ETA counts them (`progress=False` hides it).

    Counters (besides `pairs` and `undecided` from BaseJudge): `calls` = pairs the wrapped judge
    actually judged, `hits` = unique pairs found in the cache, `saved` = pairs answered without a call
    (cache hits plus repeats within a request).
    """

    def __init__(self, judge: Judge, cache: JudgmentCache | None = None, batch_size: int = 64,
                 progress: bool = True) -> None:
        super().__init__()
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.judge = judge
        self.cache = cache if cache is not None else JudgmentCache()
        self.batch_size = batch_size
        self.progress = progress
        self.judge_id = judge.judge_id
        self.prompt_version = judge.prompt_version

    @property
    def hit_rate(self) -> float:
        """Share of requested pairs answered without calling the judge (0 before any request)."""
        return self.counters["saved"] / self.counters["pairs"] if self.counters["pairs"] else 0.0

    def _judge(self, pairs: list[Pair]) -> list[Judgment]:
        keys = [judgment_key(s, e, self.judge_id, self.prompt_version) for s, e in pairs]
        unique = dict(zip(keys, pairs))  # key -> pair, first occurrence order
        found = self.cache.get_many(unique)
        missing = sorted((key for key in unique if key not in found),
                         key=lambda key: (len(unique[key][1]), unique[key][1], len(unique[key][0])))
        bar = tqdm(total=len(missing), desc=f"judging ({self.judge_id})", unit="pair",
                   disable=not (self.progress and missing))
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            judged = self.judge.judge_batch([unique[key] for key in batch])
            fresh = dict(zip(batch, judged))
            self.cache.put_many(fresh.items(), self.judge_id, self.prompt_version)
            found.update(fresh)
            bar.update(len(batch))
        bar.close()
        self.counters["calls"] += len(missing)
        self.counters["hits"] += len(unique) - len(missing)
        self.counters["saved"] += len(pairs) - len(missing)
        return [found[key] for key in keys]
