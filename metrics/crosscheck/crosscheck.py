# Copyright 2026 The hallubench authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
"""CrossCheckGPT: reference-free hallucination ranking from cross-system consistency judgments."""

import math
import numbers
from collections import defaultdict
from typing import Callable, Mapping, Optional, Sequence

import datasets
import numpy as np
from scipy.stats import binomtest, pearsonr, spearmanr

import evaluate


_DESCRIPTION = """
CrossCheckGPT (Sun, Manakul et al., 2024) ranks systems by hallucination without references: a sentence of a target
system's passage is judged against evidence, the passages other systems (and the target itself) write for the same
query. A judgment x in [0, 1] is 0 when the evidence supports the sentence and 1 when it does not; an evidence
model's judgment of a sentence is the mean over its N_j sampled passages. The sentence score pools every sampled
passage with its model's weight, C(M, r_i) = sum_j eta_j sum_n x_j^n(r_i) / sum_j eta_j N_j (CrossCheck-explicit,
eq. 2), i.e. sum_j eta_j N_j x_j(r_i) / sum_j eta_j N_j: with equal sample counts, the weighted sum sum_j eta_j x_j(r_i);
CrossCheck-implicit (eq. 3) has the same form with x_j asked of evidence model j directly. The weights are uniform or eta_j = softmax(-S_selfcheck(M_j) / T)
(eq. 4), where S_selfcheck(M_j) is evidence model j's own SelfCheckGPT score, for the whole task or per query.
SelfCheckGPT (eq. 1) is the case where the only evidence is the target's own samples, RefCheck the case where the
evidence is a human reference. With evidence from several modalities (audio-visual), a sentence scores the minimum
over modalities, min(C_audio, C_visual). Document scores average a passage's sentences; a system scores all its
sentences pooled (aggregation="sentence", the authors' code and Table 1) or the mean of its document scores
(aggregation="document", eq. 1-2 as printed: an average over queries). Lower is better.
"""


_KWARGS_DESCRIPTION = """
Args (config "judgments", the default; one record per system, document and evidence model):
    systems (`list` of `str`): the target system of each record.
    documents (`list` of `str`): the query / document id of each record.
    evidence (`list` of `str`): the evidence model of each record (the system's own name for its own samples,
        any name such as "reference" for a human reference).
    judgments (`list` of `list` of `float`): per record, one judgment in [0, 1] per sentence of the system's passage
        (already averaged over the evidence model's samples).
    num_samples (`list` of `int`, *optional*, keyword): per record, how many sampled passages its judgments average
        over (N_j in eq. 2). Defaults to the same count for every record.
Args (config "texts"; the same records with texts instead of judgments):
    systems, documents, evidence: as above.
    sentences (`list` of `list` of `str`): per record, the sentences of the system's passage.
    evidence_passages (`list` of `list` of `str`): per record, the evidence model's sampled passages.
    judge (`callable`): `judge(sentence, evidence_passage) -> float` in [0, 1] (1 = not supported), or
    batch_judge (`callable`): `batch_judge(list of (sentence, evidence_passage)) -> list of float`.
    N_j is the number of each record's evidence passages.
    `records_from_nested({system: [{evidence model: [per-sentence judgment]} per document]})` builds these columns.
Keyword arguments (both configs):
    weighting (`str`): "uniform", "task" (one eta per evidence model for the whole task, eq. 4) or "query"
        (eta per query from each evidence model's SelfCheck score on that query). Defaults to "task".
    temperature (`float`): T in eq. 4. Defaults to 0.1.
    aggregation (`str`): how a system's score (and, for eta, an evidence model's SelfCheck score) is made from its
        sentences: "sentence" pools every sentence of every document (the authors' code, Table 1), "document"
        averages the document scores (eq. 1-2 as printed). Defaults to "sentence".
    evidence_models (`list` of `str`, *optional*): use only these evidence models (all in the records by default).
    include_self (`bool`): use each system's own samples as evidence (with evidence_models, in addition to them);
        False leaves them out. Defaults to True, so evidence_models=[] gives SelfCheckGPT.
    evidence_modality (`dict` of `str` to `str`, *optional*): the modality of each evidence model; a sentence then
        scores the minimum over modalities, with eta normalized within each modality.
    selfcheck_scores (`dict` of `str` to `float`, *optional*): SelfCheck scores for eta with "task" weighting, for
        evidence models that have no own records; a given score takes precedence over one computed from records.

Returns:
    scores (`dict`): per system, the mean sentence score over all its sentences ("sentence" aggregation) or the mean
        of its document scores ("document"); lower = less hallucination.
    ranking (`list` of `str`): systems from least to most hallucinating.
    eta (`dict`): per system, the weight of each evidence model ("query": per system, per document).
    selfcheck_scores (`dict`): the task-level SelfCheck score of each evidence model used (empty for "uniform"); with
        "query" weighting eta comes from each model's score on the document instead, so these are for reference only.
    document_scores (`dict`): per system, per document, the mean sentence score of the passage.
    sentence_scores (`dict`): per system, per document, the sentence scores.
    missing_evidence (`dict`): per system, the `evidence_models` its records do not have (checked without them).
    n (`int`): the records; unparsed (`int`): 0 (judgments are numbers, nothing is parsed).

Examples:

    >>> crosscheck = evaluate.load("crosscheck")
    >>> results = crosscheck.compute(
    ...     systems=["a", "a", "b", "b"],
    ...     documents=["q1", "q1", "q1", "q1"],
    ...     evidence=["a", "b", "a", "b"],
    ...     judgments=[[0.0, 0.2], [0.2, 0.6], [0.5], [0.1]],
    ...     weighting="uniform",
    ... )
    >>> print(results["ranking"], results["scores"])
    ['a', 'b'] {'a': 0.25, 'b': 0.3}

    SelfCheckGPT is the case with only the system's own samples as evidence:

    >>> results = crosscheck.compute(
    ...     systems=["a", "a", "b", "b"],
    ...     documents=["q1", "q1", "q1", "q1"],
    ...     evidence=["a", "b", "a", "b"],
    ...     judgments=[[0.0, 0.2], [0.2, 0.6], [0.5], [0.1]],
    ...     evidence_models=[],
    ... )
    >>> print(results["scores"])
    {'a': 0.1, 'b': 0.1}

    With texts and a judge:

    >>> crosscheck = evaluate.load("crosscheck", "texts")
    >>> def judge(sentence, passage):
    ...     return 0.0 if sentence.lower() in passage.lower() else 1.0
    >>> results = crosscheck.compute(
    ...     systems=["a", "a"],
    ...     documents=["q1", "q1"],
    ...     evidence=["a", "b"],
    ...     sentences=[["Paris is in France.", "It has 90 million people."]] * 2,
    ...     evidence_passages=[["Paris is in France."], ["Paris is in France. It is the capital."]],
    ...     judge=judge,
    ...     weighting="uniform",
    ... )
    >>> print(results["sentence_scores"])
    {'a': {'q1': [0.0, 1.0]}}
"""


_CITATION = """
@article{sun2024crosscheckgpt,
  title={CrossCheckGPT: Universal Hallucination Ranking for Multimodal Foundation Models},
  author={Sun, Guangzhi and Manakul, Potsawee and Liusie, Adian and Pipatanakul, Kunat and Zhang, Chao and
          Woodland, Phil and Gales, Mark},
  journal={arXiv preprint arXiv:2405.13684},
  year={2024}
}
"""

WEIGHTINGS = ("uniform", "task", "query")
AGGREGATIONS = ("sentence", "document")


def judge_passages(
    sentences: Sequence[str],
    passages: Sequence[str],
    judge: Optional[Callable[[str, str], float]] = None,
    batch_judge: Optional[Callable[[list], list]] = None,
    name: str = "judge output",
) -> list[float]:
    """Per sentence, the mean judgment over the evidence passages (eq. 1's inner mean); `name` labels errors."""
    pairs = [(sentence, passage) for sentence in sentences for passage in passages]
    values = list(batch_judge(pairs)) if batch_judge is not None else [judge(s, p) for s, p in pairs]
    if len(values) != len(pairs):
        raise ValueError(f"`batch_judge` returned {len(values)} judgments for {len(pairs)} (sentence, passage) pairs.")
    _check_judgments(name, values)
    return np.asarray(values, dtype=float).reshape(len(sentences), len(passages)).mean(axis=1).tolist()


def softmax_weights(selfcheck: Mapping[str, float], temperature: float) -> dict[str, float]:
    """eta_j = softmax(-S_selfcheck(M_j) / T) over the given evidence models (eq. 4)."""
    names = list(selfcheck)
    logits = -np.array([selfcheck[name] for name in names], dtype=float) / temperature
    weights = np.exp(logits - logits.max())
    return dict(zip(names, (weights / weights.sum()).tolist()))


def rank_correlation(scores, reference, level: str = "system") -> float:
    """Spearman (level="system", average ranks for ties) or Pearson (level="document") correlation.

    `scores` and `reference` are equal-length sequences, or dicts with the same keys (values may be dicts again, e.g.
    the per-system per-document `document_scores`, whose leaves are paired by their key paths). Orient both the same
    way (e.g. higher = more hallucination); negate one when they point opposite ways. A constant side has no
    correlation: the result is then NaN (scipy warns).
    """
    if level not in ("system", "document"):
        raise ValueError(f'`level` is {level!r}; use "system" (Spearman) or "document" (Pearson).')
    x, y = _paired_values(scores, reference)
    if len(x) < 2:
        raise ValueError(f"`scores` has {len(x)} value(s); a correlation needs at least two.")
    statistic = spearmanr(x, y)[0] if level == "system" else pearsonr(x, y)[0]
    return float(statistic)


def subset_sign_test(document_scores: Mapping, baseline_document_scores: Mapping, reference: Mapping,
                     subsets: Sequence[Sequence[str]]) -> dict:
    """Is a method better than a baseline at ranking systems on subsets of the documents (CrossCheckGPT Table 2)?

    `document_scores` and `baseline_document_scores` are per system, per document scores (the metric's
    `document_scores`); `reference` is per system, oriented like them (negate a higher-is-better one). On each
    subset (a list of document ids) a system scores the mean of its document scores there, and the method succeeds
    where its Spearman correlation with `reference` beats the baseline's (a tie is no success). Returns `successes`,
    `subsets`, `success_rate` and `p_value`: the one-tailed sign test (binomial, H0: not better than the baseline).
    """
    if not subsets:
        raise ValueError("`subsets` is empty; give at least one list of document ids.")
    successes = 0
    for i, subset in enumerate(subsets):
        correlations = []
        for scores in (document_scores, baseline_document_scores):
            missing = [(system, d) for system, documents in scores.items() for d in subset if d not in documents]
            if missing:
                raise ValueError(f"subset {i} names document {missing[0][1]!r}, which system {missing[0][0]!r} lacks.")
            means = {system: float(np.mean([documents[d] for d in subset])) for system, documents in scores.items()}
            correlations.append(rank_correlation(means, reference, level="system"))
        successes += correlations[0] > correlations[1]
    test = binomtest(successes, len(subsets), alternative="greater")
    return {"successes": successes, "subsets": len(subsets), "success_rate": successes / len(subsets),
            "p_value": float(test.pvalue)}


def _flatten(values, path=()) -> dict:
    if isinstance(values, Mapping):
        return {k: v for key, sub in values.items() for k, v in _flatten(sub, path + (key,)).items()}
    return {path: values}


def _paired_values(scores, reference) -> tuple[list, list]:
    if isinstance(scores, Mapping) or isinstance(reference, Mapping):
        flat_scores, flat_reference = _flatten(scores), _flatten(reference)
        for key in flat_scores:
            if key not in flat_reference:
                raise ValueError(f"`reference` has no value for {'/'.join(map(str, key))}, which `scores` has.")
        if len(flat_reference) != len(flat_scores):
            extra = next(key for key in flat_reference if key not in flat_scores)
            raise ValueError(f"`scores` has no value for {'/'.join(map(str, extra))}, which `reference` has.")
        keys = list(flat_scores)
        x, y = [flat_scores[key] for key in keys], [flat_reference[key] for key in keys]
    else:
        x, y = list(scores), list(reference)
        if len(x) != len(y):
            raise ValueError(f"`scores` has {len(x)} values but `reference` has {len(y)}.")
    for name, values in (("scores", x), ("reference", y)):
        for i, value in enumerate(values):
            if not isinstance(value, numbers.Real) or math.isnan(value):
                raise ValueError(f"`{name}` value {i} is {value!r}, not a number.")
    return x, y


def _check_real(name: str, value) -> float:
    """`value` if it is a finite number (not a bool or a numeric string); ValueError naming `name` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"`{name}` is {value!r}; it must be a finite number.")
    return float(value)


def _check_judgments(name: str, values) -> None:
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise ValueError(f"`{name}` is {values!r}; give a list of per-sentence judgments.")
    for k, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value) or not 0.0 <= value <= 1.0:
            raise ValueError(f"`{name}[{k}]` is {value!r}; judgments must be numbers in [0, 1] (1 = not supported).")


def records_from_nested(nested: Mapping) -> dict[str, list]:
    """{system: documents} -> the four record columns of compute(), documents being a list (ids "0", "1", ...) or a
    dict of {document id: {evidence model: [per-sentence judgment]}}."""
    columns = {"systems": [], "documents": [], "evidence": [], "judgments": []}
    for system, documents in nested.items():
        items = documents.items() if isinstance(documents, Mapping) else enumerate(documents)
        for document, sources in items:
            for source, values in sources.items():
                columns["systems"].append(system)
                columns["documents"].append(str(document))
                columns["evidence"].append(source)
                columns["judgments"].append(list(values))
    return columns


def build_table(systems, documents, evidence, judgments) -> dict:
    """Records -> {system: {document: {evidence: np.ndarray of sentence judgments}}}, checking every record."""
    columns = {"systems": systems, "documents": documents, "evidence": evidence, "judgments": judgments}
    if len(judgments) == 0:
        raise ValueError("`judgments` is empty: give one record per system, document and evidence model.")
    for name, column in columns.items():
        if len(column) != len(judgments):
            raise ValueError(
                f"`{name}` has {len(column)} records but `judgments` has {len(judgments)}; "
                f"the first index without a partner is {min(len(column), len(judgments))}."
            )
    table: dict = defaultdict(lambda: defaultdict(dict))
    for i, (system, document, source, values) in enumerate(zip(systems, documents, evidence, judgments)):
        if len(values) == 0:
            raise ValueError(f"`judgments[{i}]` is empty; every passage needs at least one sentence judgment.")
        _check_judgments(f"judgments[{i}]", values)
        passage = table[system][document]
        if source in passage:
            raise ValueError(f"record {i} repeats system {system!r}, document {document!r}, evidence {source!r}.")
        first = next(iter(passage.values()), None)
        if first is not None and len(first) != len(values):
            raise ValueError(
                f"`judgments[{i}]` has {len(values)} sentences but other records of system {system!r}, "
                f"document {document!r} have {len(first)}."
            )
        passage[source] = np.asarray(values, dtype=float)
    return {system: dict(passages) for system, passages in table.items()}


def build_counts(systems, documents, evidence, num_samples) -> dict:
    """Per-record sample counts -> {system: {document: {evidence: N}}} (N_j of eq. 2), checking each count."""
    if len(num_samples) != len(systems):
        raise ValueError(f"`num_samples` has {len(num_samples)} counts for {len(systems)} records; give one per record.")
    counts: dict = defaultdict(lambda: defaultdict(dict))
    for i, (system, document, source, n) in enumerate(zip(systems, documents, evidence, num_samples)):
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"`num_samples[{i}]` is {n!r}; a record averages over at least 1 sampled passage.")
        counts[system][document][source] = int(n)
    return counts


def pooled_score(judgments: Mapping[str, np.ndarray], eta: Mapping[str, float], counts: Mapping[str, int]) -> np.ndarray:
    """Eq. 2: every sampled passage of evidence model j counts with weight eta_j, so a model's mean judgment
    weighs eta_j N_j, normalized by sum_j eta_j N_j."""
    total = sum(weight * counts[source] for source, weight in eta.items())
    return sum(weight * counts[source] * judgments[source] for source, weight in eta.items()) / total


def system_score(sentence_scores: Mapping[str, np.ndarray], aggregation: str) -> float:
    """A system's score from its per-document sentence scores: all sentences pooled, or the mean of document means."""
    if aggregation == "sentence":
        return float(np.concatenate(list(sentence_scores.values())).mean())
    return float(np.mean([values.mean() for values in sentence_scores.values()]))


def _selfcheck(table: dict, given: Optional[Mapping[str, float]], aggregation: str) -> tuple[dict, dict]:
    """SelfCheck score per model (its own judgments, aggregated as the system scores are) and per (model, document)."""
    pooled, per_document = dict(given or {}), defaultdict(dict)
    for system, passages in table.items():
        own = {document: sources[system] for document, sources in passages.items() if system in sources}
        if own:
            pooled.setdefault(system, system_score(own, aggregation))
            per_document[system] = {document: float(values.mean()) for document, values in own.items()}
    return pooled, per_document


def _evidence_groups(sources, modality: Optional[Mapping[str, str]], where: str) -> list[list[str]]:
    if modality is None:
        return [sorted(sources)]
    groups = defaultdict(list)
    for source in sorted(sources):
        if source not in modality:
            raise ValueError(f"`evidence_modality` has no modality for evidence {source!r} ({where}).")
        groups[modality[source]].append(source)
    return list(groups.values())


def _weights(group, weighting, temperature, selfcheck, selfcheck_doc, document, where) -> dict[str, float]:
    if weighting == "uniform":
        return {source: 1.0 / len(group) for source in group}
    scores = {}
    for source in group:
        if weighting == "task":
            if source not in selfcheck:
                raise ValueError(
                    f"evidence {source!r} ({where}) has no SelfCheck score for eta: give its own records "
                    f"(system = evidence = {source!r}), pass `selfcheck_scores`, or use weighting=\"uniform\"."
                )
            scores[source] = selfcheck[source]
        else:
            if document not in selfcheck_doc.get(source, {}):
                raise ValueError(
                    f"evidence {source!r} has no own judgments for document {document!r} ({where}), "
                    f"so weighting=\"query\" cannot weight it; use weighting=\"task\"."
                )
            scores[source] = selfcheck_doc[source][document]
    return softmax_weights(scores, temperature)


def _chosen_sources(system, available, evidence_models, include_self) -> set[str]:
    wanted = set(available) if evidence_models is None else set(evidence_models) & set(available)
    own = {system} & set(available)
    return wanted | own if include_self else wanted - own


def aggregate(
    table: dict,
    weighting: str = "task",
    temperature: float = 0.1,
    evidence_models: Optional[Sequence[str]] = None,
    include_self: bool = True,
    evidence_modality: Optional[Mapping[str, str]] = None,
    selfcheck_scores: Optional[Mapping[str, float]] = None,
    num_samples: Optional[Mapping] = None,
    aggregation: str = "sentence",
) -> dict:
    """CrossCheck scores from a table made by `build_table` (see the module description for the outputs);
    `num_samples` is a table of sample counts made by `build_counts` (default: equal counts)."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"`weighting` is {weighting!r}; use one of {', '.join(WEIGHTINGS)}.")
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"`aggregation` is {aggregation!r}; use one of {', '.join(AGGREGATIONS)}.")
    if not _check_real("temperature", temperature) > 0:
        raise ValueError(f"`temperature` is {temperature!r}; it must be positive.")
    for name, value in (selfcheck_scores or {}).items():
        _check_real(f"selfcheck_scores[{name!r}]", value)
    if evidence_models is not None:
        known = {source for passages in table.values() for available in passages.values() for source in available}
        unknown = sorted(set(evidence_models) - known)
        if unknown:
            raise ValueError(
                f"`evidence_models` names {unknown}, which no record has as evidence; the records hold {sorted(known)}."
            )
    selfcheck, selfcheck_doc = _selfcheck(table, selfcheck_scores, aggregation)
    results = {"scores": {}, "eta": {}, "document_scores": {}, "sentence_scores": {}, "missing_evidence": {}}
    used_selfcheck = {}
    for system, passages in table.items():
        system_sentences, results["document_scores"][system], results["sentence_scores"][system] = {}, {}, {}
        system_eta, expected_sources = {}, None
        for document, available in passages.items():
            where = f"system {system!r}, document {document!r}"
            sources = _chosen_sources(system, available, evidence_models, include_self)
            if not sources:
                raise ValueError(f"no evidence to check against for {where}; records hold {sorted(available)}.")
            if expected_sources is not None and sources != expected_sources:
                raise ValueError(
                    f"{where} has evidence {sorted(sources)} but the system's other documents have "
                    f"{sorted(expected_sources)}; give every document the same evidence models."
                )
            expected_sources = sources
            group_scores, document_eta = [], {}
            for group in _evidence_groups(sources, evidence_modality, where):
                eta = _weights(group, weighting, temperature, selfcheck, selfcheck_doc, document, where)
                document_eta.update(eta)
                counts = num_samples[system][document] if num_samples is not None else dict.fromkeys(eta, 1)
                group_scores.append(pooled_score(available, eta, counts))
            sentence_scores = np.min(group_scores, axis=0)
            system_sentences[document] = sentence_scores
            results["sentence_scores"][system][document] = sentence_scores.tolist()
            results["document_scores"][system][document] = float(sentence_scores.mean())
            system_eta[document] = document_eta
        if evidence_models is not None:
            missing = set(evidence_models) - expected_sources - (set() if include_self else {system})
            if missing:
                results["missing_evidence"][system] = sorted(missing)
        results["scores"][system] = system_score(system_sentences, aggregation)
        results["eta"][system] = system_eta if weighting == "query" else next(iter(system_eta.values()))
        if weighting != "uniform":
            used_selfcheck.update({source: selfcheck[source] for source in expected_sources if source in selfcheck})
    results["ranking"] = sorted(results["scores"], key=results["scores"].get)
    results["selfcheck_scores"] = used_selfcheck
    return results


_RECORD_FEATURES = {
    "systems": datasets.Value("string"),
    "documents": datasets.Value("string"),
    "evidence": datasets.Value("string"),
}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Crosscheck(evaluate.Metric):
    # The harness contract (ARCHITECTURE.md, "The metric contract"): the scores are tables by system, so no output
    # is a top-level fraction.
    fractions = ()
    higher_is_better = {}
    # No per-item verdict (the metric contract): it ranks models by sentences judged against other models'
    # evidence, not one answer against a reference.
    item_verdicts = None

    @staticmethod
    def example_inputs(rng, n):
        """Valid random inputs for `_compute`: n documents, each with systems a and b judged on their own and the
        other's evidence (four records per document)."""
        records = [(system, f"q{i}", evidence) for i in range(n) for system in "ab" for evidence in "ab"]
        sentences = {(system, document): rng.randint(1, 3) for system, document, _ in records}
        return {"systems": [r[0] for r in records], "documents": [r[1] for r in records],
                "evidence": [r[2] for r in records],
                "judgments": [[rng.random() for _ in range(sentences[r[:2]])] for r in records]}

    def _info(self):
        if self.config_name not in ("default", "judgments", "texts"):
            raise ValueError(f'config {self.config_name!r} is unknown; use "judgments" (the default) or "texts".')
        if self.config_name == "texts":
            features = {
                **_RECORD_FEATURES,
                "sentences": datasets.Sequence(datasets.Value("string")),
                "evidence_passages": datasets.Sequence(datasets.Value("string")),
            }
        else:
            features = {**_RECORD_FEATURES, "judgments": datasets.Sequence(datasets.Value("float64"))}
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(features),
            codebase_urls=["https://github.com/BriansIDP/crosscheckgpt"],
            reference_urls=["https://arxiv.org/abs/2405.13684"],
        )


    def compute(self, **kwargs):
        """evaluate's compute, refusing a call with no inputs when none were added (evaluate would say that a cache
        file does not exist)."""
        if self.writer is None and all(kwargs.get(name) is None for name in self._feature_names()):
            raise ValueError(f"no inputs: pass {', '.join(self._feature_names())} (or add them with add_batch first)")
        return super().compute(**kwargs)

    def add_batch(self, *, predictions=None, references=None, **columns):
        """Add a batch of records, first checking that no column is missing or shorter than the others."""
        # evaluate's own check names the columns but not where they part; say which index has no partner
        missing = [name for name, values in columns.items() if values is None]
        if missing:
            raise ValueError(f"`{missing[0]}` is missing; this config needs {', '.join(columns)}.")
        lengths = {name: len(values) for name, values in columns.items()}
        if lengths:
            longest = max(lengths, key=lengths.get)
            for name, length in lengths.items():
                if length < lengths[longest]:
                    raise ValueError(
                        f"`{name}` has {length} records but `{longest}` has {lengths[longest]}; "
                        f"the first index missing from `{name}` is {length}."
                    )
        # checked before evaluate's features cast them: it would read "0.5", "1e-1" and True as numbers
        for i, values in enumerate(columns.get("judgments") or ()):
            _check_judgments(f"judgments[{i}]", values)
        super().add_batch(predictions=predictions, references=references, **columns)

    def _compute(
        self,
        systems,
        documents,
        evidence,
        judgments=None,
        sentences=None,
        evidence_passages=None,
        judge=None,
        batch_judge=None,
        num_samples=None,
        **options,
    ):
        if self.config_name == "texts":
            judgments = self._judge_texts(sentences, evidence_passages, systems, documents, judge, batch_judge)
            if num_samples is not None:
                raise ValueError('the "texts" config counts each record\'s `evidence_passages`; drop `num_samples`.')
            num_samples = [len(passages) for passages in evidence_passages]
        table = build_table(systems, documents, evidence, judgments)
        counts = None if num_samples is None else build_counts(systems, documents, evidence, num_samples)
        # n and unparsed: the contract's counts (judgments are numbers: nothing is parsed)
        return {**aggregate(table, num_samples=counts, **options), "n": len(systems), "unparsed": 0}

    @staticmethod
    def _judge_texts(sentences, evidence_passages, systems, documents, judge, batch_judge) -> list[list[float]]:
        if (judge is None) == (batch_judge is None):
            raise ValueError('the "texts" config needs exactly one of `judge` or `batch_judge`.')
        if len(sentences) == 0:
            raise ValueError("`sentences` is empty: give one record per system, document and evidence model.")
        judgments, passage_sentences = [], {}
        for i, (system, document, sents, passages) in enumerate(zip(systems, documents, sentences, evidence_passages)):
            if passage_sentences.setdefault((system, document), sents) != sents:
                raise ValueError(
                    f"`sentences[{i}]` differs from an earlier record of system {system!r}, document {document!r}."
                )
            if not sents or not passages:
                empty = "sentences" if not sents else "evidence_passages"
                raise ValueError(f"`{empty}[{i}]` is empty; each record needs sentences and evidence passages.")
            judgments.append(judge_passages(sents, passages, judge, batch_judge, f"judge output for record {i}"))
        return judgments
