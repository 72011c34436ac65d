"""MHaluBench: claim- and segment-level hallucination detection scores (UniHD, Table 2 layout)."""
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
claims, labelled "hallucination" or "non-hallucination". Given the detector's claim labels, the true claim
labels and each claim's segment, reports precision, recall and F1 of both classes, accuracy and macro-F1, at
claim level and at segment level, where a segment is hallucinatory if any of its claims is.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str` or `None`): the detector's label per claim, "hallucination" or
        "non-hallucination"; None where its output could not be read (counted as unparsed, never correct).
    references (`list` of `str`): the true label per claim.
    segment_ids (`list` of `str`): per claim, an id shared by the claims of one segment (e.g.
        "<item id>/<segment index>"); claims of a segment need not be adjacent.

Returns:
    claim, segment (`dict`): one block per level, each with
        hallucination, non-hallucination (`dict`): precision, recall, f1 in [0, 1] and support (`int`);
        accuracy, macro_f1 (`float`): in [0, 1]; macro_f1 averages the classes that occur in the references
            or predictions;
        unparsed (`int`): claims without a predicted label; for segments, those with no claim predicted
            hallucinatory and at least one unparsed claim;
        n (`int`): how many claims or segments.

Examples:
    >>> mhalubench = evaluate.load("mhalubench")
    >>> results = mhalubench.compute(
    ...     predictions=["hallucination", "non-hallucination", "non-hallucination", None],
    ...     references=["hallucination", "hallucination", "non-hallucination", "non-hallucination"],
    ...     segment_ids=["0/0", "0/0", "0/1", "0/1"],
    ... )
    >>> print(results["claim"]["hallucination"])
    {'precision': 1.0, 'recall': 0.5, 'f1': 0.6666666666666666, 'support': 2}
    >>> print(results["claim"]["accuracy"], results["claim"]["unparsed"])
    0.5 1
    >>> print(results["segment"]["accuracy"], results["segment"]["unparsed"], results["segment"]["n"])
    0.5 1 2
"""

HALLUCINATION = "hallucination"
LABELS = (HALLUCINATION, "non-hallucination")
UNPARSED = "unparsed"


def segment_label(claim_labels: list) -> Optional[str]:
    """A segment's label from its claims': hallucination if any claim is, None if any is unknown, else non-hallucination."""
    if HALLUCINATION in claim_labels:
        return HALLUCINATION
    return None if None in claim_labels else "non-hallucination"


def _check_batch(predictions, references, segment_ids) -> None:
    for name, values in (("predictions", predictions), ("references", references), ("segment_ids", segment_ids)):
        if values is None or isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
            raise ValueError(f"{name} must be a list, got {type(values).__name__}")
    for name, values in (("references", references), ("segment_ids", segment_ids)):
        if len(values) != len(predictions):
            raise ValueError(
                f"predictions has {len(predictions)} items but {name} has {len(values)}; "
                f"they must pair up (first unpaired index: {min(len(predictions), len(values))})"
            )
    if not predictions:
        raise ValueError("predictions, references and segment_ids are empty; pass at least one claim")
    for name, values, allowed in (("predictions", predictions, LABELS + (None,)), ("references", references, LABELS)):
        for i, label in enumerate(values):
            if not (label is None or isinstance(label, str)) or label not in allowed:
                raise ValueError(f"{name}[{i}] is {label!r}; expected one of {allowed}")
    for i, segment in enumerate(segment_ids):
        if not isinstance(segment, (str, int)):
            raise ValueError(f"segment_ids[{i}] is {segment!r}; expected a string id")


def _scores(references: list, predicted: list) -> dict:
    result = {}
    for label in LABELS:
        hits = sum(ref == pred == label for ref, pred in zip(references, predicted))
        support, chosen = references.count(label), predicted.count(label)
        precision = hits / chosen if chosen else 0.0
        recall = hits / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
        result[label] = {"precision": precision, "recall": recall, "f1": f1, "support": support}
    present = [label for label in LABELS if label in references or label in predicted]
    result["accuracy"] = sum(ref == pred for ref, pred in zip(references, predicted)) / len(references)
    result["macro_f1"] = sum(result[label]["f1"] for label in present) / len(present)
    result["unparsed"] = predicted.count(UNPARSED)
    result["n"] = len(references)
    return result


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MHaluBench(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("string"),
                    "references": datasets.Value("string"),
                    "segment_ids": datasets.Value("string"),
                }
            ),
            codebase_urls=["https://github.com/zjunlp/EasyDetect"],
            reference_urls=["https://arxiv.org/abs/2402.03190", "https://huggingface.co/datasets/openkg/MHaluBench"],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Checks the raw inputs (before evaluate turns NaN into "nan"), then adds them."""
        _check_batch(predictions, references, kwargs.get("segment_ids"))
        # evaluate checks the type of the first item only, so an unparsed (None) first claim was refused: store
        # None as UNPARSED, which _check_batch keeps out of real predictions, and read it back in _compute.
        predictions = [UNPARSED if label is None else label for label in predictions]
        super().add_batch(predictions=predictions, references=references, **kwargs)

    def _compute(self, predictions, references, segment_ids):
        segments: dict = {}
        for i, segment in enumerate(segment_ids):
            segments.setdefault(segment, []).append(i)
        segment_refs = [segment_label([references[i] for i in idx]) for idx in segments.values()]
        predictions = [None if label == UNPARSED else label for label in predictions]
        segment_preds = [segment_label([predictions[i] for i in idx]) or UNPARSED for idx in segments.values()]
        claim_preds = [UNPARSED if label is None else label for label in predictions]
        return {"claim": _scores(list(references), claim_preds), "segment": _scores(segment_refs, segment_preds)}
