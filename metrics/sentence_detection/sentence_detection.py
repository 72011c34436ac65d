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
"""Sentence-level hallucination detection: AUC-PR for NonFact, NonFact* and Factual (SelfCheckGPT's evaluation)."""

import math
import numbers

import datasets
import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import auc, precision_recall_curve

import evaluate


_DESCRIPTION = """
How well per-sentence hallucination scores (SelfCheckGPT, CrossCheckGPT or any other; higher = more likely
hallucinated) find the sentences that human annotators marked, as evaluated by SelfCheckGPT (Manakul et al., 2023)
and CrossCheckGPT's Table 10 on WikiBio. Labels map accurate -> 0, minor_inaccurate -> 0.5, major_inaccurate -> 1.
Three detection tasks, each scored by the area under the precision-recall curve (sklearn's precision_recall_curve,
then auc(recall, precision), as SelfCheckGPT's evaluation does):
- NonFact: label > 0.499 (minor or major) is positive, scored by the score;
- NonFact*: label > 0.99 (major only) is positive; SelfCheckGPT first drops the passages whose every sentence is
  major (mean label >= 0.99), the "totally hallucinated" ones; CrossCheckGPT's Table 10 keeps them
  (`drop_all_major=False` reproduces it);
- Factual: label < 0.499 (accurate) is positive, scored by the negated score.
Passage level: the Pearson and Spearman correlations between each passage's mean label and mean score.
"""


_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `float`): per passage, one hallucination score per sentence (higher = more
        likely hallucinated; any finite scale).
    references (`list` of `list`): per passage, one label per sentence: "accurate", "minor_inaccurate",
        "major_inaccurate", or the numbers 0, 0.5, 1.
    drop_all_major (`bool`): for NonFact*, leave out passages whose every sentence is major_inaccurate, as
        SelfCheckGPT does. False keeps every passage, as CrossCheckGPT's Table 10 does. Defaults to True.

Returns:
    nonfact_auc_pr (`float`): AUC-PR, in [0, 1], of finding minor or major inaccurate sentences.
    nonfact_star_auc_pr (`float`): AUC-PR of finding major inaccurate sentences (see `drop_all_major`).
    factual_auc_pr (`float`): AUC-PR of finding accurate sentences by the negated scores.
    passage_pearson (`float`), passage_spearman (`float`): correlations between each passage's mean label and mean
        score (None with fewer than two passages or a constant side).
    num_sentences (`int`), num_passages (`int`): the sentences and passages scored.
    num_passages_nonfact_star (`int`): the passages NonFact* is computed on.
    positives (`dict`): per task, how many sentences are positive (the AUC-PR of a random detector).
    A task without positive sentences scores None.
    n (`int`): the passages; unparsed (`int`): 0 (the scores are numbers, nothing is parsed).

Examples:

    >>> detection = evaluate.load("sentence_detection")
    >>> results = detection.compute(
    ...     predictions=[[0.9, 0.2, 0.7], [0.1, 0.8]],
    ...     references=[["major_inaccurate", "accurate", "minor_inaccurate"], ["accurate", "major_inaccurate"]],
    ... )
    >>> print(results["nonfact_auc_pr"], results["factual_auc_pr"], results["positives"])
    1.0 1.0 {'nonfact': 3, 'nonfact_star': 2, 'factual': 2}
"""


_CITATION = """
@inproceedings{manakul2023selfcheckgpt,
  title={SelfCheckGPT: Zero-Resource Black-Box Hallucination Detection for Generative Large Language Models},
  author={Manakul, Potsawee and Liusie, Adian and Gales, Mark J. F.},
  booktitle={Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing},
  year={2023}
}
@article{sun2024crosscheckgpt,
  title={CrossCheckGPT: Universal Hallucination Ranking for Multimodal Foundation Models},
  author={Sun, Guangzhi and Manakul, Potsawee and Liusie, Adian and Pipatanakul, Kunat and Zhang, Chao and
          Woodland, Phil and Gales, Mark},
  journal={arXiv preprint arXiv:2405.13684},
  year={2024}
}
"""

LABELS = {"accurate": 0.0, "minor_inaccurate": 0.5, "major_inaccurate": 1.0}


def label_value(label, where: str) -> float:
    """A label as SelfCheckGPT's number: the three annotation strings, or 0 / 0.5 / 1 themselves (also as strings:
    evaluate casts a batch mixing strings and numbers to strings)."""
    if isinstance(label, str):
        text = label.strip().lower()
        if text in LABELS:
            return LABELS[text]
        try:
            label = float(text)
        except ValueError:
            pass
    if isinstance(label, numbers.Real) and not isinstance(label, bool) and float(label) in LABELS.values():
        return float(label)
    raise ValueError(f"`{where}` is {label!r}; use one of {', '.join(LABELS)} or 0, 0.5, 1.")


def auc_pr(positive: np.ndarray, scores: np.ndarray):
    """Area under the precision-recall curve (SelfCheckGPT's evaluation); None without a positive."""
    if not positive.any():
        return None
    precision, recall, _ = precision_recall_curve(positive.astype(int), scores)
    return float(auc(recall, precision))


def _correlation(statistic, x, y):
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(statistic(x, y)[0])


def _passages(predictions, references) -> list[tuple[np.ndarray, np.ndarray]]:
    if len(predictions) != len(references):
        raise ValueError(f"`predictions` has {len(predictions)} passages but `references` has {len(references)}.")
    if len(predictions) == 0:
        raise ValueError("`predictions` is empty: give one list of sentence scores per passage.")
    passages = []
    for i, (scores, labels) in enumerate(zip(predictions, references)):
        if len(scores) != len(labels):
            raise ValueError(f"passage {i} has {len(scores)} scores but {len(labels)} labels; give one per sentence.")
        if len(scores) == 0:
            raise ValueError(f"passage {i} has no sentences.")
        for k, score in enumerate(scores):
            if isinstance(score, bool) or not isinstance(score, numbers.Real) or not math.isfinite(score):
                raise ValueError(f"`predictions[{i}][{k}]` is {score!r}; scores must be finite numbers.")
        values = [label_value(label, f"references[{i}][{k}]") for k, label in enumerate(labels)]
        passages.append((np.asarray(scores, dtype=float), np.asarray(values)))
    return passages


def detect(predictions, references, drop_all_major: bool = True) -> dict:
    """The metric's results (see the module description) from per-passage scores and labels."""
    if not isinstance(drop_all_major, bool):
        raise ValueError(f"`drop_all_major` is {drop_all_major!r}; give True or False.")
    passages = _passages(predictions, references)
    scores = np.concatenate([s for s, _ in passages])
    labels = np.concatenate([v for _, v in passages])
    kept = [(s, v) for s, v in passages if not (drop_all_major and v.mean() >= 0.99)]
    star_scores = np.concatenate([s for s, _ in kept]) if kept else np.zeros(0)
    star_labels = np.concatenate([v for _, v in kept]) if kept else np.zeros(0)
    positives = {"nonfact": labels > 0.499, "nonfact_star": star_labels > 0.99, "factual": labels < 0.499}
    label_means = np.array([v.mean() for _, v in passages])
    score_means = np.array([s.mean() for s, _ in passages])
    return {
        "nonfact_auc_pr": auc_pr(positives["nonfact"], scores),
        "nonfact_star_auc_pr": auc_pr(positives["nonfact_star"], star_scores),
        "factual_auc_pr": auc_pr(positives["factual"], -scores),
        "passage_pearson": _correlation(pearsonr, label_means, score_means),
        "passage_spearman": _correlation(spearmanr, label_means, score_means),
        "num_sentences": int(labels.size),
        "num_passages": len(passages),
        "num_passages_nonfact_star": len(kept),
        "positives": {task: int(mask.sum()) for task, mask in positives.items()},
        "n": len(passages),
        "unparsed": 0,  # scores are numbers: nothing to read
    }


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SentenceDetection(evaluate.Metric):
    # The harness contract (ARCHITECTURE.md, "The metric contract").
    fractions = ("nonfact_auc_pr", "nonfact_star_auc_pr", "factual_auc_pr")
    higher_is_better = {**dict.fromkeys(fractions, True), "passage_pearson": True, "passage_spearman": True}
    # No per-item verdict (the metric contract): it scores sentences against their reference labels over whole
    # passages, not one answer per item.
    item_verdicts = None

    @staticmethod
    def example_inputs(rng, n):
        """Valid random inputs of n passages of one to four sentences for `_compute`."""
        sizes = [rng.randint(1, 4) for _ in range(n)]
        return {"predictions": [[rng.random() for _ in range(size)] for size in sizes],
                "references": [[rng.choice(["accurate", "minor_inaccurate", "major_inaccurate"]) for _ in range(size)]
                               for size in sizes]}

    def _info(self):
        scores = datasets.Sequence(datasets.Value("float64"))
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features({"predictions": scores, "references": datasets.Sequence(datasets.Value("string"))}),
                datasets.Features({"predictions": scores, "references": scores}),
            ],
            codebase_urls=["https://github.com/potsawee/selfcheckgpt"],
            reference_urls=["https://arxiv.org/abs/2303.08896", "https://arxiv.org/abs/2405.13684"],
        )

    def _compute(self, predictions, references, drop_all_major=True):
        return detect(predictions, references, drop_all_major)
