"""POPE: accuracy, precision, recall, F1 and yes-ratio of yes/no object probes, as the POPE authors' evaluate.py."""
import re
from typing import Optional

import datasets
import numpy as np

import evaluate


_CITATION = """\
@inproceedings{li2023evaluating,
  title={Evaluating Object Hallucination in Large Vision-Language Models},
  author={Li, Yifan and Du, Yifan and Zhou, Kun and Wang, Jinpeng and Zhao, Wayne Xin and Wen, Ji-Rong},
  booktitle={Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing},
  year={2023}
}
"""

_DESCRIPTION = """\
Scores POPE (Polling-based Object Probing Evaluation) answers exactly as the authors' evaluate.py
(github.com/AoiDragon/POPE): an answer is "no" when the words of its first sentence (commas removed, split
on spaces) include "No", "no" or "not", otherwise "yes"; "yes" is the positive class. Reports accuracy,
precision, recall, F1 and the yes-ratio under that rule, the confusion counts, and, beside them, how many
answers said neither yes nor no (`unparsed`): the authors' rule counts those as "yes", so the numbers stay
the paper's while the unreadable answers are never hidden.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): the models' raw answers ('' for an empty output).
    references (`list` of `str`): "yes" or "no" (the POPE label; case and surrounding spaces are ignored).
    groups (`dict` of `str` to `list`, optional): grouping columns (e.g. the setting: random, popular,
        adversarial), each with one value per prediction; the same numbers are given per group value.

Returns:
    accuracy (`float`): (TP + TN) / n, in [0, 1].
    precision (`float` or `None`): TP / (TP + FP); None when nothing was read as "yes" (the authors' script
        divides by zero there).
    recall (`float` or `None`): TP / (TP + FN); None without "yes" references.
    f1 (`float` or `None`): 2PR / (P + R); None when P or R is None or both are 0.
    yes_ratio (`float`): share of answers read as "yes" by the authors' rule (unparsed ones included, as there).
    n (`int`): how many predictions.
    tp, fp, tn, fn (`int`): the confusion counts the script prints.
    unparsed (`int`): answers with neither a no-word (the rule above) nor a standalone "yes" in the first
        sentence; the authors' rule reads them as "yes".
    unparsed_indices (`list` of `int`): their positions.
    by_group (`dict`): {column: {value: {accuracy, precision, recall, f1, yes_ratio, tp, fp, tn, fn, unparsed, n}}}.

Examples:
    >>> pope = evaluate.load("pope")
    >>> results = pope.compute(
    ...     predictions=["Yes, there is a dog.", "No.", "There is not a cat.", "I can't tell."],
    ...     references=["yes", "no", "yes", "no"],
    ... )
    >>> print(results["accuracy"], results["precision"], results["recall"], results["yes_ratio"], results["unparsed"])
    0.5 0.5 0.5 0.5 1
"""

LABELS = ("yes", "no")
NO_WORDS = ("No", "not", "no")  # evaluate.py: `if 'No' in words or 'not' in words or 'no' in words`
_YES_WORD = re.compile(r"^\W*yes\W*$", re.IGNORECASE)


def first_sentence_words(text: str) -> list:
    """The words evaluate.py looks at: the text before the first ".", commas removed, split on single spaces."""
    if text.find(".") != -1:
        text = text.split(".")[0]
    return text.replace(",", "").split(" ")


def official_answer(text: str) -> str:
    """The authors' reading: "no" when a word of the first sentence is "No", "no" or "not", else "yes"."""
    words = first_sentence_words(text)
    return "no" if any(word in words for word in NO_WORDS) else "yes"


def parse_pope(text: str) -> Optional[str]:
    """The authors' reading where the answer says it: "no" as they read it, "yes" when a word of the first
    sentence is "yes" (any case or punctuation, "Yes!"); None when it says neither (they would read "yes")."""
    answer = official_answer(text)
    if answer == "no" or any(_YES_WORD.match(word) for word in first_sentence_words(text)):
        return answer
    return None


def _check_batch(predictions, references) -> None:
    for name, values in (("predictions", predictions), ("references", references)):
        if values is None or isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
            raise ValueError(f"{name} must be a list, got {type(values).__name__}")
    if len(predictions) != len(references):
        raise ValueError(f"predictions has {len(predictions)} items but references has {len(references)}; "
                         f"they must pair up (first unpaired index: {min(len(predictions), len(references))})")
    if not predictions:
        raise ValueError("predictions and references are empty; pass at least one item")
    for i, text in enumerate(predictions):
        if not isinstance(text, str):
            raise ValueError(f"predictions[{i}] is {text!r}, not a string; pass '' for an empty model output")
    for i, label in enumerate(references):
        if not isinstance(label, str) or label.strip().lower() not in LABELS:
            raise ValueError(f"references[{i}] is {label!r}; expected one of {LABELS}")


def _check_groups(groups, n: int) -> dict:
    if groups is None:
        return {}
    if not isinstance(groups, dict):
        raise ValueError(f"groups must be a dict of column name -> list of values, got {type(groups).__name__}")
    for column, values in groups.items():
        if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__") or len(values) != n:
            raise ValueError(f"groups[{column!r}] must be a list with one value per prediction ({n})")
        for i, value in enumerate(values):
            if value is None or value != value:  # None or NaN
                raise ValueError(f"groups[{column!r}][{i}] is {value!r}; every item needs a group value")
    return groups


def _ratio(num: int, den: int) -> Optional[float]:
    return num / den if den else None


def _summary(references: list, answers: list, parsed: list) -> dict:
    pairs = list(zip(answers, references))
    tp, fp = pairs.count(("yes", "yes")), pairs.count(("yes", "no"))
    tn, fn = pairs.count(("no", "no")), pairs.count(("no", "yes"))
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    f1 = None if precision is None or recall is None or precision + recall == 0 else \
        2 * precision * recall / (precision + recall)
    return {"accuracy": (tp + tn) / len(pairs), "precision": precision, "recall": recall, "f1": f1,
            "yes_ratio": answers.count("yes") / len(answers), "tp": tp, "fp": fp, "tn": tn, "fn": fn,
            "unparsed": parsed.count(None), "n": len(pairs)}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Pope(evaluate.Metric):
    # The harness contract (ARCHITECTURE.md, "The metric contract"); the confusion counts are no fractions.
    fractions = ("accuracy", "precision", "recall", "f1", "yes_ratio")
    higher_is_better = {"accuracy": True, "precision": True, "recall": True, "f1": True, "yes_ratio": None}
    # Counted from the answers' readings (an unread answer reads "yes" here): null with the scores where none was scored.
    outcome_counts = ("tp", "fp", "tn", "fn")
    # Which outputs are shares of "correct" verdicts: over all items, or over those with one reference.
    verdict_shares = {"accuracy": None, "recall": "yes"}

    @staticmethod
    def example_inputs(rng, n):
        """Valid random inputs of n items for `_compute` (the contract test's)."""
        outputs = ["Yes, there is a dog.", "No.", "There is not a cat.", "I can't tell.", "", "yes!", "NO, never",
                   "Not sure. Yes."]
        return {"predictions": [rng.choice(outputs) for _ in range(n)],
                "references": [rng.choice(["yes", "no", " Yes "]) for _ in range(n)]}

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
            codebase_urls=["https://github.com/AoiDragon/POPE"],
            reference_urls=["https://arxiv.org/abs/2305.10355"],
        )

    def compute(self, **kwargs):
        """evaluate's compute, refusing a call with no inputs when none were added (evaluate would say that a cache
        file does not exist)."""
        if self.writer is None and all(kwargs.get(name) is None for name in self._feature_names()):
            raise ValueError(f"no inputs: pass {', '.join(self._feature_names())} (or add them with add_batch first)")
        return super().compute(**kwargs)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Checks the raw inputs (before evaluate turns NaN into "nan"), then adds them."""
        _check_batch(predictions, references)
        super().add_batch(predictions=predictions, references=references, **kwargs)

    def _compute(self, predictions, references, groups=None):
        per_item, fixed = self._prepare(predictions, references, groups)
        return self._compute_prepared(**per_item, **fixed)

    @staticmethod
    def item_verdicts(predictions, references, groups=None):
        """Per item, how `_compute` counts it (the metric contract): (verdict, reading), the verdict "correct" or
        "wrong" under the authors' rule, the reading "yes", "no", or None when the answer says neither (the rule
        then counts it as "yes")."""
        readings = [parse_pope(text) for text in predictions]
        return [("correct" if (reading or "yes") == label.strip().lower() else "wrong", reading)
                for reading, label in zip(readings, references)]

    def _prepare(self, predictions, references, groups=None):
        """Checks and reads the answers once: per item the reference, the authors' reading and ours (None: neither),
        as arrays a bootstrap resamples (`groups` a dict of them)."""
        groups = _check_groups(groups, len(predictions))
        parsed = [reading for _, reading in self.item_verdicts(predictions, references)]
        per_item = {"references": np.array([label.strip().lower() for label in references], dtype=object),
                    "answers": np.array([reading or "yes" for reading in parsed], dtype=object),
                    "parsed": np.array(parsed, dtype=object),
                    "groups": {column: np.array(values, dtype=object) for column, values in groups.items()}}
        return per_item, {}

    @staticmethod
    def _compute_prepared(references, answers, parsed, groups):
        """evaluate.py's numbers from the readings, overall and per group value."""
        references, answers, parsed = list(references), list(answers), list(parsed)
        result = _summary(references, answers, parsed)
        result["unparsed_indices"] = [i for i, answer in enumerate(parsed) if answer is None]
        result["by_group"] = {}
        for column, values in groups.items():
            members: dict = {}
            for i, value in enumerate(values):
                members.setdefault(value, []).append(i)
            result["by_group"][column] = {
                value: _summary(*([seq[i] for i in idx] for seq in (references, answers, parsed)))
                for value, idx in members.items()}
        return result
