"""NLI judge on a tiny random BERT classifier with a tiny word-piece vocabulary, built offline."""
import pytest
import torch
from nli_support import make_tiny_nli, tiny_classifier, tiny_tokenizer

from hallubench.judges.nli import NLIJudge

PAIRS = [("the cat sat on the mat .", "a dog is red ."), ("paris is in france .", "paris is big ."), ("a cat .", "the mat is blue .")]


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return make_tiny_nli(tmp_path_factory.mktemp("tiny-mnli"))


def _logits(model, tokenizer, pairs):
    enc = tokenizer([s for s, _ in pairs], [e for _, e in pairs], padding=True, return_tensors="pt")
    with torch.no_grad():
        return model(**enc).logits


def test_scores_are_contradiction_normalised_over_entailment(checkpoint, tokenizer, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    judge = NLIJudge.from_pretrained(checkpoint, batch_size=2)
    scores = judge.score_batch(PAIRS)
    logits = _logits(judge.model, tokenizer, PAIRS)
    expected = torch.sigmoid(logits[:, 2] - logits[:, 0])  # P(c) / (P(e) + P(c)), neutral ignored
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == pytest.approx(expected.tolist(), abs=1e-6)
    assert judge.judge_id == f"nli:{checkpoint}:contradiction=2,entailment=0" and judge.counters["pairs"] == 3


def test_label_index_comes_from_config_names_case_insensitively(tokenizer):
    plain = NLIJudge(tiny_classifier({0: "entailment", 1: "neutral", 2: "contradiction"}), tokenizer)
    # Same weights, label names swapped (and upper-cased): the score must follow the names.
    swapped = NLIJudge(tiny_classifier({0: "CONTRADICTION", 1: "Neutral", 2: "Entailment"}), tokenizer)
    assert (swapped.contradiction_index, swapped.entailment_index) == (0, 2)
    a, b = plain.score_batch(PAIRS), swapped.score_batch(PAIRS)
    assert [x + y for x, y in zip(a, b)] == pytest.approx([1.0] * len(PAIRS), abs=1e-6)
    assert a != pytest.approx([0.5] * len(PAIRS), abs=1e-4)  # random head: the swap is visible


def test_model_without_contradiction_label_is_refused(tokenizer):
    model = tiny_classifier({0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(ValueError, match="no 'contradiction' label"):
        NLIJudge(model, tokenizer, name="tiny")
    judge = NLIJudge(model, tokenizer, contradiction="label_1", entailment="LABEL_0")
    assert 0.0 <= judge("a cat .", "a dog .") <= 1.0
    swapped = NLIJudge(model, tokenizer, contradiction="label_0", entailment="LABEL_1")
    assert swapped.judge_id != judge.judge_id  # other labels, other scores: they must not share cached judgments
