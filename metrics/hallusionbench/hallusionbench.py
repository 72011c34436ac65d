"""HallusionBench: question-pair, figure and question accuracy (qAcc, fAcc, aAcc) as the authors compute them."""
import re
from typing import Optional

import datasets

import evaluate


_CITATION = """\
@InProceedings{Guan_2024_CVPR,
    author    = {Guan, Tianrui and Liu, Fuxiao and Wu, Xiyang and Xian, Ruiqi and Li, Zongxia and Liu, Xiaoyu and Wang, Xijun and Chen, Lichang and Huang, Furong and Yacoob, Yaser and Manocha, Dinesh and Zhou, Tianyi},
    title     = {HallusionBench: An Advanced Diagnostic Suite for Entangled Language Hallucination and Visual Illusion in Large Vision-Language Models},
    booktitle = {Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)},
    year      = {2024},
    pages     = {14375-14385}
}
"""

_DESCRIPTION = """\
Scores HallusionBench answers as the authors' evaluation (github.com/tianyi-lab/HallusionBench, utils.py) does:
each answer is judged correct (1), incorrect (0) or unclear (2); a Visual Supplement question asked without a
figure counts an unclear answer as correct (assign_correctness); then qAcc (question pairs: every answer to the same
question across a set's figures correct), fAcc (figures: every question on one figure correct; VS questions without
a figure have no figure) and aAcc (questions), the easy / hard question-pair accuracies, the per-figure score and the
yes/no bias. The judge is either the authors' GPT-4 judgment strings (`judgments`: their parse of "correct",
"incorrect", "unclear") or, without them, the rule-based yes/no matcher of VLMEvalKit (YOrN_Extraction against
gt_answer); every output name ends with the judge that produced it (`_judge` / `_rule`), so the two never mix.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): the models' raw answers ('' for an empty output).
    references (`list` of `str`): `gt_answer`, "1" (yes) or "0" (no).
    category, subcategory, set_id, figure_id, question_id, visual_input (`list` of `str`): the rows' fields as
        released; (category, subcategory, set_id, figure_id, question_id) must be unique.
    judgments (`list` of `str`, optional): the judge's raw output for each answer, to the authors' GPT-4 prompt
        (`JUDGE_PROMPT`). Without them the answers are matched by the rule-based yes/no extraction.
    rule (`str`): which version of VLMEvalKit's yes/no extraction: "vlmevalkit" (default; its period pattern since
        commit 928a95b0 of 2025-05-13) or "vlmevalkit-2024" (the pattern before it). They differ on answers with
        many periods after digits, such as numbered lists ("1. 2. ... 33. no." reads "no" only under the first).
    groups (`dict` of `str` to `list`, optional): grouping columns, each with one value per prediction; each group
        gets the same scores computed on its rows alone (as the authors score VD and VS apart).

Returns (`<j>` is `judge` with judgments, `rule` without):
    qacc_<j> (`float`): share of question pairs whose every answer is correct.
    facc_<j> (`float`): share of figures whose every answer is correct.
    aacc_<j> (`float`): share of correct answers.
    easy_qacc_<j>, hard_qacc_<j> (`float` or `None`): qAcc over the easy questions (visual_input 0 or 1) and the
        hard ones (visual_input 2), the leaderboard's "easy aAcc" / "hard aAcc" (evaluation.py computes them with
        get_eval_pair_easy / get_eval_pair_hard); None without such questions.
    figure_score_<j> (`float` or `None`): the mean over figures of their share of correct answers.
    yes_bias_<j> (`float`): share of answers read as "yes" minus share of "yes" references (yes_ratio_stats "Pct
        Diff"; an answer is read as "yes" when it is correct on a "yes" question or wrong on a "no" one).
    fp_ratio_<j> (`float` or `None`): share of "no" questions among the wrong answers (yes_ratio_stats "FP Ratio");
        None without wrong answers.
    n (`int`): how many answers.
    unparsed (`int`) and unparsed_indices (`list` of `int`): the answers judged unclear (2): no yes/no read by the
        rule, or a judgment with neither "correct" nor "incorrect"; wrong, except on VS questions without a figure.
    by_group (`dict`): {column: {value: {the scores above, unparsed, n}}}.

Examples:
    >>> hb = evaluate.load("hallusionbench")
    >>> rows = dict(category=["VD"] * 4, subcategory=["ocr"] * 4, set_id=["0"] * 4,
    ...             figure_id=["0", "0", "1", "1"], question_id=["0", "1", "0", "1"], visual_input=["1", "1", "2", "2"])
    >>> results = hb.compute(predictions=["Yes.", "No", "Yes", "I cannot tell"], references=["1", "0", "0", "1"], **rows)
    >>> print(results["aacc_rule"], results["qacc_rule"], results["facc_rule"], results["unparsed_indices"])
    0.5 0.0 0.5 [3]
    >>> results = hb.compute(predictions=["Yes.", "No", "Yes", "I cannot tell"], references=["1", "0", "0", "1"],
    ...                      judgments=["Correct", "correct", "Incorrect", "unclear"], **rows)
    >>> print(results["aacc_judge"], results["unparsed"])
    0.5 1
"""

# The authors' GPT-4 judge prompt (utils.py evaluate_by_chatgpt, github.com/tianyi-lab/HallusionBench @ 744007c),
# verbatim: {question}, {gt_answer_details} and {prediction} are filled in by plain concatenation there.
JUDGE_PROMPT = (
    'Imagine you are an intelligent teacher. Thoroughly read the question, reference answer and the prediction answer '
    'to ensure a clear understanding of the information provided. Assess the correctness of the predictions. '
    'If the prediction answer does not conflict with the reference answer, please generate “correct”. If the '
    'prediction answer conflict with the reference answer, please generate “incorrect”. If the prediction answer is '
    'unclear about the answer, please generate "unclear". \n\n Question:{question}\nReference answer: '
    '{gt_answer_details}\nPrediction answer:{prediction}\nOutput:'
)
ROW_FIELDS = ("category", "subcategory", "set_id", "figure_id", "question_id", "visual_input")
CORRECT, INCORRECT, UNCLEAR = 1, 0, 2

# VLMEvalKit's process_punctuation (vlmeval/smp/misc.py), kept as written, re.UNICODE landing in `count` included (so
# at most 32 periods go). Its period pattern changed in commit 928a95b0 (2025-05-13; unchanged at e8e78f05,
# 2026-08-18): "vlmevalkit" is that rule, (?<!\d)\.(?!\d), which keeps a period after a digit ("1. 2." stays) and
# so leaves the count to the periods that matter; "vlmevalkit-2024" is the one before it, (?!<=\d)(\.)(?!\d),
# a lookahead that removes a period after a digit too, so a numbered answer ("1. 2. ... 33. no.") spends the 32
# before its last "no." and reads as no answer. The default is VLMEvalKit's current rule, the one its results use
# today; the older one reproduces results VLMEvalKit (and hallubench before 2026-11-27) made with it.
_PUNCT = [';', r'/', '[', ']', '"', '{', '}', '(', ')', '=', '+', '\\', '_', '-', '>', '<', '@', '`', ',', '?', '!']
_COMMA_STRIP = re.compile(r'(\d)(,)(\d)')
PERIOD_RULES = {"vlmevalkit": re.compile(r'(?<!\d)\.(?!\d)'), "vlmevalkit-2024": re.compile(r'(?!<=\d)(\.)(?!\d)')}


def _process_punctuation(text: str, rule: str) -> str:
    out = text
    for p in _PUNCT:
        if (p + ' ' in text or ' ' + p in text) or (re.search(_COMMA_STRIP, text) is not None):
            out = out.replace(p, '')
        else:
            out = out.replace(p, ' ')
    return PERIOD_RULES[rule].sub('', out, re.UNICODE)


def extract_yes_no(text: str, rule: str = "vlmevalkit") -> Optional[str]:
    """VLMEvalKit's YOrN_Extraction: "yes" / "no" when exactly one of the two is a word of the answer, else None."""
    words = _process_punctuation(text.lower(), rule).split()
    if 'yes' in words and 'no' not in words:
        return "yes"
    if 'yes' not in words and 'no' in words:
        return "no"
    return None


def judge_code(judgment: str) -> int:
    """The authors' reading of a GPT-4 judgment (evaluate_by_chatgpt): 0 when it says "incorrect", else 1 when it
    says "correct", else 2 (unclear)."""
    text = judgment.lower()
    return INCORRECT if 'incorrect' in text else CORRECT if 'correct' in text else UNCLEAR


def rule_code(prediction: str, reference: str, rule: str = "vlmevalkit") -> int:
    """The rule-based judgment: 1 when the extracted yes/no is the reference's, 0 when it is the other, 2 when none."""
    answer = extract_yes_no(prediction, rule)
    return UNCLEAR if answer is None else CORRECT if (answer == "yes") == (reference == "1") else INCORRECT


def _check_lists(named: dict, n: int) -> None:
    for name, values in named.items():
        if values is None or isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
            raise ValueError(f"{name} must be a list with one value per prediction, got {type(values).__name__}")
        if len(values) != n:
            raise ValueError(f"{name} has {len(values)} values for {n} predictions (first unpaired index: "
                             f"{min(len(values), n)})")
        for i, value in enumerate(values):
            if not isinstance(value, str):
                raise ValueError(f"{name}[{i}] is {value!r}, not a string" + (
                    "; pass '' for an empty output" if name in ("predictions", "judgments") else ""))


def _check_groups(groups, n: int) -> dict:
    if groups is None:
        return {}
    if not isinstance(groups, dict):
        raise ValueError(f"groups must be a dict of column name -> list of values, got {type(groups).__name__}")
    for column, values in groups.items():
        if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__") or len(values) != n:
            raise ValueError(f"groups[{column!r}] must be a list with one group value per prediction ({n})")
        for i, value in enumerate(values):
            if value is None or value != value:  # None or NaN
                raise ValueError(f"groups[{column!r}][{i}] is {value!r}; every item needs a group value")
    return groups


def _all_correct_share(keys: list, correct: list) -> Optional[float]:
    """Share of the keys whose every item is correct (qAcc, fAcc); None without items."""
    members: dict = {}
    for key, ok in zip(keys, correct):
        members.setdefault(key, []).append(ok)
    return sum(all(oks) for oks in members.values()) / len(members) if members else None


def _scores(items: list, suffix: str) -> dict:
    """The authors' numbers over `items`, each (row fields dict, reference, code, correct)."""
    pair = [(r["category"], r["subcategory"], r["set_id"], r["question_id"]) for r, *_ in items]
    correct = [ok for *_, ok in items]
    figures = [(i, (r["category"], r["subcategory"], r["set_id"], r["figure_id"])) for i, (r, *_) in enumerate(items)
               if not (r["category"] == "VS" and r["figure_id"] == "0")]  # no figure (get_eval_fig)
    per_figure: dict = {}
    for i, key in figures:
        per_figure.setdefault(key, []).append(correct[i])
    easy = [i for i, (r, *_) in enumerate(items) if r["visual_input"] != "2"]
    hard = [i for i, (r, *_) in enumerate(items) if r["visual_input"] == "2"]
    references = [ref == "1" for _, ref, *_ in items]
    # yes_ratio_stats: a correct answer to a "yes" question or a wrong one to a "no" question was a "yes"
    said_yes = [ok == ref for ref, ok in zip(references, correct)]
    wrong = [ref for ref, ok in zip(references, correct) if not ok]
    return {
        f"qacc_{suffix}": _all_correct_share(pair, correct),
        f"facc_{suffix}": _all_correct_share([key for _, key in figures], [correct[i] for i, _ in figures]),
        f"aacc_{suffix}": sum(correct) / len(correct),
        f"easy_qacc_{suffix}": _all_correct_share([pair[i] for i in easy], [correct[i] for i in easy]),
        f"hard_qacc_{suffix}": _all_correct_share([pair[i] for i in hard], [correct[i] for i in hard]),
        f"figure_score_{suffix}": (sum(sum(oks) / len(oks) for oks in per_figure.values()) / len(per_figure)
                                   if per_figure else None),
        f"yes_bias_{suffix}": sum(said_yes) / len(said_yes) - sum(references) / len(references),
        f"fp_ratio_{suffix}": (len(wrong) - sum(wrong)) / len(wrong) if wrong else None,
        "unparsed": sum(code == UNCLEAR for _, _, code, _ in items),
        "n": len(items),
    }


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class HallusionBench(evaluate.Metric):
    # The harness contract (ARCHITECTURE.md, "The metric contract"), for both judges' names; yes_bias, a difference
    # of two shares in [-1, 1], is no fraction; fp_ratio describes the errors and is better neither way.
    fractions = tuple(f"{name}_{judge}" for judge in ("rule", "judge")
                      for name in ("qacc", "facc", "aacc", "easy_qacc", "hard_qacc", "figure_score", "fp_ratio"))
    higher_is_better = {**{name: None if name.startswith("fp_ratio") else True for name in fractions},
                        "yes_bias_rule": None, "yes_bias_judge": None}
    # Which outputs are shares of "correct" verdicts (the metric contract).
    verdict_shares = {"aacc_rule": None, "aacc_judge": None}

    @staticmethod
    def example_inputs(rng, n):
        """Valid random inputs of n items for `_compute` (the contract test's): sets of two questions on two figures,
        VS questions without a figure among them, and the judge's judgments for some draws."""
        answers = ["Yes.", "No", "yes, it is", "I cannot tell", "", "Yes or no?", "NO."]
        rows = {"predictions": [rng.choice(answers) for _ in range(n)],
                "references": [rng.choice("01") for _ in range(n)],
                "category": [rng.choice(["VD", "VS"]) for _ in range(n)],
                "subcategory": ["chart"] * n,
                "set_id": [str(i // 4) for i in range(n)],
                "figure_id": [str(i // 2 % 2) for i in range(n)],
                "question_id": [str(i % 2) for i in range(n)],
                "visual_input": [rng.choice("012") for _ in range(n)]}
        if rng.random() < 0.5:
            rows["judgments"] = [rng.choice(["Correct", "incorrect.", "unclear", ""]) for _ in range(n)]
        return rows

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
            codebase_urls=["https://github.com/tianyi-lab/HallusionBench"],
            reference_urls=["https://arxiv.org/abs/2310.14566"],
        )

    def compute(self, **kwargs):
        """evaluate's compute, refusing a call with no inputs, and rows whose key repeats (the authors' scorer asserts
        each (category, subcategory, set_id, figure_id, question_id) once)."""
        if self.writer is None and all(kwargs.get(name) is None for name in self._feature_names()):
            raise ValueError(f"no inputs: pass {', '.join(self._feature_names())} (or add them with add_batch first)")
        if all(isinstance(kwargs.get(name), (list, tuple)) for name in ROW_FIELDS):
            seen: dict = {}
            for i, key in enumerate(zip(*(kwargs[name] for name in ROW_FIELDS[:5]))):
                if key in seen:
                    raise ValueError(f"rows {seen[key]} and {i} are the same question {key}; each (category, "
                                     "subcategory, set_id, figure_id, question_id) must appear once")
                seen[key] = i
        return super().compute(**kwargs)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Checks the raw inputs (before evaluate turns NaN into "nan"), then adds them."""
        _check_lists({"predictions": predictions}, len(predictions) if hasattr(predictions, "__len__") else -1)
        _check_lists({"references": references}, len(predictions))
        for i, label in enumerate(references):
            if label not in ("0", "1"):
                raise ValueError(f"references[{i}] is {label!r}; expected gt_answer '1' (yes) or '0' (no)")
        if not predictions:
            raise ValueError("predictions and references are empty; pass at least one item")
        super().add_batch(predictions=predictions, references=references, **kwargs)

    @staticmethod
    def item_verdicts(predictions, references, category=None, subcategory=None, set_id=None, figure_id=None,
                      question_id=None, visual_input=None, judgments=None, groups=None, rule="vlmevalkit"):
        """Per item, how `_compute` counts it (the metric contract): (verdict, reading). The reading is the rule's
        yes/no (`extract_yes_no`), or with `judgments` the judge's "correct"/"incorrect"; None when unclear, which
        the authors count correct on a VS question without a figure and "unreadable" (wrong) elsewhere."""
        if rule not in PERIOD_RULES:
            raise ValueError(f"rule is {rule!r}; expected one of {', '.join(PERIOD_RULES)}")
        fields = dict(zip(ROW_FIELDS, (category, subcategory, set_id, figure_id, question_id, visual_input)))
        missing = [name for name, values in fields.items() if values is None]
        if missing:
            raise ValueError(f"pass the rows' {', '.join(missing)}: the scores group answers by them")
        _check_lists({**fields, **({"judgments": judgments} if judgments is not None else {})}, len(predictions))
        if judgments is not None:
            codes = [judge_code(text) for text in judgments]
            readings = [None if code == UNCLEAR else "correct" if code == CORRECT else "incorrect" for code in codes]
        else:
            codes = [rule_code(text, ref, rule) for text, ref in zip(predictions, references)]
            readings = [extract_yes_no(text, rule) for text in predictions]
        # assign_correctness: unclear is correct on a VS question without a figure, wrong elsewhere
        return [("correct" if code == CORRECT or (code == UNCLEAR and kind == "VS" and figure == "0")
                 else "unreadable" if code == UNCLEAR else "wrong", reading)
                for code, reading, kind, figure in zip(codes, readings, category, figure_id)]

    def _compute(self, predictions, references, category=None, subcategory=None, set_id=None, figure_id=None,
                 question_id=None, visual_input=None, judgments=None, groups=None, rule="vlmevalkit"):
        fields = dict(zip(ROW_FIELDS, (category, subcategory, set_id, figure_id, question_id, visual_input)))
        verdicts = self.item_verdicts(predictions, references, *fields.values(), judgments, rule=rule)
        groups = _check_groups(groups, len(predictions))
        rows = [dict(zip(ROW_FIELDS, values)) for values in zip(*fields.values())]
        suffix = "rule" if judgments is None else "judge"
        codes = [UNCLEAR if reading is None else INCORRECT if verdict == "wrong" else CORRECT
                 for verdict, reading in verdicts]
        correct = [verdict == "correct" for verdict, _ in verdicts]
        items = list(zip(rows, references, codes, correct))
        result = _scores(items, suffix)
        result["unparsed_indices"] = [i for i, code in enumerate(codes) if code == UNCLEAR]
        result["by_group"] = {}
        for column, values in groups.items():
            members: dict = {}
            for i, value in enumerate(values):
                members.setdefault(value, []).append(items[i])
            result["by_group"][column] = {value: _scores(subset, suffix) for value, subset in members.items()}
        return result
