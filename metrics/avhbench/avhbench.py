"""AVHBench judgment scores: accuracy, precision, recall, F1 and yes-ratio of yes/no answers ("yes" the positive
class), the five numbers of the AVHBench paper's tables, computed by POPE's official rule."""
import re
from typing import Optional

import datasets

import evaluate


_CITATION = """\
@inproceedings{sung-bin2025avhbench,
  title={{AVHB}ench: A Cross-Modal Hallucination Benchmark for Audio-Visual Large Language Models},
  author={Kim Sung-Bin and Oh Hyun-Bin and JungMok Lee and Arda Senocak and Joon Son Chung and Tae-Hyun Oh},
  booktitle={The Thirteenth International Conference on Learning Representations},
  year={2025}
}
"""

_DESCRIPTION = """\
Scores AVHBench's yes/no judgment tasks (Audio-driven Video Hallucination, Video-driven Audio Hallucination, AV
Matching) with the five numbers its tables report: accuracy, precision, recall, F1 ("yes" the positive class) and
the yes-ratio. AVHBench releases no scorer; these are POPE's numbers, computed by POPE's official rule
(github.com/AoiDragon/POPE evaluate.py): keep the answer's first sentence, drop commas, split on spaces; a word
"No", "no" or "not" makes it "no", anything else "yes". Answers without a standalone yes/no word are counted as
unparsed beside the numbers (the rule reads them as "yes" or "no" all the same).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): the models' raw answers ('' for an empty output).
    references (`list` of `str`): "yes" or "no" (case and surrounding spaces are ignored).
    groups (`dict` of `str` to `list`, optional): grouping columns (e.g. the AVHBench task), one value per item.

Returns:
    accuracy (`float`): share of answers whose POPE reading equals the reference.
    precision (`float` or `None`): TP / (TP + FP); None when nothing reads "yes" (the script divides by zero).
    recall (`float` or `None`): TP / (TP + FN); None without "yes" references.
    f1 (`float` or `None`): 2PR / (P + R); None when P or R is None or both are 0 (the script divides by zero).
    yes_ratio (`float`): share of answers read as "yes".
    n (`int`): how many answers.
    unparsed (`int`), unparsed_indices (`list` of `int`): answers holding no standalone "yes" or "no" word.
    by_group (`dict`): {column: {value: the same numbers and n}}.

Examples:
    >>> avhbench = evaluate.load("avhbench")
    >>> results = avhbench.compute(predictions=["Yes, it is.", "No.", "It is not there.", "I think so"],
    ...                            references=["yes", "no", "yes", "no"])
    >>> print(results["accuracy"], results["precision"], results["recall"], results["yes_ratio"], results["unparsed"])
    0.5 0.5 0.5 0.5 2
"""

ANSWERS = ("yes", "no")
# A standalone yes/no word (hyphens bind: "no-one" is none), for counting the answers POPE's rule has to guess.
_ANSWER_WORD = re.compile(r"(?<![\w-])(yes|no)(?![\w-])", re.IGNORECASE)


def pope_answer(text: str) -> str:
    """POPE's evaluate.py reading of an answer, verbatim: "no" or "yes" (never None)."""
    if text.find(".") != -1:
        text = text.split(".")[0]
    words = text.replace(",", "").split(" ")
    return "no" if "No" in words or "not" in words or "no" in words else "yes"


def parse_yes_no(text: str) -> Optional[str]:
    """The first standalone "yes"/"no" word, lower-cased, or None: what the answer says in so many words."""
    match = _ANSWER_WORD.search(text)
    return match.group(1).lower() if match else None


def _check(predictions, references, groups) -> dict:
    if len(predictions) != len(references):
        raise ValueError(f"predictions has {len(predictions)} items but references has {len(references)}")
    if not predictions:
        raise ValueError("predictions and references are empty; pass at least one item")
    for i, (text, label) in enumerate(zip(predictions, references)):
        if not isinstance(text, str):
            raise ValueError(f"predictions[{i}] is {text!r}, not a string; pass '' for an empty model output")
        if not isinstance(label, str) or label.strip().lower() not in ANSWERS:
            raise ValueError(f"references[{i}] is {label!r}; expected one of {ANSWERS}")
    for column, values in (groups or {}).items():
        if isinstance(values, (str, bytes, dict)) or len(values) != len(predictions):
            raise ValueError(f"groups[{column!r}] must be a list with one value per prediction ({len(predictions)})")
    return groups or {}


def _summary(answers: list, references: list, unparsed: list) -> dict:
    pairs = list(zip(answers, references))
    tp, fp = pairs.count(("yes", "yes")), pairs.count(("yes", "no"))
    tn, fn = pairs.count(("no", "no")), pairs.count(("no", "yes"))
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = None if precision is None or recall is None or precision + recall == 0 else \
        2 * precision * recall / (precision + recall)
    return {"accuracy": (tp + tn) / len(pairs), "precision": precision, "recall": recall, "f1": f1,
            "yes_ratio": answers.count("yes") / len(answers), "unparsed": sum(unparsed), "n": len(answers)}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AVHBench(evaluate.Metric):
    # The harness contract (ARCHITECTURE.md, "The metric contract").
    fractions = ("accuracy", "precision", "recall", "f1", "yes_ratio")
    higher_is_better = {"accuracy": True, "precision": True, "recall": True, "f1": True, "yes_ratio": None}

    @staticmethod
    def example_inputs(rng, n):
        """Valid random inputs of n items for `_compute` (the contract test's)."""
        outputs = ["Yes, it is.", "No.", "It is not there.", "I think so", "", "YES", "no-one knows", "Yes/No"]
        return {"predictions": [rng.choice(outputs) for _ in range(n)],
                "references": [rng.choice(["yes", "no", " No "]) for _ in range(n)]}

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
            codebase_urls=["https://github.com/kaist-ami/AVHBench", "https://github.com/AoiDragon/POPE"],
            reference_urls=["https://arxiv.org/abs/2410.18325"],
        )

    def compute(self, **kwargs):
        """evaluate's compute, refusing a call with no inputs when none were added (evaluate would say that a cache
        file does not exist)."""
        if self.writer is None and all(kwargs.get(name) is None for name in self._feature_names()):
            raise ValueError(f"no inputs: pass {', '.join(self._feature_names())} (or add them with add_batch first)")
        return super().compute(**kwargs)

    def _compute(self, predictions, references, groups=None):
        groups = _check(predictions, references, groups)
        references = [label.strip().lower() for label in references]
        answers = [pope_answer(text) for text in predictions]
        unparsed = [parse_yes_no(text) is None for text in predictions]
        result = _summary(answers, references, unparsed)
        result["unparsed_indices"] = [i for i, flag in enumerate(unparsed) if flag]
        result["by_group"] = {}
        for column, values in groups.items():
            members: dict = {}
            for i, value in enumerate(values):
                members.setdefault(value, []).append(i)
            result["by_group"][column] = {
                value: _summary(*([seq[i] for i in idx] for seq in (answers, references, unparsed)))
                for value, idx in members.items()
            }
        return result
