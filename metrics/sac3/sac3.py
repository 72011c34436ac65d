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
"""SAC3: semantic-aware cross-check consistency scores for hallucination detection."""

import math
import numbers
import re
from typing import Optional

import datasets
import numpy as np
from scipy.stats import rankdata

import evaluate


_DESCRIPTION = """
SAC3 (Zhang et al., 2023) flags a target answer as hallucinated when answers sampled around it disagree with it.
A judge LLM compares the target question-answer pair with each sampled pair and answers
"Guess: Yes/No ... Probability: p"; a "Yes" (semantically equivalent) gives C = 0, anything else C = 1, and the
verbalized probability is kept but not used, as in the authors' code. Each score is the mean C over its samples:
SC2 (the target model's own samples for the original question), SAC3-Q (its answers to semantically equivalent
perturbed questions), SAC3-M (a verifier model's answers to the original question), SAC3-QM (the verifier's answers to
the perturbed questions) and SAC3-all = SAC3-Q + lambda * (SAC3-M + SAC3-QM). A score above the threshold (0.5)
predicts "hallucinated".
"""


_KWARGS_DESCRIPTION = """
Args:
    self_judgments (`list` of `list` of `str`): per item, the judge strings for the target model's own samples (SC2).
    perturbed_judgments (`list` of `list` of `str`): per item, the judge strings for the target model's answers to the
        perturbed questions (SAC3-Q).
    verifier_judgments (`list` of `list` of `str`, *optional*): per item, the judge strings for a verifier model's
        answers to the original question (SAC3-M).
    perturbed_verifier_judgments (`list` of `list` of `str`, *optional*): per item, the judge strings for the verifier
        model's answers to the perturbed questions (SAC3-QM). SAC3-all needs both verifier arguments.
    labels (`list` of `bool`, *optional*): per item, True when the target answer is hallucinated. When given, the
        output holds accuracy and AUROC per score.
    lambda_weight (`float`): the weight of the model-level scores in SAC3-all. Defaults to 1.0.
    threshold (`float`): a score strictly above it predicts "hallucinated". Defaults to 0.5.
    unparseable (`str`): what an unparseable judge string (no ':' or a guess other than "Yes"/"No") counts as:
        "inconsistent" (C = 1, as the authors' code does) or "skip" (left out of the mean). Either way it is counted
        and listed in the output. Defaults to "inconsistent".

Returns:
    scores (`dict` of `str` to `list` of `float`): per item, each available score ("sc2", "sac3_q", and "sac3_m",
        "sac3_qm", "sac3_all" when verifier judgments are given). Higher means more likely hallucinated.
    predictions (`dict` of `str` to `list` of `bool`): per item, score > threshold.
    accuracy (`dict` of `str` to `float`): with labels, the share of items whose prediction equals the label.
    auroc (`dict` of `str` to `float` or `None`): with labels, the area under the ROC curve (hallucinated = positive);
        None when the labels hold one class only.
    confidence (`dict` of `str` to `list` of `float`): per score ("sc2", "sac3_q", "sac3_m", "sac3_qm"), per item, the
        mean over samples of the judge's verbalized probability that the pair is inconsistent: p for a "No", 1 - p for
        a "Yes", C where no probability is given; an unparseable guess is handled as `unparseable` says (SAC3's
        Tables 3-5 "Confidence" columns).
    confidence_accuracy (`dict` of `str` to `float`): with labels, the share of items whose confidence > threshold
        equals the label.
    confidence_auroc (`dict` of `str` to `float` or `None`): with labels, the AUROC of the confidence.
    probabilities (`dict` of `str` to `list` of `list`): the verbalized probabilities per argument, item and sample
        (None where absent).
    num_unparseable (`int`): how many judge strings could not be parsed.
    unparseable (`list` of `dict`): each unparseable string with its argument, item, sample and text.
    n (`int`): how many items; unparsed (`int`): the items with an unparseable judge string.

Examples:

    >>> sac3 = evaluate.load("sac3")
    >>> results = sac3.compute(
    ...     self_judgments=[["Guess: Yes\\nProbability: 0.9", "Guess: No\\nProbability: 0.8"]],
    ...     perturbed_judgments=[["Guess: No\\nProbability: 0.9", "Guess: No\\nProbability: 0.7"]],
    ... )
    >>> print(results["scores"])
    {'sc2': [0.5], 'sac3_q': [1.0]}
    >>> print(results["predictions"])
    {'sc2': [False], 'sac3_q': [True]}

    With labels, verifier judgments and an unparseable judge string:

    >>> results = sac3.compute(
    ...     self_judgments=[["Guess: Yes"], ["Guess: No"]],
    ...     perturbed_judgments=[["Guess: Yes"], ["Guess: No"]],
    ...     verifier_judgments=[["Guess: Yes"], ["Guess: maybe"]],
    ...     perturbed_verifier_judgments=[["Guess: Yes"], ["Guess: No"]],
    ...     labels=[False, True],
    ... )
    >>> print(results["scores"]["sac3_all"], results["accuracy"]["sac3_all"], results["auroc"]["sc2"])
    [0.0, 3.0] 1.0 1.0
    >>> print(results["num_unparseable"], results["unparseable"][0]["argument"])
    1 verifier_judgments
"""


_CITATION = """
@inproceedings{zhang2023sac3,
  title={{SAC}$^3$: Reliable Hallucination Detection in Black-Box Language Models via Semantic-aware Cross-check Consistency},
  author={Zhang, Jiaxin and Li, Zhuohang and Das, Kamalika and Malin, Bradley and Kumar, Sricharan},
  booktitle={Findings of the Association for Computational Linguistics: EMNLP 2023},
  year={2023}
}
"""

_PROBABILITY = re.compile(r"Probability:\s*([0-9]*\.?[0-9]+)")

# argument name -> score name, in the order the scores are reported
_SCORES = {
    "self_judgments": "sc2",
    "perturbed_judgments": "sac3_q",
    "verifier_judgments": "sac3_m",
    "perturbed_verifier_judgments": "sac3_qm",
}


def parse_judgment(text: str) -> tuple[Optional[int], Optional[float]]:
    """Parse a judge string such as "Guess: Yes\\nProbability: 0.9" into (C, probability).

    The guess is the authors' `res.split(':')[1].split('\n')[0].strip()`: the text between the first ':' and the
    next ':' or line end, stripped ("Guess: Yes: they match" reads "Yes"). C is 0 for "Yes" (consistent), 1 for "No",
    None when the string is unparseable (no ':', where the authors' code raises, or another guess, which it counts 1).
    """
    probability = _PROBABILITY.search(text)
    probability = float(probability.group(1)) if probability else None
    if ":" not in text:
        return None, probability
    guess = text.split(":")[1].split("\n")[0].strip()
    return {"Yes": 0, "No": 1}.get(guess), probability


def roc_auc(labels: list[bool], scores: list[float]) -> Optional[float]:
    """AUROC with positives = True (Mann-Whitney U, ties counted half); None when only one class is present."""
    labels = np.asarray(labels, dtype=bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = rankdata(scores)
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _check_real(name: str, value) -> float:
    """`value` if it is a finite number (not a bool or a numeric string); ValueError naming `name` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"`{name}` is {value!r}; it must be a finite number.")
    return float(value)


def _check_items(name: str, items, n_items: Optional[int]) -> None:
    if items is None or len(items) == 0:
        raise ValueError(f"`{name}` is empty: give one list of judge strings per item.")
    if n_items is not None and len(items) != n_items:
        raise ValueError(
            f"`{name}` has {len(items)} items but `self_judgments` has {n_items}; "
            f"the first index without a partner is {min(len(items), n_items)}."
        )
    if isinstance(items, (str, bytes, dict)) or not hasattr(items, "__len__"):
        raise ValueError(f"`{name}` is a {type(items).__name__}; give a list with one list of judge strings per item.")
    for i, strings in enumerate(items):
        if isinstance(strings, (str, bytes)):
            raise ValueError(f"`{name}[{i}]` is a single string; give a list of judge strings for each item.")
        if not strings:
            raise ValueError(f"`{name}[{i}]` holds no judge strings; every item needs at least one.")
        for j, text in enumerate(strings):
            if not isinstance(text, str):
                raise ValueError(f"`{name}[{i}][{j}]` is {type(text).__name__}, not a judge string.")


def inconsistency_confidence(value: int, probability: Optional[float]) -> float:
    """The judge's verbalized probability that a pair is inconsistent: p for a "No" (C = 1), 1 - p for a "Yes";
    C itself when the string gives no probability."""
    if probability is None:
        return float(value)
    return probability if value == 1 else 1.0 - probability


def _consistency_scores(name: str, items, unparseable: str, failures: list) -> tuple[list, list, list]:
    """Mean C per item, mean verbalized confidence per item and the parsed probabilities; unparseable strings are
    appended to `failures`."""
    scores, confidences, probabilities = [], [], []
    for i, strings in enumerate(items):
        values, item_confidences, item_probabilities = [], [], []
        for j, text in enumerate(strings):
            value, probability = parse_judgment(text)
            item_probabilities.append(probability)
            if value is None:
                failures.append({"argument": name, "item": i, "sample": j, "text": text})
                if unparseable == "skip":
                    continue
                value = 1
            values.append(value)
            item_confidences.append(inconsistency_confidence(value, probability))
        if not values:
            raise ValueError(
                f"`{name}[{i}]`: no judge string could be parsed, so the item has no score; "
                f'use unparseable="inconsistent" or fix the judge output.'
            )
        scores.append(sum(values) / len(values))
        confidences.append(sum(item_confidences) / len(item_confidences))
        probabilities.append(item_probabilities)
    return scores, confidences, probabilities


def _check_labels(labels, n_items: int) -> list[bool]:
    if len(labels) != n_items:
        raise ValueError(
            f"`labels` has {len(labels)} items but `self_judgments` has {n_items}; "
            f"the first index without a partner is {min(len(labels), n_items)}."
        )
    for i, label in enumerate(labels):
        if not isinstance(label, (bool, np.bool_)):
            raise ValueError(f"`labels[{i}]` is {label!r}; give True (hallucinated) or False.")
    return [bool(label) for label in labels]


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Sac3(evaluate.Metric):
    # The harness contract (ARCHITECTURE.md, "The metric contract"): every score is a table by score name, so no
    # output is a top-level fraction; the SAC3 tasks' `summarize` flattens them and declares the flat ones.
    fractions = ()
    higher_is_better = {}
    # No per-item verdict (the metric contract): each item is judged by several scores (sac3_q, sac3_m,
    # sac3_all...), each against its threshold: no one verdict.
    item_verdicts = None

    @staticmethod
    def example_inputs(rng, n):
        """Valid random inputs of n items, two samples each, for `_compute`."""
        def judgments():
            return [[rng.choice(["Guess: Yes\nProbability: 0.8", "Guess: No\nProbability: 0.6", "No", "maybe"])
                     for _ in range(2)] for _ in range(n)]

        return {"self_judgments": judgments(), "perturbed_judgments": judgments(),
                "labels": [rng.random() < 0.5 for _ in range(n)]}

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "self_judgments": datasets.Sequence(datasets.Value("string")),
                    "perturbed_judgments": datasets.Sequence(datasets.Value("string")),
                }
            ),
            codebase_urls=["https://github.com/intuit/sac3"],
            reference_urls=["https://arxiv.org/abs/2311.01740"],
        )


    def compute(self, **kwargs):
        """evaluate's compute, refusing a call with no inputs when none were added (evaluate would say that a cache
        file does not exist)."""
        if self.writer is None and all(kwargs.get(name) is None for name in self._feature_names()):
            raise ValueError(f"no inputs: pass {', '.join(self._feature_names())} (or add them with add_batch first)")
        return super().compute(**kwargs)

    def add_batch(self, *, self_judgments=None, perturbed_judgments=None, **kwargs):
        """Checks the two columns pair up (naming the first unpaired index) before evaluate stores them."""
        _check_items("self_judgments", self_judgments, None)
        _check_items("perturbed_judgments", perturbed_judgments, len(self_judgments))
        super().add_batch(self_judgments=self_judgments, perturbed_judgments=perturbed_judgments, **kwargs)

    def _compute(
        self,
        self_judgments,
        perturbed_judgments,
        verifier_judgments=None,
        perturbed_verifier_judgments=None,
        labels=None,
        lambda_weight: float = 1.0,
        threshold: float = 0.5,
        unparseable: str = "inconsistent",
    ):
        if unparseable not in ("inconsistent", "skip"):
            raise ValueError(f'`unparseable` is {unparseable!r}; use "inconsistent" or "skip".')
        lambda_weight, threshold = _check_real("lambda_weight", lambda_weight), _check_real("threshold", threshold)
        arguments = {
            "self_judgments": self_judgments,
            "perturbed_judgments": perturbed_judgments,
            "verifier_judgments": verifier_judgments,
            "perturbed_verifier_judgments": perturbed_verifier_judgments,
        }
        arguments = {name: items for name, items in arguments.items() if items is not None}
        _check_items("self_judgments", self_judgments, None)
        n_items = len(self_judgments)
        for name, items in arguments.items():
            _check_items(name, items, n_items)

        failures: list = []
        scores, confidence, probabilities = {}, {}, {}
        for name, items in arguments.items():
            score = _SCORES[name]
            scores[score], confidence[score], probabilities[name] = _consistency_scores(name, items, unparseable, failures)
        if "sac3_m" in scores and "sac3_qm" in scores:
            scores["sac3_all"] = [
                q + lambda_weight * (m + qm)
                for q, m, qm in zip(scores["sac3_q"], scores["sac3_m"], scores["sac3_qm"])
            ]

        predictions = {name: [score > threshold for score in values] for name, values in scores.items()}
        results = {"scores": scores, "predictions": predictions, "confidence": confidence}
        if labels is not None:
            labels = _check_labels(labels, n_items)
            results["accuracy"] = {
                name: float(np.mean([p == label for p, label in zip(values, labels)]))
                for name, values in predictions.items()
            }
            results["confidence_accuracy"] = {
                name: float(np.mean([(value > threshold) == label for value, label in zip(values, labels)]))
                for name, values in confidence.items()
            }
            results["confidence_auroc"] = {name: roc_auc(labels, values) for name, values in confidence.items()}
            results["auroc"] = {name: roc_auc(labels, values) for name, values in scores.items()}
        results.update(probabilities=probabilities, num_unparseable=len(failures), unparseable=failures, n=n_items,
                       unparsed=len({failure["item"] for failure in failures}))
        return results
