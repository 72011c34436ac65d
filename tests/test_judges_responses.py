"""judge_responses: sentence splitting, pairing with evidence passages, averaging, record layout."""
import pytest

from hallubench.judges import BaseJudge, Judgment, judge_responses
from hallubench.judges.sentences import sentence_backend, spacy_available, split_sentences


class TableJudgeDouble(BaseJudge):
    """Test double: scores from a fixed table; an unexpected pair is an error."""

    judge_id = "double:table"
    prompt_version = "v1"

    def __init__(self, table):
        super().__init__()
        self.table = table
        self.asked = []

    def _judge(self, pairs):
        self.asked.extend(pairs)
        return [Judgment(self.table[pair]) for pair in pairs]


S1, S2, S3 = "Paris is in France.", "It has a tower.", "Rome is in Italy."
TARGETS = {"a": [f"{S1} {S2}", S3], "b": [S3, "  "]}
EVIDENCE = {"e1": [["p1", "p2"], ["p3"]], "e2": [["p4"], ["p5", "p6", "p7"]]}
TABLE = {
    (S1, "p1"): 0.0, (S1, "p2"): 1.0, (S2, "p1"): 1.0, (S2, "p2"): 0.5, (S3, "p1"): 0.25, (S3, "p2"): 0.75,
    (S3, "p3"): 1.0, (S1, "p4"): 0.0, (S2, "p4"): 1.0, (S3, "p4"): 0.5,
    (S3, "p5"): 0.0, (S3, "p6"): 1.0, (S3, "p7"): 0.5,
}


def test_records_and_means_match_a_hand_computation():
    judge = TableJudgeDouble(TABLE)
    records = judge_responses(TARGETS, EVIDENCE, judge, documents=["q1", "q2"], sentence_splitter="pysbd")
    rows = list(zip(records.systems, records.documents, records.evidence, records.judgments))
    assert rows == [
        ("a", "q1", "e1", [0.5, 0.75]),   # S1: (0 + 1) / 2, S2: (1 + 0.5) / 2
        ("a", "q1", "e2", [0.0, 1.0]),
        ("a", "q2", "e1", [1.0]),
        ("a", "q2", "e2", [0.5]),         # (0 + 1 + 0.5) / 3
        ("b", "q1", "e1", [0.5]),         # S3: (0.25 + 0.75) / 2
        ("b", "q1", "e2", [0.5]),
    ]
    assert records.empty == [("b", "q2")]
    assert sorted(set(judge.asked)) == sorted(TABLE)  # every needed pair, nothing else
    assert set(records.compute_kwargs()) == {"systems", "documents", "evidence", "judgments", "num_samples"}
    assert records.num_samples == [2, 1, 1, 3, 2, 1]  # each record's passages: e1 has 2 then 1, e2 1 then 3


def test_one_judge_per_evidence_model():
    halves = {pair: 0.5 for pair in TABLE}
    judges = {"e1": TableJudgeDouble(TABLE), "e2": TableJudgeDouble(halves)}
    records = judge_responses(TARGETS, EVIDENCE, judges, sentence_splitter="pysbd")
    by_key = {(s, d, e): j for s, d, e, j in zip(records.systems, records.documents, records.evidence, records.judgments)}
    assert by_key["a", "0", "e1"] == [0.5, 0.75] and by_key["a", "0", "e2"] == [0.5, 0.5]
    assert all(pair[1] in ("p1", "p2", "p3") for pair in judges["e1"].asked)
    with pytest.raises(ValueError, match=r"no judge for evidence models \['e2'\]"):
        judge_responses(TARGETS, EVIDENCE, {"e1": judges["e1"]})


@pytest.mark.parametrize(
    "targets, evidence, message",
    [
        ({"a": ["x."]}, {"e": [["p"], ["q"]]}, "one entry per query"),
        ({"a": ["x."]}, {"e": [[]]}, r"evidence\['e'\]\[0\] must be a non-empty list"),
        ({"a": ["x."]}, {"e": ["passage"]}, r"evidence\['e'\]\[0\] must be a non-empty list"),
        ({}, {"e": [["p"]]}, "at least one target"),
    ],
)
def test_bad_input_names_the_entry(targets, evidence, message):
    with pytest.raises(ValueError, match=message):
        judge_responses(targets, evidence, TableJudgeDouble({}))


def test_records_feed_the_crosscheck_metric():
    crosscheck = pytest.importorskip("hallubench.metrics.crosscheck.crosscheck")
    records = judge_responses(TARGETS, EVIDENCE, TableJudgeDouble(TABLE), sentence_splitter="pysbd")
    table = crosscheck.build_table(records.systems, records.documents, records.evidence, records.judgments)
    assert table["a"]["0"]["e1"].tolist() == [0.5, 0.75] and "1" not in table["b"]


def test_split_sentences():
    text = "Dr. Smith moved to Washington D.C. in 1990. He was 3.5 years old!  Then what?"
    assert split_sentences(text, backend="pysbd") == ["Dr. Smith moved to Washington D.C. in 1990.", "He was 3.5 years old!", "Then what?"]
    assert split_sentences(" \n ") == []
    assert split_sentences("Bonjour. Je suis là.", language="fr", backend="pysbd") == ["Bonjour.", "Je suis là."]
    with pytest.raises(ValueError, match="language='xx'"):
        split_sentences("x", language="xx", backend="pysbd")
    with pytest.raises(ValueError, match="backend='nltk'"):
        split_sentences("x", backend="nltk")


def test_spacy_is_used_only_when_installed():
    if spacy_available():
        assert sentence_backend() == "spacy"
        assert split_sentences("It rains. We stay.", backend="spacy") == ["It rains.", "We stay."]
    else:
        assert sentence_backend() == "pysbd"
        with pytest.raises(ValueError, match="needs spaCy with en_core_web_sm"):
            split_sentences("x", backend="spacy")
    assert sentence_backend("fr") == "pysbd"



def test_records_pool_every_sample_as_eq_2():
    """Through score_records, an evidence model with 3 passages weighs 3x one with 1 (eq. 2), not equally."""
    from hallubench.ranking.aggregate import score_records

    targets = {"a": [S3]}
    evidence = {"e1": [["p1"]], "e2": [["p5", "p6", "p7"]]}
    table = {(S3, "p1"): 1.0, (S3, "p5"): 0.0, (S3, "p6"): 0.0, (S3, "p7"): 0.0}
    records = judge_responses(targets, evidence, TableJudgeDouble(table), sentence_splitter="pysbd")
    assert records.num_samples == [1, 3]
    pooled = score_records(records.compute_kwargs(), weighting="uniform")["scores"]["a"]
    assert pooled == pytest.approx(1 / 4)  # (1 * 1.0 + 3 * 0.0) / 4; the mean of the two means would be 0.5
