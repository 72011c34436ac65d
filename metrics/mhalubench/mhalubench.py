"""MHaluBench: claim- and segment-level hallucination detection scores (UniHD, Table 2 layout)."""
import re
from typing import Optional

import datasets

import evaluate


_CITATION = """\
@article{chen2024unified,
  title={Unified Hallucination Detection for Multimodal Large Language Models},
  author={Chen, Xiang and Wang, Chenxi and Xue, Yida and Zhang, Ningyu and Yang, Xiaoyan and Li, Qiang and Shen, Yue and Liang, Lei and Gu, Jinjie and Chen, Huajun},
  journal={arXiv preprint arXiv:2402.03190},
  year={2024}
}
"""

_DESCRIPTION = """\
Scores a hallucination detector on MHaluBench. Each response is split into segments and each segment into
claims, labelled "hallucination" or "non-hallucination". Reports, at claim level and at segment level (a
segment is hallucinatory if any of its claims is), precision, recall and F1 of both classes, accuracy and
their macro averages (UniHD's Table 2: "Average" P, R and Mac.F1). The detector's verdicts are given per
claim, or as its raw answer per response ("claim1": "hallucination", ...), read by `parse_verdicts`.
"""

_KWARGS_DESCRIPTION = """
Args, in one of two layouts:
  per claim:
    predictions (`list` of `str` or `None`): the detector's label per claim, "hallucination" or
        "non-hallucination"; None where its output could not be read (counted as unparsed, never correct).
    references (`list` of `str`): the true label per claim.
    segment_ids (`list` of `str`): per claim, an id shared by the claims of one segment (e.g.
        "<item id>/<segment index>"); claims of a segment need not be adjacent.
  per response (what a detector writes for one response and its numbered claims):
    predictions (`list` of `str`): the detector's raw answer per response, read by `parse_verdicts`.
    references (`list` of `list` of `str`): per response, the true label of each claim, in claim order.
    segment_ids (`list` of `list` of `str`): per response, the segment of each claim (ids local to it).
  claim_categories (optional): each claim's `claim_category` list (object, attribute, scene-text, fact; a
    claim may have several), laid out like `references` (per claim: a list per claim; per response: a list
    of such lists per response).
  groups (`dict` of `str` to `list`, optional): grouping columns (e.g. task_type), each with one value per
    prediction (claim or response).

Returns:
    For each level L in "claim", "segment":
    L_accuracy, L_macro_precision, L_macro_recall, L_macro_f1 (`float`): in [0, 1]; the macro averages are
        over the classes that occur in the references or predictions;
    L_hallucination_precision, _recall, _f1 and L_non_hallucination_precision, _recall, _f1 (`float`): in
        [0, 1]; L_hallucination_support, L_non_hallucination_support (`int`): true claims or segments per class;
    L_unparsed (`int`): claims without a verdict; segments with no claim predicted hallucinatory and at
        least one without a verdict;
    L_n (`int`): how many claims or segments.
    Per response only: responses_unparsed (`int`), responses with no verdict read at all;
        responses_partial (`int`), responses with some verdicts read and some not (their unread claims
        count as unparsed, the read ones are scored).
    by_claim_category (`dict`, with claim_categories): {category: the claim-level metrics (claim_accuracy,
        claim_macro_f1, ...) over the claims of that category}, as UniHD reports detection by claim type; a
        claim with several categories counts in each.
    n (`int`), unparsed (`int`): the items given (claims, or responses) and those without a verdict (claim_unparsed,
        or responses_unparsed).
    by_group (`dict`): {column: {value: the same metrics for that group's claims or responses}}.

Examples:
    >>> mhalubench = evaluate.load("mhalubench")
    >>> results = mhalubench.compute(
    ...     predictions=["hallucination", "non-hallucination", "non-hallucination", None],
    ...     references=["hallucination", "hallucination", "non-hallucination", "non-hallucination"],
    ...     segment_ids=["0/0", "0/0", "0/1", "0/1"],
    ... )
    >>> print(results["claim_hallucination_precision"], results["claim_hallucination_recall"])
    1.0 0.5
    >>> print(results["claim_accuracy"], results["claim_unparsed"])
    0.5 1
    >>> print(results["segment_accuracy"], results["segment_unparsed"], results["segment_n"])
    0.5 1 2

    The same detector's raw answer for that response, the second claim's verdict unreadable:
    >>> results = mhalubench.compute(
    ...     predictions=['[{"claim1": "hallucination", "reason": "No dog."}, {"claim2": "maybe"}, '
    ...                  '{"claim3": "non-hallucination", "reason": "A cat."}]'],
    ...     references=[["hallucination", "hallucination", "non-hallucination"]],
    ...     segment_ids=[["0", "0", "1"]],
    ... )
    >>> print(results["claim_accuracy"], results["claim_unparsed"], results["responses_partial"])
    0.6666666666666666 1 1
"""

HALLUCINATION = "hallucination"
LABELS = (HALLUCINATION, "non-hallucination")
UNPARSED = "unparsed"
# A verdict is the label right after a claim's number: '"claim3": "hallucination"', 'Claim 3: non-hallucination',
# '"claim_3": "hallucination"', '**claim3** - hallucination', or a line opening '3. hallucination'. Text further
# on (a reason ending "there's no hallucination") is never read as the verdict.
_VERDICT = re.compile(
    r"(?:\bclaim[\s_#-]*(\d+)|^[ \t>*-]*(\d+)[.):])"
    r"[\s\"'*`]*[:=-]?[\s\"'*`]*"
    r"(non[\s_-]?hallucinat\w*|hallucinat\w*)",
    re.IGNORECASE | re.MULTILINE,
)


def parse_verdicts(text: str, n_claims: int) -> Optional[list]:
    """Per claim 1..n_claims, the label the detector gave it, or None (no verdict, or two that disagree);
    None instead of the list when not one verdict could be read."""
    found: dict = {}
    for match in _VERDICT.finditer(text):
        number = int(match.group(1) or match.group(2))
        found.setdefault(number, set()).add(LABELS[1] if match.group(3).lower().startswith("non") else LABELS[0])
    verdicts = [next(iter(found[k])) if len(found.get(k, ())) == 1 else None for k in range(1, n_claims + 1)]
    return None if all(v is None for v in verdicts) else verdicts


def segment_label(claim_labels: list) -> Optional[str]:
    """A segment's label from its claims': hallucination if any claim is, None if any is unknown, else non-hallucination."""
    if HALLUCINATION in claim_labels:
        return HALLUCINATION
    return None if None in claim_labels else "non-hallucination"


def _check_list(name: str, values) -> None:
    if values is None or isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
        raise ValueError(f"{name} must be a list, got {type(values).__name__}")


def _check_batch(predictions, references, segment_ids) -> None:
    for name, values in (("predictions", predictions), ("references", references), ("segment_ids", segment_ids)):
        _check_list(name, values)
    for name, values in (("references", references), ("segment_ids", segment_ids)):
        if len(values) != len(predictions):
            raise ValueError(
                f"predictions has {len(predictions)} items but {name} has {len(values)}; "
                f"they must pair up (first unpaired index: {min(len(predictions), len(values))})"
            )
    if not predictions:
        raise ValueError("predictions, references and segment_ids are empty; pass at least one claim")
    if isinstance(references[0], (list, tuple)):
        _check_responses(predictions, references, segment_ids)
        return
    for name, values, allowed in (("predictions", predictions, LABELS + (None,)), ("references", references, LABELS)):
        for i, label in enumerate(values):
            if not (label is None or isinstance(label, str)) or label not in allowed:
                raise ValueError(f"{name}[{i}] is {label!r}; expected one of {allowed}")
    for i, segment in enumerate(segment_ids):
        if not isinstance(segment, (str, int)):
            raise ValueError(f"segment_ids[{i}] is {segment!r}; expected a string id")


def _check_responses(predictions, references, segment_ids) -> None:
    for i, (text, labels, segments) in enumerate(zip(predictions, references, segment_ids)):
        if not isinstance(text, str):
            raise ValueError(f"predictions[{i}] is {text!r}, not a string; pass '' for an empty detector output")
        _check_list(f"references[{i}]", labels)
        _check_list(f"segment_ids[{i}]", segments)
        if not labels or len(segments) != len(labels):
            raise ValueError(f"references[{i}] has {len(labels)} claim labels and segment_ids[{i}] {len(segments)} "
                             "segment ids; a response needs one of each per claim, at least one claim")
        for j, (label, segment) in enumerate(zip(labels, segments)):
            if not isinstance(label, str) or label not in LABELS:
                raise ValueError(f"references[{i}][{j}] is {label!r}; expected one of {LABELS}")
            if not isinstance(segment, str):
                raise ValueError(f"segment_ids[{i}][{j}] is {segment!r}; expected a string id")


def _check_groups(groups, n: int) -> dict:
    if groups is None:
        return {}
    if not isinstance(groups, dict):
        raise ValueError(f"groups must be a dict of column name -> list of values, got {type(groups).__name__}")
    for column, values in groups.items():
        if len(values) != n:
            raise ValueError(f"groups[{column!r}] has {len(values)} values for {n} predictions (first unpaired index: {min(len(values), n)})")
        for i, value in enumerate(values):
            if value is None or value != value:  # None or NaN
                raise ValueError(f"groups[{column!r}][{i}] is {value!r}; every item needs a group value")
    return groups


def _level(level: str, references: list, predicted: list) -> dict:
    """One level's metrics, keys prefixed with the level; `predicted` holds UNPARSED where no label was read."""
    per_class = {}
    for label in LABELS:
        hits = sum(ref == pred == label for ref, pred in zip(references, predicted))
        support, chosen = references.count(label), predicted.count(label)
        precision = hits / chosen if chosen else 0.0
        recall = hits / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
        per_class[label] = {"precision": precision, "recall": recall, "f1": f1, "support": support}
    present = [label for label in LABELS if label in references or label in predicted]
    result = {f"{level}_accuracy": sum(ref == pred for ref, pred in zip(references, predicted)) / len(references)}
    for score in ("precision", "recall", "f1"):
        result[f"{level}_macro_{score}"] = sum(per_class[label][score] for label in present) / len(present)
    for label, scores in per_class.items():
        result.update({f"{level}_{label.replace('-', '_')}_{name}": value for name, value in scores.items()})
    result[f"{level}_unparsed"] = predicted.count(UNPARSED)
    result[f"{level}_n"] = len(references)
    return result


def _by_category(references: list, claim_preds: list, claim_categories: list) -> dict:
    """{category: claim-level metrics over its claims}, categories in order of first appearance."""
    if len(claim_categories) != len(references):
        raise ValueError(f"claim_categories has {len(claim_categories)} claims for {len(references)} references; "
                         "give each claim its claim_category list")
    members: dict = {}
    for i, categories in enumerate(claim_categories):
        if isinstance(categories, str) or not all(isinstance(c, str) for c in categories):
            raise ValueError(f"claim_categories[{i}] is {categories!r}; give a list of category names per claim")
        for category in categories:
            members.setdefault(category, []).append(i)
    return {category: _level("claim", [references[i] for i in idx], [claim_preds[i] for i in idx])
            for category, idx in members.items()}


def _score_claims(predictions: list, references: list, segment_ids: list, claim_categories=None) -> dict:
    predictions = [None if label == UNPARSED else label for label in predictions]
    segments: dict = {}
    for i, segment in enumerate(segment_ids):
        segments.setdefault(segment, []).append(i)
    segment_refs = [segment_label([references[i] for i in idx]) for idx in segments.values()]
    segment_preds = [segment_label([predictions[i] for i in idx]) or UNPARSED for idx in segments.values()]
    claim_preds = [UNPARSED if label is None else label for label in predictions]
    result = {**_level("claim", list(references), claim_preds), **_level("segment", segment_refs, segment_preds)}
    if claim_categories is not None:
        result["by_claim_category"] = _by_category(list(references), claim_preds, list(claim_categories))
    return result


def _score_responses(reads: list, references: list, segment_ids: list, claim_categories=None) -> dict:
    """Each response's claims with the verdicts read from its answer (`parse_verdicts`' per response), scored
    together; segment ids made unique per response by its position (a resampled response counts as another)."""
    verdicts, labels, segments = [], [], []
    unparsed = partial = 0
    for i, (read, claim_labels, claim_segments) in enumerate(zip(reads, references, segment_ids)):
        unparsed += read is None
        partial += read is not None and None in read
        verdicts += read or [None] * len(claim_labels)
        labels += claim_labels
        segments += [f"{i}/{segment}" for segment in claim_segments]
    categories = None if claim_categories is None else [c for response in claim_categories for c in response]
    return {**_score_claims(verdicts, labels, segments, categories), "responses_unparsed": unparsed,
            "responses_partial": partial}


def _response_reads(predictions: list, references: list) -> list:
    """`parse_verdicts` of each response, for as many claims as its reference has."""
    return [parse_verdicts(text, len(labels)) for text, labels in zip(predictions, references)]


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MHaluBench(evaluate.Metric):
    # The harness contract (ARCHITECTURE.md, "The metric contract").
    fractions = tuple(f"{level}_{score}" for level in ("claim", "segment") for score in (
        "accuracy", "macro_precision", "macro_recall", "macro_f1", *(f"{label}_{score}" for label in (
            "hallucination", "non_hallucination") for score in ("precision", "recall", "f1"))))
    higher_is_better = dict.fromkeys(fractions, True)
    # No output is a share of "correct" verdicts in both input forms (per response, the scores count claims).
    verdict_shares: dict = {}

    @staticmethod
    def example_inputs(rng, n):
        """Valid random inputs of n items (claims; every third one opens a new segment) for `_compute`."""
        return {"predictions": [rng.choice([*LABELS, None]) for _ in range(n)],
                "references": [rng.choice(LABELS) for _ in range(n)],
                "segment_ids": [str(i // 3) for i in range(n)]}

    def _info(self):
        per_claim = {"predictions": datasets.Value("string"), "references": datasets.Value("string"),
                     "segment_ids": datasets.Value("string")}
        per_response = {"predictions": datasets.Value("string"),
                        "references": datasets.Sequence(datasets.Value("string")),
                        "segment_ids": datasets.Sequence(datasets.Value("string"))}
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[datasets.Features(per_claim), datasets.Features(per_response)],
            codebase_urls=["https://github.com/zjunlp/EasyDetect"],
            reference_urls=["https://arxiv.org/abs/2402.03190", "https://huggingface.co/datasets/openkg/MHaluBench"],
        )


    def compute(self, **kwargs):
        """evaluate's compute, refusing a call with no inputs when none were added (evaluate would say that a cache
        file does not exist)."""
        if self.writer is None and all(kwargs.get(name) is None for name in self._feature_names()):
            raise ValueError(f"no inputs: pass {', '.join(self._feature_names())} (or add them with add_batch first)")
        return super().compute(**kwargs)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Checks the raw inputs (before evaluate turns NaN into "nan"), then adds them."""
        _check_batch(predictions, references, kwargs.get("segment_ids"))
        # evaluate checks the type of the first item only, so an unparsed (None) first claim was refused: store
        # None as UNPARSED, which _check_batch keeps out of real predictions, and read it back in _compute.
        predictions = [UNPARSED if label is None else label for label in predictions]
        super().add_batch(predictions=predictions, references=references, **kwargs)

    @staticmethod
    def item_verdicts(predictions, references, segment_ids=None, claim_categories=None, groups=None):
        """Per item, how `_compute` counts it (the metric contract): (verdict, reading). A claim: its label as
        reading, "correct" when it is the reference's, "unreadable" when None. A response (references a list per
        response): the labels read for its claims ("?" for a claim without one) as reading, "correct" when every
        claim is read right, "wrong" when not, "unreadable" when no verdict at all was read (all its claims are
        then counted unparsed)."""
        if isinstance(references[0], (list, tuple)):
            reads = _response_reads(predictions, references)
            return [("unreadable", None) if read is None else
                     ("correct" if list(read) == list(labels) else "wrong", ", ".join(label or "?" for label in read))
                    for read, labels in zip(reads, references)]
        readings = [None if label in (None, UNPARSED) else label for label in predictions]
        return [("unreadable" if reading is None else "correct" if reading == label else "wrong", reading)
                for reading, label in zip(readings, references)]

    def _compute(self, predictions, references, segment_ids, claim_categories=None, groups=None):
        score = _score_responses if isinstance(references[0], (list, tuple)) else _score_claims
        if score is _score_responses:
            predictions = _response_reads(predictions, references)
        if claim_categories is not None and len(claim_categories) != len(predictions):
            raise ValueError(f"claim_categories has {len(claim_categories)} items for {len(predictions)} predictions "
                             f"(first unpaired index: {min(len(claim_categories), len(predictions))})")
        columns = (predictions, references, segment_ids, claim_categories)

        def counted(*items):  # the contract's n and unparsed: of the items given, claims or responses
            out = score(*items)
            per_response = score is _score_responses
            return {**out, "n": len(items[0]), "unparsed": out["responses_unparsed" if per_response else "claim_unparsed"]}

        result = counted(*columns)
        result["by_group"] = {}
        for column, values in _check_groups(groups, len(predictions)).items():
            members: dict = {}
            for i, value in enumerate(values):
                members.setdefault(value, []).append(i)
            result["by_group"][column] = {
                value: counted(*(None if items is None else [items[i] for i in idx] for items in columns))
                for value, idx in members.items()}
        return result
