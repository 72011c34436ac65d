"""CCHall: accuracy and macro-F1 over the four joint cross-lingual / cross-modal hallucination types."""
import re
from typing import Optional, Sequence

import datasets
import numpy as np

import evaluate


_CITATION = """\
@inproceedings{zhang-etal-2025-cchall,
  title={{CCH}all: A Novel Benchmark for Joint Cross-Lingual and Cross-Modal Hallucinations Detection in Large Language Models},
  author={Zhang, Yongheng and Liu, Xu and Zhou, Ruoxi and Chen, Qiguang and Fei, Hao and Lu, Wenpeng and Qin, Libo},
  booktitle={Proceedings of the 63rd Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)},
  pages={30728--30749},
  year={2025},
  doi={10.18653/v1/2025.acl-long.1485}
}
"""

_DESCRIPTION = """\
Scores CCHall hallucination-type classification: the model reads an image, a question and two answers
(English and another language) and names the hallucination type. Reports accuracy, macro-F1 over the four
types, per-type precision/recall/F1, the confusion matrix and the unparseable outputs. Outputs are parsed
from the benchmark's "Final Answer: [Option]. [Option Content]." format, by option letter (given each
item's options) or by type text.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): raw model outputs.
    references (`list` of `str`): the true type of each item, one of `LABELS` (case, commas and a missing
        trailing "hallucination" are forgiven: "cross-modal, cross-lingual" is fine).
    options (`list` of `list` of `str`, optional): per item, the four type names in letter order (A-D), so
        that "Final Answer: B" can be read. Without them only type text is parsed.
    groups (`dict` of `str` to `list`, optional): grouping columns (dataset_source, language,
        language_category, ...), each with one value per prediction.

Returns:
    accuracy (`float`): share of correct predictions, in [0, 1]; unparsed predictions are wrong.
    macro_f1 (`float`): mean F1 over the types that occur in the references or the parsed predictions,
        in [0, 1]. An unparsed prediction lowers the recall of its true type and no type's precision.
    weighted_f1 (`float`): the per-type F1 weighted by support (scikit-learn's average="weighted"), the one
        standard definition that can give the paper's Random row (29.9 from uniform guesses; see the card).
    accuracy_avg, macro_f1_avg (`float`, with `groups`): the unweighted mean of the per-group values of the
        first grouping column: the paper's AVG column (the mean of its four per-source values) when that
        column is the items' dataset_source.
    per_class (`dict`): {type: {precision, recall, f1, support}}.
    confusion_matrix (`list` of `list` of `int`): rows are true types in `LABELS` order, columns are
        predicted types in `LABELS` order then a last "unparsed" column.
    labels (`list` of `str`): the column order of the confusion matrix.
    unparsed (`int`), unparsed_indices (`list` of `int`): predictions with no readable type.
    n (`int`): how many predictions.
    by_group (`dict`): {column: {value: {accuracy, macro_f1, unparsed, n}}}.

Examples:
    >>> cchall = evaluate.load("cchall")
    >>> options = [
    ...     "Cross-modal, non-cross-lingual hallucination", "Non-hallucination",
    ...     "Cross-modal, cross-lingual hallucination", "Cross-lingual, non-cross-modal hallucination",
    ... ]
    >>> results = cchall.compute(
    ...     predictions=[
    ...         "The Welsh answer adds a dog. **Final Answer: D. Cross-lingual, non-cross-modal hallucination.**",
    ...         "Final Answer: B",
    ...         "Both answers look right: non-hallucination.",
    ...         "I cannot tell.",
    ...     ],
    ...     references=[
    ...         "Cross-lingual, non-cross-modal hallucination", "Non-hallucination",
    ...         "Cross-modal, cross-lingual hallucination", "Non-hallucination",
    ...     ],
    ...     options=[options] * 4,
    ... )
    >>> print(results["accuracy"], round(results["macro_f1"], 4), results["unparsed_indices"])
    0.5 0.5 [3]
    >>> print(results["confusion_matrix"][0])
    [1, 0, 0, 0, 1]
"""

LABELS = (
    "Non-hallucination",
    "Cross-modal, non-cross-lingual hallucination",
    "Cross-lingual, non-cross-modal hallucination",
    "Cross-modal, cross-lingual hallucination",
)
UNPARSED = "unparsed"
COLUMNS = LABELS + (UNPARSED,)  # of the confusion matrix
_LETTERS = "ABCD"
# The type names as they may appear in free text; the lookbehind keeps "non-cross-..." from matching "cross-...".
_TYPE_PATTERNS = [
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"(?<![\w-])non-hallucinat",
        r"(?<![\w-])cross-modal,?\s+non-cross-lingual",
        r"(?<![\w-])cross-lingual,?\s+non-cross-modal",
        r"(?<![\w-])cross-modal,?\s+cross-lingual",
    )
]
_FINAL_ANSWER = re.compile(r"final\s+answer\s*:", re.IGNORECASE)
# An option letter stands alone ("B", "B.", "(B)", "[B]."), so the article in "A dog ..." is no answer.
_LETTER = re.compile(r"^[\s\[(]*([A-D])(?:[.):\]]|\s*$)")


def canonical_label(text: str) -> Optional[str]:
    """The `LABELS` entry that `text` names on its own (e.g. "cross-modal, cross-lingual"), else None."""
    words = re.findall(r"[a-z]+(?:-[a-z]+)*", text.lower())
    if len(words) > 1 and words[-1] == "hallucination":
        words = words[:-1]
    key = " ".join(words)
    for label in LABELS:
        label_words = re.findall(r"[a-z]+(?:-[a-z]+)*", label.lower())
        if key in (" ".join(label_words), " ".join(label_words[:-1])):
            return label
    return None


def _named_types(text: str) -> set:
    return {label for label, pattern in zip(LABELS, _TYPE_PATTERNS) if pattern.search(text)}


def parse_cchall(text: str, options: Optional[Sequence[str]] = None) -> Optional[str]:
    """The type a model output settles on, or None.

    Reads what follows the last "Final Answer:" (the whole text when there is none), markdown removed: a
    leading option letter A-D (needs `options`, the four type names in letter order) and/or type text.
    Letter and text must agree, and the text must name exactly one type; otherwise the output is unparsed.
    """
    markers = list(_FINAL_ANSWER.finditer(text))
    answer = (text[markers[-1].end():] if markers else text).replace("*", "").replace("`", "")
    found = _named_types(answer)
    letter = _LETTER.match(answer)
    if letter and options is not None:
        found_by_letter = canonical_label(options[_LETTERS.index(letter.group(1))])
        return found_by_letter if found <= {found_by_letter} else None
    return found.pop() if len(found) == 1 else None


def _check_batch(predictions, references) -> None:
    for name, values in (("predictions", predictions), ("references", references)):
        if values is None or isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
            raise ValueError(f"{name} must be a list, got {type(values).__name__}")
    if len(predictions) != len(references):
        raise ValueError(
            f"predictions has {len(predictions)} items but references has {len(references)}; "
            f"they must pair up (first unpaired index: {min(len(predictions), len(references))})"
        )
    if not predictions:
        raise ValueError("predictions and references are empty; pass at least one item")
    for i, text in enumerate(predictions):
        if not isinstance(text, str):
            raise ValueError(f"predictions[{i}] is {text!r}, not a string; pass '' for an empty model output")
    for i, label in enumerate(references):
        if not isinstance(label, str) or canonical_label(label) is None:
            raise ValueError(f"references[{i}] is {label!r}; expected one of {LABELS}")


def _check_options(options, n: int) -> list:
    if options is None:
        return [None] * n
    if len(options) != n:
        raise ValueError(f"options has {len(options)} items for {n} predictions (first unpaired index: {min(len(options), n)})")
    checked = []
    for i, item in enumerate(options):
        names = [canonical_label(name) if isinstance(name, str) else None for name in item]
        if len(names) != len(_LETTERS) or sorted(filter(None, names)) != sorted(LABELS):
            raise ValueError(f"options[{i}] is {item!r}; expected the four types {LABELS} in letter order")
        checked.append(names)
    return checked


def _check_groups(groups, n: int) -> dict:
    if groups is None:
        return {}
    if not isinstance(groups, dict):
        raise ValueError(f"groups must be a dict of column name -> list of values, got {type(groups).__name__}")
    for column, values in groups.items():
        if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
            raise ValueError(f"groups[{column!r}] is {values!r}; give a list with one group value per prediction")
        if len(values) != n:
            raise ValueError(f"groups[{column!r}] has {len(values)} values for {n} predictions (first unpaired index: {min(len(values), n)})")
        for i, value in enumerate(values):
            if value is None or value != value:  # None or NaN
                raise ValueError(f"groups[{column!r}][{i}] is {value!r}; every item needs a group value")
    return groups


def _scores(matrix: list) -> dict:
    """The scores of a confusion matrix (rows: true types in `LABELS` order; columns: `COLUMNS`)."""
    per_class = {}
    for k, label in enumerate(LABELS):
        hits, support, chosen = matrix[k][k], sum(matrix[k]), sum(row[k] for row in matrix)
        precision = hits / chosen if chosen else 0.0
        recall = hits / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
        per_class[label] = {"precision": precision, "recall": recall, "f1": f1, "support": support}
    present = [label for k, label in enumerate(LABELS) if per_class[label]["support"] or sum(row[k] for row in matrix)]
    return {
        "accuracy": sum(matrix[k][k] for k in range(len(LABELS))) / sum(map(sum, matrix)),
        "macro_f1": sum(per_class[label]["f1"] for label in present) / len(present),
        "weighted_f1": sum(scores["f1"] * scores["support"] for scores in per_class.values()) / sum(map(sum, matrix)),
        "per_class": per_class,
        "confusion_matrix": matrix,
        "labels": list(COLUMNS),
        "unparsed": sum(row[-1] for row in matrix),
        "n": sum(map(sum, matrix)),
    }


def _confusion(references: np.ndarray, predicted: np.ndarray, codes=0, n_codes: int = 1) -> list:
    """Per code 0..n_codes-1 (by default all items have code 0), the confusion matrix of its items as lists of ints."""
    cells = (codes * len(LABELS) + references) * len(COLUMNS) + predicted
    return np.bincount(cells, minlength=n_codes * len(LABELS) * len(COLUMNS)).reshape(n_codes, len(LABELS), len(COLUMNS)).tolist()


def score_labels(references: np.ndarray, predicted: np.ndarray, group_codes: dict, group_names: dict) -> dict:
    """The metric's output from checked, parsed items: `references` the index of each item's true type in `LABELS`,
    `predicted` that of its parsed type in `COLUMNS` (the last: unparsed), `group_codes` per column each item's
    index into `group_names[column]`. Pure and quick, so a bootstrap can call it on resampled arrays."""
    result = _scores(_confusion(references, predicted)[0])
    result["unparsed_indices"] = np.flatnonzero(predicted == len(LABELS)).tolist()
    result["by_group"] = {}
    for column, codes in group_codes.items():
        names = group_names[column]
        result["by_group"][column] = {}
        for value, matrix in zip(names, _confusion(references, predicted, codes, len(names))):
            n = sum(map(sum, matrix))
            if n:  # a value that no (resampled) item has is no group
                scores = _scores(matrix)
                result["by_group"][column][value] = {name: scores[name] for name in ("accuracy", "macro_f1", "unparsed", "n")}
    if group_codes:  # the paper's AVG: each group counts once, whatever its size
        first = result["by_group"][next(iter(group_codes))].values()
        for name in ("accuracy", "macro_f1"):
            result[f"{name}_avg"] = sum(scores[name] for scores in first) / len(first)
    return result


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CCHall(evaluate.Metric):
    # The harness contract (ARCHITECTURE.md, "The metric contract").
    fractions = ("accuracy", "macro_f1", "weighted_f1", "accuracy_avg", "macro_f1_avg")
    higher_is_better = dict.fromkeys(fractions, True)
    # Which outputs are shares of "correct" verdicts (the metric contract).
    verdict_shares = {"accuracy": None}

    @staticmethod
    def example_inputs(rng, n):
        """Valid random inputs of n items for `_compute` (the contract test's)."""
        options = [rng.sample(LABELS, len(LABELS)) for _ in range(n)]
        outputs = [f"Final Answer: {letter}." for letter in _LETTERS] + [f"Final Answer: {label}." for label in LABELS]
        return {"predictions": [rng.choice(outputs + ["", "I cannot tell."]) for _ in range(n)],
                "references": [rng.choice(LABELS) for _ in range(n)], "options": options}

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
            codebase_urls=["https://github.com/BRZ911/CCHall"],
            reference_urls=["https://arxiv.org/abs/2505.19108", "https://huggingface.co/datasets/67L11/CCHall"],
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

    def _compute(self, predictions, references, options=None, groups=None):
        per_item, fixed = self._prepare(predictions, references, options, groups)
        return self._compute_prepared(**per_item, **fixed)

    @staticmethod
    def item_verdicts(predictions, references, options=None, groups=None):
        """Per item, how `_compute` counts it (the metric contract): (verdict, reading), the reading the type
        `parse_cchall` settles on (None: unparsed, counted wrong as "unreadable"), "correct" when it is the
        reference's type."""
        options = _check_options(options, len(predictions))
        readings = [parse_cchall(text, item) for text, item in zip(predictions, options)]
        return [("unreadable" if reading is None else "correct" if reading == canonical_label(label) else "wrong",
                 reading) for reading, label in zip(readings, references)]

    def _prepare(self, predictions, references, options=None, groups=None):
        """Checks and parses the items once: `_compute_prepared`'s arguments, those with one value per item
        (numpy arrays, `group_codes` a dict of them, for a bootstrap to resample) apart from the rest."""
        groups = _check_groups(groups, len(predictions))
        readings = [reading for _, reading in self.item_verdicts(predictions, references, options)]
        references = np.array([LABELS.index(canonical_label(label)) for label in references], dtype=int)
        predicted = np.array([COLUMNS.index(reading or UNPARSED) for reading in readings], dtype=int)
        codes, names = {}, {}
        for column, values in groups.items():
            index: dict = {}  # value -> code, in order of first appearance
            codes[column] = np.array([index.setdefault(value, len(index)) for value in values], dtype=int)
            names[column] = list(index)
        return {"references": references, "predicted": predicted, "group_codes": codes}, {"group_names": names}

    _compute_prepared = staticmethod(score_labels)
