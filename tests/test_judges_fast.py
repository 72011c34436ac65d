"""Judging a ranking does each piece of work once: every unique text encoded once, every response split
once, one judge call per distinct judge; missing pairs grouped by passage and length-sorted; a progress bar."""
import pytest

from hallubench.judges import CachedJudge, JudgmentCache, judge_responses
from hallubench.judges import sentences as sentences_module
from hallubench.judges.base import BaseJudge, Judgment
from hallubench.judges.sentences import split_sentences

TARGETS = {"a": ["Cats purr. Dogs bark.", "The sky is blue."], "b": ["Cats purr. Fish swim.", "Grass is green."]}
EVIDENCE = {"a": [["Cats purr loudly. Dogs bark at night.", "Cats sleep."], ["The sky is blue today."]],
            "b": [["Fish swim. Cats purr.", "Birds fly."], ["Grass is green. The sky is grey."]]}


class RecordingJudge(BaseJudge):
    """Test double: scores a pair by its sentence length; logs every batch it is given."""

    judge_id, prompt_version = "recording", "1"

    def __init__(self):
        super().__init__()
        self.batches = []

    def _judge(self, pairs):
        self.batches.append(list(pairs))
        return [Judgment((len(s) % 7) / 7) for s, _ in pairs]


def test_one_call_per_distinct_judge_and_the_same_scores_as_per_model_calls(tmp_path):
    shared = RecordingJudge()
    records = judge_responses(TARGETS, EVIDENCE, CachedJudge(shared, JudgmentCache(tmp_path / "c.sqlite"),
                                                             batch_size=1000, progress=False))
    assert len(shared.batches) == 1  # both evidence models' pairs in one call
    separate = {model: RecordingJudge() for model in EVIDENCE}
    apart = judge_responses(TARGETS, EVIDENCE, separate)
    assert [len(judge.batches) for judge in separate.values()] == [1, 1]
    assert records.judgments == apart.judgments and records.evidence == apart.evidence


def test_missing_pairs_run_grouped_by_passage_and_sorted_by_length(tmp_path):
    inner = RecordingJudge()
    judge = CachedJudge(inner, JudgmentCache(tmp_path / "c.sqlite"), batch_size=3, progress=False)
    pairs = [(s, p) for s in ("Short.", "A much longer sentence here.", "Mid sentence.")
             for p in ("A long passage about many things.", "Tiny.", "A long passage about many things.")]
    scores = judge.score_batch(pairs)
    assert scores == RecordingJudge().score_batch(pairs)  # order of work never changes what comes back
    sent = [pair for batch in inner.batches for pair in batch]
    assert len(sent) == 6  # unique pairs only
    passages = [p for _, p in sent]
    assert passages == sorted(passages, key=len)  # shortest prompts first, a passage's pairs together
    assert [s for s, _ in sent[:3]] == ["Short.", "Mid sentence.", "A much longer sentence here."]


def test_progress_bar_counts_the_pairs_judged(tmp_path, capsys):
    judge = CachedJudge(RecordingJudge(), JudgmentCache(tmp_path / "c.sqlite"), batch_size=2)
    judge.score_batch([("a.", "b."), ("c.", "d."), ("e.", "f.")])
    err = capsys.readouterr().err
    assert "judging (recording)" in err and "3/3" in err and "pair" in err
    judge.score_batch([("a.", "b.")])  # all cached: nothing to judge, no bar
    assert capsys.readouterr().err == ""


def test_each_response_and_passage_is_split_once(monkeypatch, tmp_path):
    calls = []
    real = sentences_module._pysbd_segmenter("en")

    class Counting:
        def segment(self, text):
            calls.append(text)
            return real.segment(text)

    sentences_module._split.cache_clear()
    monkeypatch.setattr(sentences_module, "_pysbd_segmenter", lambda language: Counting())
    texts = [t for rs in TARGETS.values() for t in rs]
    for _ in range(3):
        assert [split_sentences(t, backend="pysbd") for t in texts][0] == ["Cats purr.", "Dogs bark."]
    assert sorted(calls) == sorted(texts)
    sentences_module._split.cache_clear()


@pytest.fixture(scope="module")
def embedding_judge():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        from hallubench.judges.embedding import EmbeddingJudge

        yield EmbeddingJudge(sentence_splitter="pysbd")


def test_embedding_judge_encodes_each_unique_text_once_per_ranking(embedding_judge, tmp_path):
    judge = CachedJudge(embedding_judge, JudgmentCache(tmp_path / "c.sqlite"), batch_size=2, progress=False)
    records = judge_responses(TARGETS, EVIDENCE, judge, sentence_splitter="pysbd")
    unique = {s for rs in TARGETS.values() for r in rs for s in split_sentences(r, backend="pysbd")}
    unique |= {s for per_query in EVIDENCE.values() for ps in per_query for p in ps
               for s in split_sentences(p, backend="pysbd")}
    assert embedding_judge.counters["encoded"] == len(unique)  # across 2-pair batches and both evidence models
    assert all(0.0 <= x <= 1.0 for scores in records.judgments for x in scores)
    # "Cats purr." is word for word in model b's first passage: fully supported by it, a mean of 0 and 1 - cos.
    index = records.systems.index("a")
    assert records.evidence[index + 1] == "b"
    other = embedding_judge("Cats purr.", "Birds fly.")
    assert records.judgments[index + 1][0] == pytest.approx(other / 2, abs=1e-5)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 7])
def test_calls_are_cut_at_passage_boundaries_only(size):
    from hallubench.judges.cached_judge import passage_calls

    passages = ["a", "a", "a", "b", "c", "c", "d", "d", "d", "d"]
    keys = [f"k{i}" for i in range(len(passages))]
    calls = passage_calls(keys, passages, size)
    assert [key for call in calls for key in call] == keys
    runs = {p: {k for k, q in zip(keys, passages) if q == p} for p in set(passages)}
    for run in runs.values():  # every passage's pairs in one call
        assert sum(bool(run & set(call)) for call in calls) == 1
    for call in calls:  # no call over `size` but a single passage's own
        assert len(call) <= size or len({passages[keys.index(k)] for k in call}) == 1
