"""AMBER (Wang et al. 2023): CHAIR, Cover, Hal and Cog of image descriptions; accuracy, precision, recall and F1
of yes/no questions on existence, attribute (state, number, action) and relation; the AMBER score."""
import re
import warnings
from functools import lru_cache
from typing import Optional

import numpy as np

import datasets
import evaluate


_CITATION = """\
@article{wang2023llm,
  title={An LLM-free Multi-dimensional Benchmark for MLLMs Hallucination Evaluation},
  author={Wang, Junyang and Wang, Yuhang and Xu, Guohai and Zhang, Jing and Gu, Yukai and Jia, Haitao and Yan, Ming and Zhang, Ji and Sang, Jitao},
  journal={arXiv preprint arXiv:2311.07397},
  year={2023}
}
"""

_DESCRIPTION = """\
Scores AMBER as the authors' inference.py (github.com/junyangwang0410/AMBER @ 534babf) does. Generative items
(an image description against the annotated truth and hallucination objects): CHAIR (share of the described
objects that are hallucinated), Cover (share of the truth objects mentioned), Hal (share of descriptions with a
hallucinated object) and Cog (share of the annotated hallucination-prone objects mentioned). Discriminative items
(yes/no questions): accuracy, and precision, recall and F1 of the answer "no", overall and per dimension
(existence, attribute with state/number/action, relation). AMBER score = (1 - CHAIR + F1) / 2. Every value is the
script's printed percentage (rounded to one decimal as it rounds) divided by 100.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): the models' raw outputs ('' for an empty output).
    references (`list` of `dict`): per item its annotation: `answer` ("yes"/"no" for a question, "" for a
        description), `truth` and `hallu` (a description's truth and hallucination objects, objects of the
        release's relation.json; empty lists for a question).
    types (`list` of `str`): per item its annotations.json type: "generative", "discriminative-hallucination",
        "discriminative-attribute-state" / "-number" / "-action", "discriminative-relation" or "relation".
    mode (`str`): how a question's output is read. "default": the first standalone yes/no word, any case
        ("**Yes**, there is." is a yes); "official": the script's rule, the output must be exactly "Yes" or
        "No". Defaults to "default".
    nlp (`str`): how nouns are found in a description. "installable" (default): nltk's word tokenizer (untrained
        Punkt sentences), no part-of-speech filter, lemminflect noun lemmas, exact object matching only;
        "authors": the script's nltk word_tokenize + pos_tag + WordNetLemmatizer and spaCy en_core_web_lg
        near-synonyms (needs nltk's data and that spaCy model installed).
    similarity_score (`float`): the near-synonym threshold of nlp="authors" (the script's 0.8).

Returns:
    chair, cover, hal, cog (`float`): with descriptions among the items, in [0, 1].
    accuracy, precision, recall, f1 (`float`): with questions among the items, over all of them;
        existence_*, attribute_*, state_*, number_*, action_*, relation_*: the same per dimension present.
    amber_score (`float`): (1 - chair + f1) / 2, with both kinds of item.
    n (`int`), unparsed (`int`): questions whose output is neither yes nor no under `mode` (scored wrong, as
        the script scores them), unparsed_indices (`list` of `int`).

Examples:
    >>> amber = evaluate.load("amber")
    >>> results = amber.compute(
    ...     predictions=["A man walks his dogs on the grass near a car.", "Yes.", "no", "Maybe."],
    ...     references=[
    ...         {"answer": "", "truth": ["person", "dog", "grass"], "hallu": ["car", "cat"]},
    ...         {"answer": "yes", "truth": [], "hallu": []},
    ...         {"answer": "no", "truth": [], "hallu": []},
    ...         {"answer": "no", "truth": [], "hallu": []},
    ...     ],
    ...     types=["generative", "discriminative-hallucination", "discriminative-hallucination", "relation"],
    ... )
    >>> print(results["chair"], results["cover"], results["hal"], results["cog"], results["unparsed"])
    0.25 1.0 1.0 0.5 1
    >>> print(results["accuracy"], results["precision"], results["recall"], results["f1"], results["amber_score"])
    0.666 0.999 0.5 0.666 0.708

    Like the script, each share starts its denominator at 0.001 (metrics.txt), so 2 of 3 prints 66.6, not 66.7:
    the difference vanishes at the benchmark's size.
"""

MODES = ("default", "official")
NLP = ("installable", "authors")
GENERATIVE = "generative"
# annotations.json type -> the script's dimension; it counts every other type (here: "discriminative-relation"
# and the release's 689 "relation") as relation.
DIMENSIONS = {
    "discriminative-hallucination": "existence",
    "discriminative-attribute-state": "state",
    "discriminative-attribute-number": "number",
    "discriminative-attribute-action": "action",
    "discriminative-relation": "relation",
    "relation": "relation",
}
DIMENSION_NAMES = ("existence", "state", "number", "action", "relation")
ATTRIBUTE = ("state", "number", "action")
# The script's F1 adds this to the denominator: 0.001 for existence, 0.0001 for the others.
F1_EPSILON = {"existence": 0.001}
# metrics.txt starts every denominator at 0.001 (so an empty one prints 0.0 instead of failing).
START = 0.001
# generative counts per item, in this order
GEN_COUNTS = ("chair_score", "chair_num", "safe_cover_score", "safe_cover_num", "hallu_cover_score",
              "hallu_cover_num", "non_hallu_score")
# Hyphens bind: "no-one" is not a "no". Same reading as the pa_hr metric (metric modules load stand-alone).
_ANSWER_WORD = re.compile(r"(?<![\w-])(yes|no)(?![\w-])", re.IGNORECASE)
_OPTION_ECHO = re.compile(r"\b(?:yes\s*(?:/|\bor\b)\s*no|no\s*(?:/|\bor\b)\s*yes)\b", re.IGNORECASE)

# data/safe_words.txt and data/relation.json of the release (Apache-2.0, Alibaba X-PLUG Team, @ 534babf):
# the object lexicon the script matches descriptions against, as CHAIR's scorer holds its synonym list.
SAFE_WORDS = ("orange", "snack", "line", "camera", "light", "shoe", "sign", "range", "individual")
RELATION = {
    "sky": [], "grass": ["ground"], "wall": ["building"], "ground": ["floor"], "road": ["path", "street", "ground"],
    "person": ["people", "individual", "man", "woman", "boy", "girl"], "cloud": [],
    "forest": ["tree", "leave", "bush"], "table": ["desk"], "tree": ["forest", "leave", "bush"],
    "floor": ["ground"], "sea": ["water", "lake"], "hat": [], "dog": [], "cat": [],
    "mountain": ["hill", "rock", "stone", "reef"], "beach": ["sand", "shore", "waterfont", "ground", "desert"],
    "waterfront": ["shore"], "woman": ["person", "people", "individual", "girl"],
    "car": ["window", "door", "tire", "vehicle", "light", "mirror", "plate"], "house": ["building"], "plate": [],
    "bicycle": ["bike", "tire", "saddle"], "man": ["person", "people", "individual", "boy"],
    "bench": ["chair", "armrest"], "glove": [], "toy": [], "fence": ["bail", "barrier", "rail", "bar", "railing"],
    "laptop": ["screen", "keyboard", "computer"], "toilet": ["closestool", "pan", "stool", "bowl", "tank"],
    "snow": ["ground"], "surfboard": ["board", "spray"], "keyboard": ["computer"], "bird": ["bill"],
    "bus": ["car", "truck", "window", "door", "tire", "vehicle", "light", "mirror", "plate"],
    "sign": ["signal", "pole", "street", "road", "path"], "chair": ["bench"], "cable": ["line", "cord"],
    "cabinet": [], "cup": [], "glass": [], "frisbee": [], "bear": [],
    "motorbike": ["motorcycle", "bike", "tire", "vehicle", "saddle", "mirror", "plate"], "computer": [],
    "tap": ["stopcock", "faucet"], "bed": ["sheet", "mattress", "cushion"],
    "train": ["track", "window", "vehicle", "car", "container", "light"], "hydrant": ["street", "road", "ground"],
    "horse": [], "phone": ["telephone", "screen"], "umbrella": [], "flower": [],
    "truck": ["car", "window", "door", "tire", "vehicle", "light", "mirror", "plate", "bed"], "door": [], "cow": [],
    "banana": [], "plane": [], "snowboard": ["ski"], "zebra": [], "sheep": [], "mouse": ["computer"], "pillow": [],
    "lake": ["water", "sea", "river"], "streetlamp": ["light", "lamp"], "sink": ["basin"], "skate": ["board"],
    "carpet": ["rug", "blanket", "floor"], "ship": ["boat", "vessel", "sailing", "vehicle"], "kite": [],
    "apple": [], "quilt": [], "rail": ["track"], "lounge": ["chair", "bench", "armrest"], "mirror": ["glass"],
    "river": ["lake", "water"], "sofa": ["couch", "chair", "bench"], "giraffe": [], "window": ["glass"], "ball": [],
    "sun": [], "curtain": [], "lamp": ["light"], "socket": ["plug"], "book": ["paper"], "rope": ["cord", "string"],
    "backpack": ["bag", "pack"], "wire": ["cable", "cord"], "bin": ["can", "bucket"],
    "tissue": ["napkin", "towel", "paper"], "vase": [], "sheet": ["bedsheet", "cloth"], "orange": ["tangerine"],
    "drawing": ["painting"], "wineglass": ["cup", "glass", "cann", "goblet"],
    "tablecloth": ["napery", "table", "cloth"], "tussock": ["grass"], "doll": ["toy"], "line": ["string", "cord"],
    "holder": [], "mousepad": ["pad"], "light": [], "pole": [], "cone": [], "building": [], "manhole": [],
    "bowl": [], "alarm": ["clock"], "court": [], "rock": ["stone"], "cake": [], "paddle": ["oar"], "fork": [],
    "elephant": [], "necklace": ["necklet", "collar"], "coffee": ["cafe", "drink"], "pizza": ["cheese", "bread"],
    "knife": [], "sausage": [], "child": ["kid", "person", "people", "boy", "girl", "man", "woman", "individual"],
    "bread": [], "shoe": [], "signal": ["light"], "sound": [], "tie": ["necktie", "collar"],
    "luggage": ["box", "baggage"], "microwave": ["oven", "container", "door", "bar"], "scoon": [],
    "football": ["soccer", "ball"], "pipe": ["hose"], "bat": [], "bath": ["bathtub", "tub"], "stone": ["rock"],
    "electrombile": ["bike", "motorbike", "motorcycle", "vehicle", "mirror"], "cloth": [], "sticker": ["note"],
    "racket": ["bat", "string"], "paper": [], "kettle": ["bottle"], "parasail": ["paraglider", "kite"],
    "toothbrush": [], "pigeon": ["dove", "bird"], "wine": ["drink", "alcohol"],
    "boy": ["person", "people", "individual", "man", "child"],
    "girl": ["person", "people", "individual", "woman", "child"], "watch": [], "doughnut": [],
    "sunflower": ["flower"], "scarf": ["warp", "muffler"], "carrot": [], "broccoli": [], "leave": [], "bridge": [],
    "urinal": ["pissoir", "toilet"], "television": ["TV", "screen"], "bookshelf": ["shelf"], "bag": [],
    "spray": ["bottle"], "bucket": [], "board": ["sign"], "baggage": ["bag"], "antelope": [],
    "notebook": ["paper", "note"], "tire": [], "lock": [], "telephone": ["phone", "screen"], "cushion": [],
    "extinguisher": [], "handrail": ["rail", "armrest"], "brush": [], "stair": ["staircase"], "kiwifruit": ["kiwi"],
    "peach": [], "strawberry": [], "toothpaste": [], "bracelet": [], "flag": [], "box": ["container"], "tank": [],
    "pulp": ["board", "surfboard"], "grill": ["barbecue", "rack"], "charcoal": [], "doghole": ["kennel", "bed"],
    "sauce": [], "duck": ["bird", "bill"], "pad": ["screen"], "note": ["sticker"], "tape": [], "drain": [],
    "bottle": [], "sunglasses": [], "camera": [], "refrigerator": ["fridge", "door"], "tomato": [],
    "support": ["holder"], "saddle": [], "switch": [], "baconic": [], "cheese": [],
    "guardrail": ["rail", "bar", "railing", "fence", "barrier"], "snack": [], "pot": ["pan"], "cooktop": ["hearth"],
    "island": [], "sailing": ["boat", "ship", "vessel", "vehicle"], "pier": [], "flowerpot": ["pot"],
    "reef": ["rock", "riff"], "sand": ["desert", "ground"], "water": [], "can": [], "opener": [],
    "monitor": ["screen", "computer"], "clock": [], "file": [], "monkey": [], "controller": [],
    "ebook": ["e-book", "book"], "seegull": ["bird"], "yacht": ["ship", "boat", "vessel", "sailing", "vehicle"],
    "towel": ["napkin"], "napkin": ["towel"], "cherry": [], "basin": ["pot", "tub"], "rice": [], "cabbage": [],
    "tangerine": ["orange"], "pear": [], "bush": ["grove", "tree", "forest"], "money": ["cash", "bill"],
    "airport": [], "hot": [], "blanket": ["rug", "carpet", "cushion", "mat"], "fish": [],
    "sanitizer": ["soap", "bottle"], "ceiling": [], "sled": [], "rabbit": [], "cathole": ["kennel"], "slippers": [],
    "dresser": [], "fishnet": ["net", "rpoe"], "pen": [], "drink": [], "milk": [], "stage": [], "dustbin": ["bin"],
    "leopard": [], "squirrel": [], "insect": ["worm"], "buoy": [], "toothpick": [], "earphone": [], "goal": [],
    "butterfly": [], "eagle": ["bird"], "air-conditioning": [], "shell": [], "crocodile": [], "candle": [],
    "steak": [], "tent": [], "rainbow": [], "cage": [], "railing": [], "trough": [], "cooker": ["range"],
    "lion": [], "charger": [], "dryer": [], "hanger": [], "chopsticks": [], "shampoo": ["bottle"],
    "glacier": ["ice"], "newspaper": [], "basket": [], "balloon": ["ball"], "volleyball": ["ball"], "net": ["rope"],
    "ribbon": [], "basketball": ["ball"], "mattress": [], "blueberry": [], "egg": [], "lemon": [], "melon": [],
    "track": [], "potato": [], "goose": [], "showerhead": [], "watermelon": [], "pineapple": [], "guitar": [],
    "tennis": [], "juice": [], "juicer": [], "card": [], "ring": [], "crutch": ["pole", "support"],
    "desert": ["sand", "ground", "beach"], "deer": [], "cream": ["ice"], "shrimp": [], "cowpea": [], "ice": [],
    "tiger": [], "pig": [], "cola": [], "grape": [], "chicken": ["bird", "bill"], "rack": ["shelf"],
    "magazine": ["book"], "meat": [], "telescope": [], "grapefruit": [], "pinwheel": ["windmill"],
    "baseball": ["ball"], "ginger": [], "camel": [], "snowman": [], "shovel": ["spade", "scoop"],
    "showerpuff": ["ball", "sponge"], "earing": ["earrings"], "tinfoil": ["sliver"], "mushroom": [],
    "tortoise": ["turtle"], "beer": ["drink"], "microphone": [], "piano": [], "rod": ["pole"], "fox": [],
    "coconut": [], "rugby": ["football"], "core": ["kernel"], "panda": ["bear"], "bamboo": [], "star": [],
    "moon": [], "bar": [], "toaster": [],
}
VOCABULARY = frozenset(RELATION) | frozenset(word for words in RELATION.values() for word in words)


def read_yes_no(text: str, mode: str) -> Optional[str]:
    """The answer the script sees: "Yes", "No", or None for any other output."""
    if mode == "official":
        return text if text in ("Yes", "No") else None
    match = _ANSWER_WORD.search(_OPTION_ECHO.sub(" ", text))
    return match.group(1).capitalize() if match else None


@lru_cache(maxsize=None)
def _installable_tools():
    try:
        from lemminflect import getLemma
        from nltk.tokenize import NLTKWordTokenizer, PunktSentenceTokenizer
    except ImportError as err:
        raise ValueError(f"nlp='installable' needs nltk and lemminflect ({err}); pip install nltk lemminflect") from err
    return PunktSentenceTokenizer(), NLTKWordTokenizer(), getLemma


@lru_cache(maxsize=65536)
def _noun_lemma(token: str) -> str:
    """WordNetLemmatizer's noun lemma as lemminflect gives it: the shortest candidate (nltk takes the shortest
    WordNet form); a token that is not lower-case is kept, as WordNet (lower-case) finds no form for it."""
    if not token.islower():
        return token
    lemmas = _installable_tools()[2](token, upos="NOUN")
    return min(lemmas, key=len) if lemmas else token


def installable_nouns(text: str) -> list:
    """nltk.word_tokenize's tokens (its sentence split done by an untrained Punkt, the trained one being data not
    on PyPI), every token taken for a noun (nltk's tagger is such data too) and lemmatized as one."""
    sentences, words, _ = _installable_tools()
    return [_noun_lemma(token) for sentence in sentences.tokenize(text) for token in words.tokenize(sentence)]


@lru_cache(maxsize=None)
def _authors_tools():
    try:
        import nltk
        import spacy
        from nltk.stem import WordNetLemmatizer
        lemmatizer = WordNetLemmatizer()
        nltk.pos_tag(nltk.word_tokenize("A test."))
        lemmatizer.lemmatize("tests")
        nlp = spacy.load("en_core_web_lg")
    except (ImportError, LookupError, OSError) as err:
        raise ValueError("nlp='authors' needs nltk with its punkt_tab, averaged_perceptron_tagger_eng and wordnet "
                         "data (nltk.download) and spaCy with en_core_web_lg (python -m spacy download "
                         f"en_core_web_lg), none of them on PyPI; use nlp='installable' ({err})") from err
    return nltk, lemmatizer, nlp


def authors_nouns(text: str) -> list:
    """inference.py's extract_nouns."""
    nltk, lemmatizer, _ = _authors_tools()
    return [lemmatizer.lemmatize(word) for word, pos in nltk.pos_tag(nltk.word_tokenize(text)) if pos.startswith("NN")]


@lru_cache(maxsize=None)
def _spacy_doc(word: str):
    return _authors_tools()[2](word)


def _mark(flags: list, j: int, tail: int) -> None:
    """The script's update of a cover list: an associated word (head) marks its object, an object (tail) itself."""
    if j < len(flags) - tail:
        flags[flags[j] + len(flags) - tail] = 1
    else:
        flags[j] = 1


def description_counts(nouns: list, truth: list, hallu: list, similar) -> tuple:
    """One description's GEN_COUNTS, as inference.py's generative branch counts them."""
    nouns = [noun for noun in nouns if noun in VOCABULARY]
    safe_words = [w for word in truth for w in RELATION[word]] + list(truth)
    safe_list = [idx for idx, word in enumerate(truth) for _ in RELATION[word]] + [0] * len(truth)
    ha_words = [w for word in hallu for w in RELATION[word]] + list(hallu)
    ha_list = [idx for idx, word in enumerate(hallu) for _ in RELATION[word]] + [0] * len(hallu)
    safe_flags = [0] * len(nouns)
    for idx, noun in enumerate(nouns):
        if noun in SAFE_WORDS:
            continue
        if noun in safe_words:
            _mark(safe_list, safe_words.index(noun), len(truth))
            continue
        if noun in ha_words:
            _mark(ha_list, ha_words.index(noun), len(hallu))
        for j, word in enumerate(ha_words):
            if similar(noun, word):
                _mark(ha_list, j, len(hallu))
                break
        for j, word in enumerate(safe_words):
            if similar(noun, word):
                _mark(safe_list, j, len(truth))
                break
        else:
            safe_flags[idx] = 1
    safe_tail = safe_list[-len(truth):] if truth else safe_list  # the script's [-0:] is the whole list
    ha_tail = ha_list[-len(hallu):] if hallu else ha_list
    return (sum(safe_flags), len(safe_flags), sum(safe_tail), len(safe_tail), sum(ha_tail), len(ha_tail),
            int(sum(safe_flags) == 0))


def _percent(score, num, start: float = START) -> float:
    return round(float(score) / (num + start) * 100, 1)


def _fraction(percent: float) -> float:
    """A printed percentage (at most two decimals) as a fraction, without float noise (66.7 -> 0.667)."""
    return round(float(percent) / 100, 4)


def _question_scores(counts: np.ndarray, epsilon: float, start: float = START) -> dict:
    """Accuracy, precision, recall, F1 of "no" from summed (correct, n, no_correct, n_no, answered_no_correct,
    answered_no) counts, as the script prints them (percentages to one decimal), divided by 100. `start`: what the
    script's denominators start at (0.001 each; attribute adds up three)."""
    correct, n, no_correct, n_no, ans_no_correct, ans_no = counts
    accuracy, precision, recall = (_percent(score, num, start) for score, num in
                                   ((correct, n), (ans_no_correct, ans_no), (no_correct, n_no)))
    f1 = round(2 * (precision / 100) * (recall / 100) / ((precision / 100) + (recall / 100) + epsilon) * 100, 1)
    return {name: _fraction(value) for name, value in
            (("accuracy", accuracy), ("precision", precision), ("recall", recall), ("f1", f1))}


def score_prepared(dimension: np.ndarray, generative: np.ndarray, questions: np.ndarray, unread: np.ndarray) -> dict:
    """The metrics from the per-item arrays `_prepare` gives: `dimension` (-1 for a description, else the index
    in DIMENSION_NAMES), `generative` (GEN_COUNTS per item), `questions` (the six question counts per item),
    `unread` (a question whose output is neither yes nor no)."""
    result: dict = {"n": len(dimension), "unparsed": int(unread.sum()),
                    "unparsed_indices": np.flatnonzero(unread).tolist()}
    is_description = dimension < 0
    if is_description.any():
        sums = dict(zip(GEN_COUNTS, generative[is_description].sum(axis=0)))
        result["chair"] = _fraction(_percent(sums["chair_score"], sums["chair_num"]))
        result["cover"] = _fraction(_percent(sums["safe_cover_score"], sums["safe_cover_num"]))
        result["hal"] = _fraction(round(100 - float(sums["non_hallu_score"]) / (is_description.sum() + START) * 100, 1))
        result["cog"] = _fraction(_percent(sums["hallu_cover_score"], sums["hallu_cover_num"]))
    if (~is_description).any():
        result.update(_question_scores(questions[~is_description].sum(axis=0), 0.0001))
        present = [name for code, name in enumerate(DIMENSION_NAMES) if (dimension == code).any()]
        for name in present:
            sums = questions[dimension == DIMENSION_NAMES.index(name)].sum(axis=0)
            result.update({f"{name}_{k}": v for k, v in _question_scores(sums, F1_EPSILON.get(name, 0.0001)).items()})
        if any(name in present for name in ATTRIBUTE):
            sums = questions[np.isin(dimension, [DIMENSION_NAMES.index(name) for name in ATTRIBUTE])].sum(axis=0)
            result.update({f"attribute_{k}": v for k, v in
                           _question_scores(sums, 0.0001, START * len(ATTRIBUTE)).items()})
    if "chair" in result and "f1" in result:
        result["amber_score"] = _fraction(round((100 - result["chair"] * 100 + result["f1"] * 100) / 2, 2))
    return result


def _check(predictions, references) -> None:
    """The pairing and types add_batch can check (before evaluate turns NaN into "nan")."""
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


def _check_items(references, types) -> None:
    """Each item's type, and the annotation that type needs."""
    if types is None or isinstance(types, (str, bytes, dict)) or len(types) != len(references):
        raise ValueError(f"types must be a list with one annotations.json type per item ({len(references)}), "
                         f"got {types!r:.80}")
    for i, (ref, kind) in enumerate(zip(references, types)):
        if kind not in (GENERATIVE, *DIMENSIONS):
            raise ValueError(f"types[{i}] is {kind!r}; expected one of {(GENERATIVE, *DIMENSIONS)}")
        if not isinstance(ref, dict):
            raise ValueError(f"references[{i}] is {ref!r}; expected a dict with answer, truth and hallu")
        if kind == GENERATIVE:
            unknown = [w for w in list(ref.get("truth") or []) + list(ref.get("hallu") or []) if w not in RELATION]
            if unknown or not ref.get("truth"):
                raise ValueError(f"references[{i}]: a description needs truth objects, all of them (and of hallu) "
                                 f"objects of AMBER's relation.json; not in it: {unknown}")
        elif ref.get("answer") not in ("yes", "no"):
            raise ValueError(f"references[{i}]: a question's answer must be 'yes' or 'no', got {ref.get('answer')!r}")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Amber(evaluate.Metric):
    # The harness contract (ARCHITECTURE.md, "The metric contract"): every score is the script's percentage / 100.
    # Lower is better for the hallucination shares (the paper's CHAIR, Hal and Cog columns are marked so).
    fractions = ("chair", "cover", "hal", "cog", "amber_score",
                 *(f"{prefix}{score}" for prefix in ("", *(f"{dim}_" for dim in ("existence", "attribute", *ATTRIBUTE,
                                                                                  "relation")))
                   for score in ("accuracy", "precision", "recall", "f1")))
    higher_is_better = {name: name not in ("chair", "hal", "cog") for name in fractions}
    # No output is a plain share of "correct" verdicts: the script's denominators start at 0.001 and it rounds.
    verdict_shares: dict = {}

    @staticmethod
    def example_inputs(rng, n):
        """Valid random inputs of n items for `_compute` (the contract test's): descriptions and questions of every
        type, readable and not."""
        descriptions = ["A man walks his dogs on the grass near a car.", "", "A cat sleeps on a table by the wall.",
                        "Two people ride bicycles down the road under a cloudy sky.", "Nothing to see."]
        answers = ["Yes.", "no", "Maybe.", "**No**, there is not.", "", "Yes/No", "YES"]
        kinds = [GENERATIVE, *DIMENSIONS]
        objects = ["person", "dog", "grass", "car", "cat", "table", "wall", "road", "bicycle", "cloud", "sky"]
        predictions, references, types = [], [], []
        for _ in range(n):
            kind = rng.choice(kinds)
            types.append(kind)
            if kind == GENERATIVE:
                picked = rng.sample(objects, 5)
                predictions.append(rng.choice(descriptions))
                references.append({"answer": "", "truth": picked[:rng.randint(1, 3)], "hallu": picked[3:]})
            else:
                predictions.append(rng.choice(answers))
                references.append({"answer": rng.choice(["yes", "no"]), "truth": [], "hallu": []})
        return {"predictions": predictions, "references": references, "types": types}

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "predictions": datasets.Value("string"),
                "references": {"answer": datasets.Value("string"),
                               "truth": datasets.Sequence(datasets.Value("string")),
                               "hallu": datasets.Sequence(datasets.Value("string"))},
            }),
            codebase_urls=["https://github.com/junyangwang0410/AMBER"],
            reference_urls=["https://arxiv.org/abs/2311.07397"],
        )

    def compute(self, **kwargs):
        """evaluate's compute, refusing a call with no inputs when none were added (evaluate would say that a cache
        file does not exist)."""
        if self.writer is None and all(kwargs.get(name) is None for name in self._feature_names()):
            raise ValueError(f"no inputs: pass {', '.join(self._feature_names())} (or add them with add_batch first)")
        return super().compute(**kwargs)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Checks the raw inputs (before evaluate turns NaN into "nan"), then adds them."""
        _check(predictions, references)
        super().add_batch(predictions=predictions, references=references, **kwargs)

    def _compute(self, predictions, references, types=None, mode="default", nlp="installable", similarity_score=0.8):
        per_item, fixed = self._prepare(predictions, references, types, mode, nlp, similarity_score)
        return self._compute_prepared(**per_item, **fixed)

    @staticmethod
    def item_verdicts(predictions, references, types=None, mode="default", nlp="installable", similarity_score=0.8):
        """Per item, how `_compute` counts it (the metric contract): for a question (verdict, reading), "correct",
        "wrong" or "unreadable" (neither yes nor no under `mode`: counted wrong) and the reading "yes"/"no"/None;
        None for a description, whose mentions are counted, not judged right or wrong as a whole."""
        if mode not in MODES:
            raise ValueError(f"mode is {mode!r}; expected one of {MODES}")
        _check(predictions, references)
        _check_items(references, types)
        verdicts: list = []
        for text, ref, kind in zip(predictions, references, types):
            answer = None if kind == GENERATIVE else read_yes_no(text, mode)
            reading = answer and answer.lower()
            verdicts.append(None if kind == GENERATIVE else ("unreadable" if reading is None else
                                                             "correct" if reading == ref["answer"] else "wrong", reading))
        return verdicts

    def _prepare(self, predictions, references, types=None, mode="default", nlp="installable", similarity_score=0.8):
        """Reads every item once (nouns, near-synonyms, yes/no): the per-item count arrays `score_prepared` sums,
        for a bootstrap to resample, and nothing fixed."""
        if nlp not in NLP:
            raise ValueError(f"nlp is {nlp!r}; expected one of {NLP}")
        verdicts = self.item_verdicts(predictions, references, types, mode)
        nouns = installable_nouns if nlp == "installable" else authors_nouns
        if nlp == "installable":
            def similar(word1, word2):  # no word vectors on PyPI: a vectorless spaCy's similarity is 0
                return False
        else:
            def similar(word1, word2):
                with warnings.catch_warnings():  # a word without a vector: similarity 0 and a warning, as the script
                    warnings.simplefilter("ignore", UserWarning)
                    return _spacy_doc(word1).similarity(_spacy_doc(word2)) > similarity_score
        n = len(predictions)
        dimension = np.full(n, -1)
        generative = np.zeros((n, len(GEN_COUNTS)), dtype=int)
        questions = np.zeros((n, 6), dtype=int)
        unread = np.zeros(n, dtype=bool)
        for i, (text, ref, kind, verdict) in enumerate(zip(predictions, references, types, verdicts)):
            if verdict is None:
                generative[i] = description_counts(nouns(text), list(ref["truth"]), list(ref["hallu"] or []), similar)
                continue
            dimension[i] = DIMENSION_NAMES.index(DIMENSIONS[kind])
            (counted, answer), truth_no = verdict, ref["answer"] == "no"
            unread[i], correct = answer is None, counted == "correct"
            questions[i] = (correct, 1, truth_no and correct, truth_no, truth_no and answer == "no", answer == "no")
        return {"dimension": dimension, "generative": generative, "questions": questions, "unread": unread}, {}

    _compute_prepared = staticmethod(score_prepared)
