"""Judgment cache: keys, hits and misses through CachedJudge, and several processes writing at once."""
import multiprocessing as mp
import sqlite3

import pytest

from hallubench.errors import JudgmentCacheError
from hallubench.judges import BaseJudge, CachedJudge, Judgment, JudgmentCache, default_cache_path
from hallubench.judges.judgment_cache import judgment_key


class CountingJudgeDouble(BaseJudge):
    """Test double: a deterministic score per pair; records every batch it is asked to judge."""

    judge_id = "double:counting"
    prompt_version = "v1"

    def __init__(self):
        super().__init__()
        self.batches = []

    def _judge(self, pairs):
        self.batches.append(list(pairs))
        return [Judgment(score_of(s, e), undecided=s.endswith("?"), raw=f"{s}|{e}") for s, e in pairs]


def score_of(sentence, evidence):
    return (len(sentence) * 7 + len(evidence) * 3) % 11 / 10


def test_bad_pairs_and_out_of_range_scores_are_refused():
    judge = CountingJudgeDouble()
    with pytest.raises(TypeError, match=r"pairs\[1\] must be a \(sentence: str, evidence: str\) tuple"):
        judge.score_batch([("a", "b"), ("only one",)])
    broken = CountingJudgeDouble()
    broken._judge = lambda pairs: [Judgment(float("nan")) for _ in pairs]
    with pytest.raises(ValueError, match=r"score nan for pairs\[0\] is outside \[0, 1\]"):
        broken.score_batch([("a", "b")])


def test_key_depends_on_every_field():
    base = judgment_key("s", "e", "j", "v")
    assert len(base) == 64
    assert len({base, judgment_key("e", "s", "j", "v"), judgment_key("s", "e", "j2", "v"),
                judgment_key("s", "e", "j", "v2"), judgment_key("s e", "", "j", "v")}) == 5


def test_default_path_and_env_override(monkeypatch, tmp_path):
    monkeypatch.delenv("HALLUBENCH_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_path() == tmp_path / "home" / ".cache" / "hallubench" / "judgments.sqlite"
    monkeypatch.setenv("HALLUBENCH_CACHE", str(tmp_path / "shared"))
    assert default_cache_path() == tmp_path / "shared" / "judgments.sqlite"
    cache = JudgmentCache()
    assert len(cache) == 0 and cache.path.is_file()
    with pytest.raises(JudgmentCacheError, match="is a folder"):
        JudgmentCache(tmp_path)


def test_cached_judge_judges_each_unique_pair_once(tmp_path):
    cache = JudgmentCache(tmp_path / "j.sqlite")
    inner = CountingJudgeDouble()
    judge = CachedJudge(inner, cache, batch_size=2)
    pairs = [("a", "x"), ("b?", "x"), ("a", "x"), ("c", "yy")]
    scores = judge.score_batch(pairs)
    assert scores == [score_of(s, e) for s, e in pairs]
    assert [len(b) for b in inner.batches] == [2, 1]  # 3 unique pairs, batches of 2
    assert dict(judge.counters) == {"pairs": 4, "calls": 3, "hits": 0, "saved": 1, "undecided": 1}
    assert len(cache) == 3

    more = [("c", "yy"), ("a", "x"), ("d", "x")]
    assert judge.score_batch(more) == [score_of(s, e) for s, e in more]
    assert inner.batches[-1] == [("d", "x")]
    assert (judge.counters["calls"], judge.counters["hits"], judge.counters["saved"]) == (4, 2, 3)
    assert judge.hit_rate == pytest.approx(3 / 7)


def test_cache_is_shared_across_runs_and_keeps_raw_and_undecided(tmp_path):
    path = tmp_path / "j.sqlite"
    CachedJudge(CountingJudgeDouble(), JudgmentCache(path)).score_batch([("why?", "e"), ("ok", "e")])
    inner = CountingJudgeDouble()
    rerun = CachedJudge(inner, JudgmentCache(path))
    judgments = rerun.judge_batch([("why?", "e"), ("ok", "e")])
    assert inner.batches == [] and rerun.counters["calls"] == 0 and rerun.hit_rate == 1.0
    assert judgments[0] == Judgment(score_of("why?", "e"), undecided=True, raw="why?|e")
    assert rerun.counters["undecided"] == 1 and rerun.undecided_outputs == {"why?|e": 1}


def test_prompt_version_change_misses(tmp_path):
    cache = JudgmentCache(tmp_path / "j.sqlite")
    CachedJudge(CountingJudgeDouble(), cache).score_batch([("a", "b")])
    bumped = CountingJudgeDouble()
    bumped.prompt_version = "v2"
    judge = CachedJudge(bumped, cache)
    judge.score_batch([("a", "b")])
    assert judge.counters["calls"] == 1 and len(cache) == 2


def test_insert_or_ignore_keeps_first_row(tmp_path):
    cache = JudgmentCache(tmp_path / "j.sqlite")
    assert cache.put_many([("k", Judgment(0.25))], "j", "v") == 1
    assert cache.put_many([("k", Judgment(0.75)), ("k2", Judgment(1.0))], "j", "v") == 1
    assert cache.get_many(["k", "k2", "absent"]) == {"k": Judgment(0.25), "k2": Judgment(1.0)}
    mode = sqlite3.connect(cache.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def _writer(path, worker, barrier, queue):
    judge = CachedJudge(CountingJudgeDouble(), JudgmentCache(path), batch_size=7)
    barrier.wait()
    # Overlapping pair sets: every worker shares half of its pairs with the next one.
    for round_ in range(20):
        pairs = [(f"s{(worker * 50 + round_ * 5 + i) % 200}", "evidence") for i in range(10)]
        assert judge.score_batch(pairs) == [score_of(s, e) for s, e in pairs]
    queue.put(judge.counters["calls"])


def test_concurrent_writers(tmp_path):
    path = tmp_path / "shared.sqlite"
    ctx = mp.get_context("spawn")
    n = 4
    barrier, queue = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(path, w, barrier, queue)) for w in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * n
    calls = [queue.get(timeout=5) for _ in range(n)]
    expected = {f"s{(w * 50 + r * 5 + i) % 200}" for w in range(n) for r in range(20) for i in range(10)}
    cache = JudgmentCache(path)
    assert len(cache) == len(expected)
    keys = {judgment_key(s, "evidence", "double:counting", "v1"): s for s in expected}
    stored = cache.get_many(keys)
    assert {k: j.score for k, j in stored.items()} == {k: score_of(s, "evidence") for k, s in keys.items()}
    # Workers may race on a shared pair, but never judge more than their own misses.
    assert len(expected) <= sum(calls) <= n * len(expected)


def test_the_old_module_names_still_import_for_one_release():
    from hallubench.judges.cache import JudgmentCache as Old
    from hallubench.judges.cached import CachedJudge as OldJudge
    from hallubench.judges.cached_judge import CachedJudge
    from hallubench.judges.judgment_cache import JudgmentCache

    assert (Old, OldJudge) == (JudgmentCache, CachedJudge)
