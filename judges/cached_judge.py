"""`CachedJudge`: any judge behind the on-disk judgment cache, so each unique pair is judged once.

A judge that fails on a batch (an LLM server error on one conversation) loses nothing: the batch's pairs
are judged again one by one, each cached as it arrives, and a pair that still fails is a *judge error*:
listed in `errors` (sentence, evidence, message), counted in `counters["errors"]`, scored 0.5 and marked
undecided for this ranking but never cached, so the next run asks again. `strict=True` raises instead,
after caching what was judged.
"""
from __future__ import annotations

from tqdm.auto import tqdm

from hallubench.errors import ConfigError, JudgeError, ModelUnusable
from hallubench.judges.base import BaseJudge, Judge, Judgment, Pair
from hallubench.judges.judgment_cache import JudgmentCache, judgment_key
from hallubench.redact import redact

# What a judge raises for one bad pair or batch; anything else (bad credentials, a bug) stops the ranking, as
# do ModelUnusable (no request can succeed) and ConfigError (the user's setup: a model or the media not there).
JUDGE_FAILURES = (RuntimeError, ValueError, OSError)
STOPS = (ModelUnusable, ConfigError)


class CachedJudge(BaseJudge):
    """Looks every pair up in `cache`, judges only the missing unique pairs (in batches of `batch_size`, each
    model call's judgments committed as soon as the call finishes, so an interrupted or killed run keeps all but
    the call in flight), returns all.

    Missing pairs go out ordered by passage length, then passage, then sentence length, and every pair of a
    passage in the same call (`passage_calls`): a judge whose prompts share the passage as their prefix computes
    it once for all of them (in a ranking, every target sentence of the item: T systems x ~6 sentences), and
    every call holds similar lengths (less padding). A progress bar with ETA counts them (`progress=False` hides it).

    Counters (besides `pairs` and `undecided` from BaseJudge): `calls` = pairs the wrapped judge
    actually judged, `hits` = unique pairs found in the cache, `saved` = pairs answered without a call
    (cache hits plus repeats within a request).
    """

    def __init__(self, judge: Judge, cache: JudgmentCache | None = None, batch_size: int = 64,
                 progress: bool = True, strict: bool = False) -> None:
        super().__init__()
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.judge = judge
        self.cache = cache if cache is not None else JudgmentCache()
        self.batch_size = batch_size
        self.progress = progress
        self.strict = strict
        self.errors: list[dict[str, str]] = []  # pairs that failed alone: sentence, evidence, error
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
        # Closed before an interrupt's message is printed (a `with` block), so that message is not drawn over it.
        with tqdm(total=len(missing), desc=f"judging ({self.judge_id})", unit="pair",
                  disable=not (self.progress and missing)) as bar:
            for batch in passage_calls(missing, [unique[key][1] for key in missing], self.batch_size):
                found.update(self._judge_call(batch, unique, bar))
        self.counters["calls"] += len(missing)
        self.counters["hits"] += len(unique) - len(missing)
        self.counters["saved"] += len(pairs) - len(missing)
        return [found[key] for key in keys]

    def _judge_call(self, batch: list[str], unique: dict[str, Pair], bar: tqdm) -> dict[str, Judgment]:
        """The judgments of `batch`, each model call's committed to the cache as soon as it finishes (before the
        next call starts), so an interrupt or kill -9 loses only the call in flight; after a failure the rest of
        the batch is judged one by one."""
        fresh: dict[str, Judgment] = {}
        try:
            for judgments in self.judge.judge_calls([unique[key] for key in batch]):
                done = dict(zip(batch[len(fresh):], judgments))
                self.cache.put_many(done.items(), self.judge_id, self.prompt_version)
                fresh.update(done)
                bar.update(len(done))
        except JUDGE_FAILURES as err:
            if isinstance(err, STOPS):
                raise
            rest = batch[len(fresh):]
            fresh.update(self._one_by_one(rest, unique))
            bar.update(len(rest))
        return fresh

    def _one_by_one(self, keys: list[str], unique: dict[str, Pair]) -> dict[str, Judgment]:
        """Judge each pair alone, caching each answer at once; failures become uncached judge errors."""
        out: dict[str, Judgment] = {}
        first_failure: JudgeError | None = None
        for key in keys:
            sentence, evidence = unique[key]
            try:
                out[key] = self.judge.judge_batch([(sentence, evidence)])[0]
            except JUDGE_FAILURES as err:
                if isinstance(err, STOPS):
                    raise
                message = redact(str(err))[:300]
                if self.strict:  # judge the rest of the batch first, so everything receivable is cached
                    first_failure = first_failure or JudgeError(
                        f"{self.judge_id}: judging sentence {sentence[:80]!r} against evidence {evidence[:80]!r} "
                        f"failed: {message} (judgments received so far are cached; drop --strict-judging to record "
                        "it as a judge error)")
                    continue
                self.errors.append({"sentence": sentence, "evidence": evidence, "error": message})
                self.counters["errors"] += 1
                out[key] = Judgment(score=0.5, undecided=True, raw=f"judge error: {message}")
                continue
            self.cache.put_many([(key, out[key])], self.judge_id, self.prompt_version)
        if first_failure is not None:
            raise first_failure
        return out


def passage_calls(keys: list[str], passages: list[str], size: int) -> list[list[str]]:
    """`keys` (sorted so that equal `passages` are adjacent) cut into calls of at most `size` pairs at passage
    boundaries only; a passage with more than `size` pairs is a call of its own."""
    calls: list[list[str]] = []
    start = 0
    while start < len(keys):
        end = start + 1
        while end < len(keys) and passages[end] == passages[start]:
            end += 1
        if calls and len(calls[-1]) + end - start <= size:
            calls[-1].extend(keys[start:end])
        else:
            calls.append(keys[start:end])
        start = end
    return calls
