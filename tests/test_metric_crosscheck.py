"""The crosscheck evaluate module against a straightforward numpy computation on generated judgments."""
import math
import os

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from hallubench.metrics.crosscheck import crosscheck as crosscheck_module
from metric_doctests import METRICS

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SYSTEMS = ["a", "b", "c", "d"]
DOCUMENTS = ["q0", "q1", "q2", "q3", "q4"]
T = 0.1


@pytest.fixture(scope="module")
def crosscheck():
    import evaluate

    return evaluate.load(str(METRICS / "crosscheck"))


@pytest.fixture(scope="module")
def judged():
    """X[system][document][evidence] = per-sentence judgments; evidence = every system plus "reference"."""
    rng = np.random.default_rng(7)
    judged = {}
    for system in SYSTEMS:
        judged[system] = {}
        for document in DOCUMENTS:
            n_sentences = int(rng.integers(1, 6))
            judged[system][document] = {
                evidence: np.round(rng.random(n_sentences) * 20) / 20 for evidence in SYSTEMS + ["reference"]
            }
    return judged


def records(judged, keep=lambda system, evidence: True):
    """The generated judgments as record columns, built by hand (records_from_nested is tested against this)."""
    out = {"systems": [], "documents": [], "evidence": [], "judgments": []}
    for system, documents in judged.items():
        for document, sources in documents.items():
            for evidence, values in sources.items():
                if keep(system, evidence):
                    out["systems"].append(system)
                    out["documents"].append(document)
                    out["evidence"].append(evidence)
                    out["judgments"].append(values.tolist())
    return out


def test_records_from_nested(judged):
    assert crosscheck_module.records_from_nested(judged) == records(judged)
    as_list = crosscheck_module.records_from_nested({"s": [{"e": [0.5]}, {"e": [0.1, 0.2]}]})
    assert as_list == {
        "systems": ["s", "s"],
        "documents": ["0", "1"],
        "evidence": ["e", "e"],
        "judgments": [[0.5], [0.1, 0.2]],
    }


def softmax_by_hand(selfcheck):
    weights = np.exp(-np.asarray(selfcheck) / T)
    return weights / weights.sum()


def by_hand(judged, evidence_of, weights_of):
    """Sentence = weighted sum over evidence; document = mean of its sentences; system = mean of all its sentences."""
    systems, documents = {}, {}
    for system in judged:
        sentences = []
        for document, sources in judged[system].items():
            matrix = np.stack([sources[e] for e in evidence_of(system)])
            score = weights_of(system, document) @ matrix
            sentences.append(score)
            documents[system, document] = score.mean()
        systems[system] = np.concatenate(sentences).mean()
    return systems, documents


def pooled_selfcheck(judged, system):
    return np.concatenate([judged[system][d][system] for d in DOCUMENTS]).mean()


def assert_matches(results, expected_systems, expected_documents):
    for system, score in expected_systems.items():
        assert results["scores"][system] == pytest.approx(score)
    for (system, document), score in expected_documents.items():
        assert results["document_scores"][system][document] == pytest.approx(score)
    assert results["ranking"] == sorted(expected_systems, key=expected_systems.get)


def test_uniform_explicit_matches_hand_computation(crosscheck, judged):
    results = crosscheck.compute(**records(judged), evidence_models=SYSTEMS, weighting="uniform")
    expected = by_hand(judged, lambda s: SYSTEMS, lambda s, d: np.full(len(SYSTEMS), 1 / len(SYSTEMS)))
    assert_matches(results, *expected)
    first = judged["b"]["q2"]
    np.testing.assert_allclose(results["sentence_scores"]["b"]["q2"], np.mean([first[e] for e in SYSTEMS], axis=0))


def test_task_weights_follow_the_selfcheck_softmax(crosscheck, judged):
    results = crosscheck.compute(**records(judged), evidence_models=SYSTEMS, temperature=T)
    selfcheck = [pooled_selfcheck(judged, s) for s in SYSTEMS]
    eta = softmax_by_hand(selfcheck)
    assert_matches(results, *by_hand(judged, lambda s: SYSTEMS, lambda s, d: eta))
    for system in SYSTEMS:
        weights = results["eta"][system]
        assert sum(weights.values()) == pytest.approx(1.0)
        np.testing.assert_allclose([weights[e] for e in SYSTEMS], eta)
        # log(eta_i / eta_j) = -(S_i - S_j) / T
        assert math.log(weights["a"] / weights["b"]) == pytest.approx(-(selfcheck[0] - selfcheck[1]) / T)
    assert results["selfcheck_scores"] == pytest.approx(dict(zip(SYSTEMS, selfcheck)))


def test_per_query_weights(crosscheck, judged):
    results = crosscheck.compute(**records(judged), evidence_models=SYSTEMS, weighting="query", temperature=T)

    def eta(system, document):
        return softmax_by_hand([judged[e][document][e].mean() for e in SYSTEMS])

    assert_matches(results, *by_hand(judged, lambda s: SYSTEMS, eta))
    for document in DOCUMENTS:
        weights = results["eta"]["c"][document]
        np.testing.assert_allclose([weights[e] for e in SYSTEMS], eta("c", document))


def test_selfcheck_is_explicit_with_only_self_evidence(crosscheck, judged):
    selfcheck = crosscheck.compute(**records(judged), evidence_models=[])
    only_self = crosscheck.compute(**records(judged, keep=lambda s, e: s == e), weighting="uniform")
    assert selfcheck["scores"] == pytest.approx(only_self["scores"])
    assert selfcheck["scores"] == pytest.approx({s: pooled_selfcheck(judged, s) for s in SYSTEMS})
    assert selfcheck["eta"] == {s: {s: 1.0} for s in SYSTEMS}


def test_document_aggregation_averages_document_scores_and_selfcheck_per_document(crosscheck, judged):
    """aggregation="document" (eq. 1-2 as printed): a system scores the mean of its document scores, and eta's
    SelfCheck scores are aggregated the same way; documents keep their scores."""
    pooled = crosscheck.compute(**records(judged), evidence_models=SYSTEMS, temperature=T)
    results = crosscheck.compute(**records(judged), evidence_models=SYSTEMS, temperature=T, aggregation="document")
    selfcheck = [np.mean([judged[s][d][s].mean() for d in DOCUMENTS]) for s in SYSTEMS]
    assert results["selfcheck_scores"] == pytest.approx(dict(zip(SYSTEMS, selfcheck)))
    _, documents = by_hand(judged, lambda s: SYSTEMS, lambda s, d: softmax_by_hand(selfcheck))
    for system in SYSTEMS:
        expected = np.mean([documents[system, d] for d in DOCUMENTS])
        assert results["scores"][system] == pytest.approx(expected)
    assert results["scores"] != pytest.approx(pooled["scores"])  # the generated documents differ in length


def test_subset_sign_test_counts_subsets_where_the_method_ranks_closer():
    reference = {"a": 0.1, "b": 0.2, "c": 0.3}
    good = {"a": {"x": 0.1, "y": 0.1}, "b": {"x": 0.2, "y": 0.2}, "c": {"x": 0.3, "y": 0.3}}
    worse = {"a": {"x": 0.3, "y": 0.1}, "b": {"x": 0.2, "y": 0.2}, "c": {"x": 0.1, "y": 0.3}}
    test = crosscheck_module.subset_sign_test(good, worse, reference, [["x"], ["y"], ["x"]])
    # on "y" both rank perfectly: a tie is no success
    assert (test["successes"], test["subsets"]) == (2, 3)
    assert test["p_value"] == pytest.approx(0.5)  # P(X >= 2), X ~ Binomial(3, 0.5)
    with pytest.raises(ValueError, match="names document 'z'"):
        crosscheck_module.subset_sign_test(good, worse, reference, [["z"]])


def test_refcheck_uses_the_reference_as_evidence(crosscheck, judged):
    results = crosscheck.compute(
        **records(judged), evidence_models=["reference"], include_self=False, weighting="uniform"
    )
    assert_matches(results, *by_hand(judged, lambda s: ["reference"], lambda s, d: np.ones(1)))


def test_target_included_among_its_own_evidence(crosscheck, judged):
    results = crosscheck.compute(**records(judged), evidence_models=["a", "b"], weighting="uniform")
    assert sorted(results["eta"]["c"]) == ["a", "b", "c"]
    assert sorted(results["eta"]["a"]) == ["a", "b"]
    excluded = crosscheck.compute(**records(judged), evidence_models=["a", "b"], include_self=False)
    assert sorted(excluded["eta"]["c"]) == ["a", "b"]
    assert sorted(excluded["eta"]["a"]) == ["b"]


def test_include_self_false_without_evidence_models_leaves_own_samples_out(crosscheck, judged):
    results = crosscheck.compute(**records(judged), include_self=False, weighting="uniform")
    others = [e for e in SYSTEMS + ["reference"] if e != "c"]
    assert sorted(results["eta"]["c"]) == sorted(others)
    expected = np.mean([judged["c"]["q1"][e] for e in others], axis=0)
    np.testing.assert_allclose(results["sentence_scores"]["c"]["q1"], expected)


def test_audio_visual_takes_the_minimum_over_modalities(crosscheck, judged):
    modality = {"a": "audio", "b": "audio", "c": "visual", "d": "visual"}
    results = crosscheck.compute(**records(judged), evidence_models=SYSTEMS, evidence_modality=modality, temperature=T)
    selfcheck = {s: pooled_selfcheck(judged, s) for s in SYSTEMS}
    audio, visual = softmax_by_hand([selfcheck["a"], selfcheck["b"]]), softmax_by_hand([selfcheck["c"], selfcheck["d"]])
    for system in SYSTEMS:
        sentences = []
        for document in DOCUMENTS:
            sources = judged[system][document]
            c_audio = audio[0] * sources["a"] + audio[1] * sources["b"]
            c_visual = visual[0] * sources["c"] + visual[1] * sources["d"]
            expected = np.minimum(c_audio, c_visual)
            np.testing.assert_allclose(results["sentence_scores"][system][document], expected)
            sentences.append(expected)
        assert results["scores"][system] == pytest.approx(np.concatenate(sentences).mean())
        eta = results["eta"][system]
        assert eta["a"] + eta["b"] == pytest.approx(1.0)
        assert eta["c"] + eta["d"] == pytest.approx(1.0)


def test_given_selfcheck_scores_weight_evidence_without_own_records(crosscheck, judged):
    no_reference_self = records(judged)
    with pytest.raises(ValueError, match=r"evidence 'reference'.*no SelfCheck score"):
        crosscheck.compute(**no_reference_self, evidence_models=["reference", "a"], include_self=False)
    results = crosscheck.compute(
        **no_reference_self, evidence_models=["reference", "a"], include_self=False, selfcheck_scores={"reference": 0.0}
    )
    expected = softmax_by_hand([0.0, pooled_selfcheck(judged, "a")])
    np.testing.assert_allclose([results["eta"]["b"]["reference"], results["eta"]["b"]["a"]], expected)


def test_texts_config_with_judge_and_batch_judge(judged):
    import evaluate

    crosscheck = evaluate.load(str(METRICS / "crosscheck"), "texts")
    sentences = ["The sky is blue.", "Grass is red.", "Water is wet."]
    texts = {
        "systems": ["x", "x"],
        "documents": ["q", "q"],
        "evidence": ["x", "y"],
        "sentences": [sentences, sentences],
        "evidence_passages": [["The sky is blue. Water is wet."], ["Water is wet.", "The sky is blue, grass green."]],
    }

    def judge(sentence, passage):
        return 0.0 if sentence.rstrip(".") in passage else 1.0

    single = crosscheck.compute(**texts, judge=judge, weighting="uniform")
    # evidence x supports sentences 1 and 3; y's two passages support sentence 1 once and sentence 3 once; eq. 2
    # pools the three passages (x's one and y's two, equal eta): one of them does not support 1 and 3
    np.testing.assert_allclose(single["sentence_scores"]["x"]["q"], [1 / 3, 1.0, 1 / 3])
    calls = []

    def batch_judge(pairs):
        calls.append(len(pairs))
        return [judge(s, p) for s, p in pairs]

    batched = crosscheck.compute(**texts, batch_judge=batch_judge, weighting="uniform")
    assert batched["sentence_scores"] == single["sentence_scores"]
    assert calls == [3, 6]
    with pytest.raises(ValueError, match=r"judge output for record 0\[0\]"):
        crosscheck.compute(**texts, judge=lambda s, p: 2.0, weighting="uniform")
    with pytest.raises(ValueError, match=r"exactly one of `judge` or `batch_judge`"):
        crosscheck.compute(**texts, weighting="uniform")


def test_eq2_pools_samples_so_an_evidence_model_with_more_samples_weighs_more(crosscheck):
    # a's one sample does not support the sentence, b's three samples all do: eq. 2 gives 1 / (1 + 3)
    one_vs_three = columns(["t", "t"], ["q", "q"], ["a", "b"], [[1.0], [0.0]])
    results = crosscheck.compute(**one_vs_three, num_samples=[1, 3], weighting="uniform", include_self=False)
    assert results["scores"]["t"] == pytest.approx(0.25)
    equal = crosscheck.compute(**one_vs_three, num_samples=[3, 3], weighting="uniform", include_self=False)
    assert equal["scores"]["t"] == pytest.approx(0.5) == crosscheck.compute(**one_vs_three, weighting="uniform",
                                                                          include_self=False)["scores"]["t"]


def test_eq2_with_task_weights_per_modality_and_unequal_counts_matches_hand_computation(crosscheck, judged):
    rng = np.random.default_rng(11)
    cols = records(judged, keep=lambda system, evidence: evidence != "reference")
    counts = {source: int(rng.integers(1, 21)) for source in SYSTEMS}
    modality = {"a": "audio", "b": "audio", "c": "visual", "d": "visual"}
    results = crosscheck.compute(**cols, num_samples=[counts[e] for e in cols["evidence"]], evidence_modality=modality,
                                 temperature=T)
    selfcheck = {s: pooled_selfcheck(judged, s) for s in SYSTEMS}
    for system in SYSTEMS:
        sentences = []
        for document in DOCUMENTS:
            x = judged[system][document]
            by_modality = []
            for group in (["a", "b"], ["c", "d"]):
                eta = softmax_by_hand([selfcheck[e] for e in group])
                weights = [w * counts[e] for w, e in zip(eta, group)]
                by_modality.append(sum(w * x[e] for w, e in zip(weights, group)) / sum(weights))
            expected = np.minimum(*by_modality)
            np.testing.assert_allclose(results["sentence_scores"][system][document], expected)
            sentences.append(expected)
        assert results["scores"][system] == pytest.approx(np.concatenate(sentences).mean())


def test_rank_correlation_matches_scipy():
    rng = np.random.default_rng(3)
    x, y = rng.random(12), rng.random(12)
    x[3] = x[5]  # a tie: average ranks
    helper = crosscheck_module.rank_correlation
    assert helper(x.tolist(), y.tolist()) == pytest.approx(spearmanr(x, y)[0])
    assert helper(x.tolist(), y.tolist(), level="document") == pytest.approx(pearsonr(x, y)[0])
    nested_x = {"s1": {"d1": x[0], "d2": x[1]}, "s2": {"d1": x[2]}}
    nested_y = {"s2": {"d1": y[2]}, "s1": {"d2": y[1], "d1": y[0]}}
    assert helper(nested_x, nested_y, level="document") == pytest.approx(pearsonr(x[:3], y[:3])[0])
    with pytest.raises(ValueError, match=r"`reference` has no value for s1/d2"):
        helper(nested_x, {"s1": {"d1": 0.1}, "s2": {"d1": 0.2}})
    with pytest.raises(ValueError, match=r"`scores` value 1 is nan"):
        helper([0.1, float("nan"), 0.3], [1, 2, 3])
    with pytest.raises(ValueError, match=r"`level`"):
        helper([1, 2], [1, 2], level="passage")


def columns(systems, documents, evidence, judgments):
    return dict(systems=systems, documents=documents, evidence=evidence, judgments=judgments)


ONE = columns(["a"], ["q"], ["a"], [[0.1]])
TWO_DOCUMENTS = dict(systems=["a", "a"], documents=["q", "r"], evidence=["a", "a"])
NAN = float("nan")
BAD_INPUTS = [
    (columns([], [], [], []), {}, r"`judgments` is empty"),
    (columns(["a", "a"], ["q"], ["a"], [[0.1]]), {}, r"`documents` has 1 records.*first index missing .* is 1"),
    (columns(["a"], ["q"], ["a"], [[0.1, NAN]]), {}, r"`judgments\[0\]\[1\]` is nan"),
    ({**TWO_DOCUMENTS, "judgments": [[0.1], [1.5]]}, {}, r"`judgments\[1\]\[0\]` is 1.5"),
    ({**TWO_DOCUMENTS, "judgments": [[0.1], [-0.2]]}, {}, r"`judgments\[1\]\[0\]` is -0.2"),
    ({**TWO_DOCUMENTS, "judgments": [[0.1], []]}, {}, r"`judgments\[1\]` is empty"),
    (columns(["a", "a"], ["q", "q"], ["a", "a"], [[0.1], [0.2]]), {}, r"record 1 repeats"),
    (columns(["a", "a"], ["q", "q"], ["a", "b"], [[0.1], [0.2, 0.3]]), {}, r"`judgments\[1\]` has 2 sentences"),
    (
        columns(["a"] * 3, ["q", "q", "r"], ["a", "b", "a"], [[0.1], [0.2], [0.3]]),
        {"weighting": "uniform"},
        r"document 'r'.*same evidence",
    ),
    (ONE, {"weighting": "softmax"}, r"`weighting`"),
    (ONE, {"aggregation": "system"}, r"`aggregation` is 'system'"),
    (ONE, {"temperature": 0}, r"`temperature`"),
    (ONE, {"evidence_models": [], "include_self": False}, r"no evidence to check against"),
    (ONE, {"evidence_models": ["a", "b"]}, r"`evidence_models` names \['b'\], which no record has"),
    (ONE, {"evidence_modality": {"b": "audio"}}, r"no modality for evidence 'a'"),
    (dict(systems=["a"], documents=["q"], evidence=["a"]), {}, r"`judgments` is missing"),
    (ONE, {"num_samples": [1, 2]}, r"`num_samples` has 2 counts for 1 records"),
    (ONE, {"num_samples": [0]}, r"`num_samples\[0\]` is 0"),
    (ONE, {"num_samples": [1.5]}, r"`num_samples\[0\]` is 1.5"),
]


@pytest.mark.parametrize("records_, options, message", BAD_INPUTS)
def test_bad_input_names_the_argument(crosscheck, records_, options, message):
    with pytest.raises(ValueError, match=message):
        crosscheck.compute(**records_, **options)


def test_unknown_config_is_refused():
    import evaluate

    with pytest.raises(ValueError, match=r"config 'sentences' is unknown"):
        evaluate.load(str(METRICS / "crosscheck"), "sentences")





def test_requested_evidence_a_system_lacks_is_reported(crosscheck, judged):
    complete = crosscheck.compute(**records(judged), evidence_models=["a", "b"], include_self=False)
    assert complete["missing_evidence"] == {}  # a system's own samples, left out on purpose, are not "missing"
    lacking = crosscheck.compute(**records(judged, keep=lambda s, e: not (s == "a" and e == "b")),
                                 evidence_models=["a", "b", "c"], weighting="uniform")
    assert lacking["missing_evidence"] == {"a": ["b"]}
    assert sorted(lacking["eta"]["a"]) == ["a", "c"]
