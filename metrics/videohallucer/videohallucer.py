"""VideoHallucer: basic, hallucinated and pair accuracy of basic/hallucinated yes/no question pairs, with the
yes/no bias numbers of the authors' evaluation_bias.py."""
import re

import datasets
import numpy as np

import evaluate


_CITATION = """\
@article{videohallucer,
  title={VideoHallucer: Evaluating Intrinsic and Extrinsic Hallucinations in Large Video-Language Models},
  author={Wang, Yuxuan and Wang, Yueqian and Zhao, Dongyan and Xie, Cihang and Zheng, Zilong},
  journal={arXiv preprint arXiv:2406.16338},
  year={2024}
}
"""

_DESCRIPTION = """\
Scores VideoHallucer's adversarial question pairs as the authors' scorer does (github.com/patrick-tssn/VideoHallucer,
evaluations/evaluation_utils.py `cal_score` and evaluation.py): an answer hits when its reference word ("yes" or
"no") occurs in it as a whole word, in any case; a pair counts only when both its basic ("yes") and its
hallucinated ("no") question hit. Per subset: basic accuracy, hallucinated accuracy and pair accuracy; overall:
their mean over the subsets (the paper's "Overall"). The bias numbers of evaluations/evaluation_bias.py are
pooled over all pairs. Answers holding neither word are counted as unparsed (they miss).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): the models' raw answers ('' for an empty output).
    references (`list` of `str`): "yes" for a basic question, "no" for a hallucinated one.
    pair_ids (`list` of `str`): the pair each question belongs to.
    roles (`list` of `str`): "basic" or "hallucination" per question.
    subsets (`list` of `str`, optional): the VideoHallucer subset of each question; the overall numbers are the mean
        over subsets. Defaults to one subset.
    groups (`dict` of `str` to `list`, optional): grouping columns, one value per question (the two questions of a
        pair should share their groups).

Returns:
    basic_accuracy (`float` or `None`): share of pairs whose basic question hit, averaged over subsets.
    halluc_accuracy (`float` or `None`): share of pairs whose hallucinated question hit, averaged over subsets.
    accuracy (`float` or `None`): share of pairs with both questions hit (the paper's headline), averaged over subsets.
    yes_diff (`float` or `None`): evaluation_bias.py's "yes difference percentage", (n_yes - pairs) / (2 pairs).
    no_diff (`float` or `None`): its "no difference percentage", (n_no - pairs) / (2 pairs).
    false_positive_ratio (`float` or `None`): its "false positive ratio".
    hallucination_score (`float` or `None`): its "hallucination score": among pairs whose basic question hit, the
        share whose hallucinated answer holds no "no"; None when no basic question hit (the script divides by zero).
    n (`int`): how many questions.
    n_pairs (`int`): complete pairs scored; incomplete_pairs (`int`): questions whose partner is absent (left out).
    unparsed (`int`), unparsed_indices (`list` of `int`): answers holding neither "yes" nor "no" as a word.
    by_group (`dict`): {column: {value: the same numbers}}.

Examples:
    >>> videohallucer = evaluate.load("videohallucer")
    >>> results = videohallucer.compute(
    ...     predictions=["Yes.", "No, it is a ball.", "yes", "Yes, there is."],
    ...     references=["yes", "no", "yes", "no"],
    ...     pair_ids=["p0", "p0", "p1", "p1"], roles=["basic", "hallucination", "basic", "hallucination"])
    >>> print(results["basic_accuracy"], results["halluc_accuracy"], results["accuracy"], results["unparsed"])
    1.0 0.5 0.5 0
"""

ROLES = ("basic", "hallucination")
ANSWERS = {"basic": "yes", "hallucination": "no"}


def hits(answer: str, prediction: str) -> bool:
    """The authors' rule: `answer` as a whole word anywhere in `prediction`, any case (cal_score)."""
    return re.search(r"\b(" + answer + r")\b", prediction, re.IGNORECASE) is not None


def parse_videohallucer(text: str):
    """Which answer words the scorer finds: "yes", "no", "yes+no" (both: each question it asks hits), or None."""
    found = [word for word in ("yes", "no") if hits(word, text)]
    return "+".join(found) or None


def _check(predictions, references, pair_ids, roles, subsets, groups) -> None:
    n = len(predictions)
    if n == 0:
        raise ValueError("predictions and references are empty; pass at least one item")
    for name, values in (("references", references), ("pair_ids", pair_ids), ("roles", roles),
                         ("subsets", subsets), *((f"groups[{k!r}]", v) for k, v in (groups or {}).items())):
        if values is None or isinstance(values, (str, bytes, dict)) or len(values) != n:
            raise ValueError(f"{name} must be a list with one value per prediction ({n})")
    for i, (text, ref, role) in enumerate(zip(predictions, references, roles)):
        if not isinstance(text, str):
            raise ValueError(f"predictions[{i}] is {text!r}, not a string; pass '' for an empty model output")
        if role not in ROLES:
            raise ValueError(f"roles[{i}] is {role!r}; expected one of {ROLES}")
        if not isinstance(ref, str) or ref.strip().lower() != ANSWERS[role]:
            raise ValueError(f"references[{i}] is {ref!r}; a {role} question's answer is {ANSWERS[role]!r}")


def _pooled(basic_yes: np.ndarray, halluc_no: np.ndarray) -> dict:
    """evaluation_bias.py's counts over pairs (whether the basic answer holds "yes", the hallucinated one "no"),
    kept as its loop has them: a hallucinated answer without "no" counts as a "yes" only when the *basic* answer
    holds "yes", and a basic answer without "yes" as a "no" only when the hallucinated one holds "no"."""
    pairs = len(basic_yes)
    n_yes = basic_yes.sum() + ((~halluc_no) & basic_yes).sum()
    n_no = halluc_no.sum() + ((~basic_yes) & halluc_no).sum()
    misses = (~basic_yes).sum() + (~halluc_no).sum()
    fp = ((~halluc_no) & basic_yes).sum()
    return {
        "yes_diff": float((n_yes - pairs) / (2 * pairs)),
        "no_diff": float((n_no - pairs) / (2 * pairs)),
        "false_positive_ratio": float(fp / misses) if misses else 0.0,
        "hallucination_score": float(((~halluc_no) & basic_yes).sum() / basic_yes.sum()) if basic_yes.any() else None,
    }


def _summary(basic, halluc, complete, subset, unparsed) -> dict:
    """The numbers over the items given. Each item of a complete pair carries its pair's two hits, so each pair
    counts once per question drawn: twice on the full data (a plain per-pair mean), and a bootstrap over questions
    resamples pairs."""
    out = {"basic_accuracy": None, "halluc_accuracy": None, "accuracy": None, "yes_diff": None, "no_diff": None,
           "false_positive_ratio": None, "hallucination_score": None}
    if complete.any():
        per_subset = []
        for name in dict.fromkeys(subset[complete]):
            keep = complete & (subset == name)
            per_subset.append((basic[keep].mean(), halluc[keep].mean(), (basic[keep] & halluc[keep]).mean()))
        out.update(dict(zip(("basic_accuracy", "halluc_accuracy", "accuracy"),
                            (float(v) for v in np.mean(per_subset, axis=0)))))
        out.update(_pooled(basic[complete], halluc[complete]))
    out.update(n_pairs=int(complete.sum()) // 2, incomplete_pairs=int((~complete).sum()), unparsed=int(unparsed.sum()),
               n=len(basic))
    return out


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class VideoHallucer(evaluate.Metric):
    # The harness contract (ARCHITECTURE.md, "The metric contract"); yes_diff and no_diff, in [-0.5, 0.5] and best
    # at 0, are no fractions, nor are the pair counts.
    fractions = ("basic_accuracy", "halluc_accuracy", "accuracy", "false_positive_ratio", "hallucination_score")
    higher_is_better = {"basic_accuracy": True, "halluc_accuracy": True, "accuracy": True, "yes_diff": None,
                        "no_diff": None, "false_positive_ratio": False, "hallucination_score": False}
    # No output is a plain share of "correct" verdicts: the accuracies are over complete pairs, per subset.
    verdict_shares: dict = {}

    @staticmethod
    def example_inputs(rng, n):
        """Valid random inputs of n items for `_compute` (the contract test's): question pairs in two subsets, the
        last one incomplete when n is odd."""
        answers = ["Yes.", "No, it is a ball.", "yes", "Yes, there is.", "", "Maybe", "Yes or no", "NO"]
        roles = [ROLES[i % 2] for i in range(n)]
        pair_subsets = [rng.choice(["object_relation", "temporal"]) for _ in range(n // 2 + 1)]
        return {"predictions": [rng.choice(answers) for _ in range(n)],
                "references": [ANSWERS[role] for role in roles],
                "pair_ids": [f"p{i // 2}" for i in range(n)], "roles": roles,
                "subsets": [pair_subsets[i // 2] for i in range(n)]}

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
            codebase_urls=["https://github.com/patrick-tssn/VideoHallucer"],
            reference_urls=["https://arxiv.org/abs/2406.16338"],
        )

    def compute(self, **kwargs):
        """evaluate's compute, refusing a call with no inputs when none were added (evaluate would say that a cache
        file does not exist)."""
        if self.writer is None and all(kwargs.get(name) is None for name in self._feature_names()):
            raise ValueError(f"no inputs: pass {', '.join(self._feature_names())} (or add them with add_batch first)")
        return super().compute(**kwargs)

    def _compute(self, predictions, references, pair_ids=None, roles=None, subsets=None, groups=None):
        per_item, fixed = self._prepare(predictions, references, pair_ids, roles, subsets, groups)
        return self._compute_prepared(**per_item, **fixed)

    @staticmethod
    def item_verdicts(predictions, references, pair_ids=None, roles=None, subsets=None, groups=None):
        """Per question, how `_compute` counts it (the metric contract): (verdict, reading), "correct" when its
        role's answer word is in it (the authors' hit; the pair scores need both questions' hits), "wrong" when
        not, "unreadable" when neither "yes" nor "no" is; the reading the words found ("yes", "no", "yes+no")."""
        if roles is None:
            raise ValueError("roles are required: a question's answer word is its role's")
        readings = [parse_videohallucer(text) for text in predictions]
        return [("correct" if hits(ANSWERS[role], text) else "unreadable" if reading is None else "wrong", reading)
                for text, role, reading in zip(predictions, roles, readings)]

    def _prepare(self, predictions, references, pair_ids=None, roles=None, subsets=None, groups=None):
        """Checks the items and finds each one's pair once: per-item numpy arrays for `_compute_prepared` (which a
        bootstrap resamples) and nothing fixed."""
        if pair_ids is None or roles is None:
            raise ValueError("pair_ids and roles are required: the pair accuracy needs each question's pair and role")
        subsets = ["all"] * len(predictions) if subsets is None else list(subsets)
        _check(predictions, references, pair_ids, roles, subsets, groups)
        verdicts = self.item_verdicts(predictions, references, pair_ids, roles)
        hit = np.array([verdict == "correct" for verdict, _ in verdicts])
        by_pair: dict = {}
        for i, (pair, role) in enumerate(zip(pair_ids, roles)):
            if role in by_pair.setdefault(pair, {}):
                raise ValueError(f"pair_ids[{i}] {pair!r} has a second {role} question (index {by_pair[pair][role]})")
            by_pair[pair][role] = i
        partner = {i: pair for pair in by_pair.values() if len(pair) == 2 for i in pair.values()}
        complete = np.array([i in partner for i in range(len(predictions))])
        basic = np.array([complete[i] and hit[by_pair[p]["basic"]] for i, p in enumerate(pair_ids)])
        halluc = np.array([complete[i] and hit[by_pair[p]["hallucination"]] for i, p in enumerate(pair_ids)])
        unparsed = np.array([reading is None for _, reading in verdicts])
        return {"basic": basic, "halluc": halluc, "complete": complete, "subset": np.array(subsets, dtype=object),
                "unparsed": unparsed, "groups": {k: np.array(v, dtype=object) for k, v in (groups or {}).items()}}, {}

    def _compute_prepared(self, basic, halluc, complete, subset, unparsed, groups):
        result = _summary(basic, halluc, complete, subset, unparsed)
        result["unparsed_indices"] = [int(i) for i in np.flatnonzero(unparsed)]
        result["by_group"] = {
            column: {value: _summary(*(a[values == value] for a in (basic, halluc, complete, subset, unparsed)))
                     for value in dict.fromkeys(values)}
            for column, values in groups.items()
        }
        return result
