"""PA/HR: perception accuracy and hallucination resistance on yes/no probes (CMM)."""
import re
from typing import Optional

import datasets

import evaluate


_CITATION = """\
@article{leng2024curse,
  title={The Curse of Multi-Modalities: Evaluating Hallucinations of Large Multimodal Models across Language, Visual, and Audio},
  author={Leng, Sicong and Xing, Yun and Cheng, Zesen and Zhou, Yang and Zhang, Hang and Li, Xin and Zhao, Deli and Lu, Shijian and Miao, Chunyan and Bing, Lidong},
  journal={arXiv preprint arXiv:2410.12787},
  year={2024}
}
"""

_DESCRIPTION = """\
Scores yes/no hallucination probes as in CMM (The Curse of Multi-Modalities). Perception accuracy (PA)
is the share of "yes" references answered yes; hallucination resistance (HR) is the share of "no"
references answered no. Also reports accuracy, the yes-ratio of the predictions and the unparseable
predictions, which count as wrong and are never mapped to an answer. Optional breakdowns by any grouping
column (sub_category, granularity, modality, correlation_type, ...).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): the models' raw answers ('' for an empty output).
    references (`list` of `str`): "yes" or "no" (case and surrounding spaces are ignored).
    mode (`str`): "default" parses each prediction with `parse_yes_no` (the first standalone yes/no
        word); "official" reproduces the CMM release's scorer: a prediction is correct when the
        lower-cased, stripped reference occurs in the first five characters of the lower-cased,
        stripped prediction, and a class without references scores 0 (as the scorer prints it).
        Defaults to "default".
    groups (`dict` of `str` to `list`, optional): grouping columns, each with one value per prediction.

Returns:
    pa (`float` or `None`): share of "yes" references answered yes, in [0, 1]; None without "yes" references
        (0.0 in official mode).
    hr (`float` or `None`): share of "no" references answered no, in [0, 1]; None without "no" references
        (0.0 in official mode).
    accuracy (`float`): share of correct predictions, in [0, 1].
    yes_ratio (`float` or `None`): share of "yes" among the parsed predictions (unparsed ones left out);
        None when nothing parsed.
    unparsed (`int`): how many predictions had no answer; in official mode, those whose first five
        characters contain neither "yes" nor "no".
    unparsed_indices (`list` of `int`): their positions.
    n (`int`): how many predictions.
    by_group (`dict`): {column: {value: {pa, hr, accuracy, yes_ratio, unparsed, n}}}.

Examples:
    >>> pa_hr = evaluate.load("pa_hr")
    >>> results = pa_hr.compute(
    ...     predictions=["**Yes**.", "Answer: no", "I know it is there.", "No."],
    ...     references=["yes", "no", "no", "yes"],
    ...     groups={"sub_category": ["visual-language", "visual-language", "audio-language", "audio-language"]},
    ... )
    >>> print(results["pa"], results["hr"], results["accuracy"], results["unparsed_indices"])
    0.5 0.5 0.5 [2]
    >>> print(results["by_group"]["sub_category"]["audio-language"])
    {'pa': 0.0, 'hr': 0.0, 'accuracy': 0.0, 'yes_ratio': 0.0, 'unparsed': 1, 'n': 2}

    The CMM scorer reads "I know" as a "no":
    >>> results = pa_hr.compute(predictions=["I know it is there."], references=["no"], mode="official")
    >>> print(results["hr"], results["unparsed"])
    1.0 0
"""

ANSWERS = ("yes", "no")
MODES = ("default", "official")
# "Yes/No" or "yes or no" echoes the options; it is no answer.
_OPTION_ECHO = re.compile(r"\b(?:yes\s*(?:/|\bor\b)\s*no|no\s*(?:/|\bor\b)\s*yes)\b", re.IGNORECASE)
# Hyphens bind: "no-one" is not a "no".
_ANSWER_WORD = re.compile(r"(?<![\w-])(yes|no)(?![\w-])", re.IGNORECASE)


def parse_yes_no(text: str) -> Optional[str]:
    """The first standalone "yes"/"no" word in `text`, lower-cased, or None when there is none.

    Case, markdown and punctuation do not matter ("**Yes**.", "Answer: no"); words that merely contain
    one ("nobody", "yesterday", "I know") and echoed options ("Yes/No") are not answers.
    """
    match = _ANSWER_WORD.search(_OPTION_ECHO.sub(" ", text))
    return match.group(1).lower() if match else None


def parse_official(text: str) -> Optional[str]:
    """The answer the CMM scorer sees: "yes" or "no" within the first five characters, else None."""
    head = text.strip().lower()[:5]
    return "yes" if "yes" in head else "no" if "no" in head else None


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
        if not isinstance(label, str) or label.strip().lower() not in ANSWERS:
            raise ValueError(f"references[{i}] is {label!r}; expected one of {ANSWERS}")


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


def _share(flags: list, empty: Optional[float] = None) -> Optional[float]:
    return sum(flags) / len(flags) if flags else empty


def _summary(references: list, answers: list, correct: list, empty: Optional[float] = None) -> dict:
    """`empty` is what a class without references scores: None (no data), or 0.0 as the CMM scorer has it."""
    parsed = [answer for answer in answers if answer is not None]
    return {
        "pa": _share([ok for ref, ok in zip(references, correct) if ref == "yes"], empty),
        "hr": _share([ok for ref, ok in zip(references, correct) if ref == "no"], empty),
        "accuracy": _share(correct),
        "yes_ratio": _share([answer == "yes" for answer in parsed]),
        "unparsed": len(answers) - len(parsed),
        "n": len(answers),
    }


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class PaHr(evaluate.Metric):
    # The harness contract (ARCHITECTURE.md, "The metric contract").
    fractions = ("pa", "hr", "accuracy", "yes_ratio")
    higher_is_better = {"pa": True, "hr": True, "accuracy": True, "yes_ratio": None}
    # Which outputs are shares of "correct" verdicts: over all items, or over those with one reference.
    verdict_shares = {"accuracy": None, "pa": "yes", "hr": "no"}

    @staticmethod
    def example_inputs(rng, n):
        """Valid random inputs of n items for `_compute` (the contract test's)."""
        outputs = ["Yes.", "**No**", "no, it is not", "I know it is there.", "", "Yes/No", "YES"]
        return {"predictions": [rng.choice(outputs) for _ in range(n)],
                "references": [rng.choice(["yes", "no", " Yes "]) for _ in range(n)]}

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
            codebase_urls=["https://github.com/DAMO-NLP-SG/CMM"],
            reference_urls=["https://arxiv.org/abs/2410.12787"],
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

    @staticmethod
    def item_verdicts(predictions, references, mode="default", groups=None):
        """Per item, how `_compute` counts it under `mode`: (verdict, reading), the verdict "correct", "wrong" or
        "unreadable" (no yes/no read: counted wrong), the reading "yes", "no" or None (the metric contract)."""
        if mode not in MODES:
            raise ValueError(f"mode is {mode!r}; expected one of {MODES}")
        references = [label.strip().lower() for label in references]
        if mode == "official":
            answers = [parse_official(text) for text in predictions]
            correct = [ref in text.strip().lower()[:5] for ref, text in zip(references, predictions)]
        else:
            answers = [parse_yes_no(text) for text in predictions]
            correct = [answer == ref for answer, ref in zip(answers, references)]
        return [("correct" if ok else "unreadable" if answer is None else "wrong", answer)
                for ok, answer in zip(correct, answers)]

    def _compute(self, predictions, references, mode="default", groups=None):
        verdicts = self.item_verdicts(predictions, references, mode)
        groups = _check_groups(groups, len(predictions))
        references = [label.strip().lower() for label in references]
        answers = [answer for _, answer in verdicts]
        correct = [verdict == "correct" for verdict, _ in verdicts]
        empty = 0.0 if mode == "official" else None
        result = _summary(references, answers, correct, empty)
        result["unparsed_indices"] = [i for i, answer in enumerate(answers) if answer is None]
        result["by_group"] = {}
        for column, values in groups.items():
            members: dict = {}
            for i, value in enumerate(values):
                members.setdefault(value, []).append(i)
            result["by_group"][column] = {
                value: _summary(*([seq[i] for i in idx] for seq in (references, answers, correct)), empty)
                for value, idx in members.items()
            }
        return result
