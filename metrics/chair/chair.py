"""CHAIR: caption hallucination assessment with image relevance (Rohrbach et al. 2018), as the authors' chair.py."""

import re

import datasets
import evaluate
import numpy as np
from nltk.tokenize import NLTKWordTokenizer
from nltk.tokenize.punkt import PunktSentenceTokenizer


_CITATION = """\
@inproceedings{rohrbach2018object,
  title={Object Hallucination in Image Captioning},
  author={Rohrbach, Anna and Hendricks, Lisa Anne and Burns, Kaylee and Darrell, Trevor and Saenko, Kate},
  booktitle={Proceedings of the 2018 Conference on Empirical Methods in Natural Language Processing},
  pages={4035--4045},
  year={2018}
}
"""

_DESCRIPTION = """\
CHAIR measures object hallucination in image captions against COCO's 80 object categories: the objects a
caption mentions (its words mapped onto the categories through the authors' synonym list) are checked against
the image's ground-truth objects (its instance annotations plus the objects its reference captions mention).
CHAIR_s is the share of captions mentioning at least one object the image lacks; CHAIR_i the share of mentioned
objects the image lacks. Reproduces utils/chair.py of github.com/LisaAnne/Hallucination (tokenization,
singularization, the two-word objects, the "toilet seat" and "baby <animal>" rules, the synonym list).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): one generated caption per image ('' for an empty output).
    references (`list` of `list` of `str`): the image's reference captions (COCO captions_val2014).
    objects (`list` of `list` of `str`): the image's COCO instance categories (instances_val2014 category names,
        e.g. "dining table"; repeats allowed).

Returns:
    chair_s (`float`): share of captions with a hallucinated object, in [0, 1] (empty captions count as captions
        without one, as in chair.py).
    chair_i (`float` or `None`): hallucinated object mentions / object mentions, in [0, 1]; None when no caption
        mentions an object (chair.py divides by zero).
    mentions (`int`): object mentions over all captions (chair.py's coco_word_count).
    hallucinated_mentions (`int`): those the image lacks.
    unparsed (`int`): empty captions (nothing to check); unparsed_indices (`list` of `int`) their positions.
    n (`int`): how many captions.

Examples:
    >>> chair = evaluate.load("chair")
    >>> results = chair.compute(
    ...     predictions=["Two puppies play with a frisbee on the grass.", "A man is sitting on a toilet seat."],
    ...     references=[["A dog catching a frisbee."], ["A bathroom with a toilet."]],
    ...     objects=[["dog", "frisbee"], ["toilet"]],
    ... )
    >>> print(results["chair_s"], results["chair_i"], results["mentions"], results["hallucinated_mentions"])
    0.5 0.25 4 1
"""

# data/synonyms.txt of github.com/LisaAnne/Hallucination @ 6e4d33c, verbatim (its odd spaces included: chair.py
# splits each stripped line on ", ", so " motor bike" after a double space never matches, as there).
SYNONYMS_TXT = """\
person, girl, boy, man, woman, kid, child, chef, baker, people, adult, rider, children, baby, worker, passenger, sister, biker, policeman, cop, officer, lady, cowboy, bride, groom, male, female, guy, traveler, mother, father, gentleman, pitcher, player, skier, snowboarder, skater, skateboarder, person, woman, guy, foreigner, child, gentleman, caller, offender, coworker, trespasser, patient, politician, soldier, grandchild, serviceman, walker, drinker, doctor, bicyclist, thief, buyer, teenager, student, camper, driver, solider, hunter, shopper, villager
bicycle, bike, bicycle, bike, unicycle, minibike, trike
car, automobile, van, minivan, sedan, suv, hatchback, cab, jeep, coupe, taxicab, limo, taxi
motorcycle, scooter,  motor bike, motor cycle, motorbike, scooter, moped
airplane, jetliner, plane, air plane, monoplane, aircraft, jet, jetliner, airbus, biplane, seaplane
bus, minibus, trolley
train, locomotive, tramway, caboose
truck, pickup, lorry, hauler, firetruck
boat, ship, liner, sailboat, motorboat, dinghy, powerboat, speedboat, canoe, skiff, yacht, kayak, catamaran, pontoon, houseboat, vessel, rowboat, trawler, ferryboat, watercraft, tugboat, schooner, barge, ferry, sailboard, paddleboat, lifeboat, freighter, steamboat, riverboat, battleship, steamship
traffic light, street light, traffic signal, stop light, streetlight, stoplight
fire hydrant, hydrant
stop sign
parking meter
bench, pew
bird, ostrich, owl, seagull, goose, duck, parakeet, falcon, robin, pelican, waterfowl, heron, hummingbird, mallard, finch, pigeon, sparrow, seabird, osprey, blackbird, fowl, shorebird, woodpecker, egret, chickadee, quail, bluebird, kingfisher, buzzard, willet, gull, swan, bluejay, flamingo, cormorant, parrot, loon, gosling, waterbird, pheasant, rooster, sandpiper, crow, raven, turkey, oriole, cowbird, warbler, magpie, peacock, cockatiel, lorikeet, puffin, vulture, condor, macaw, peafowl, cockatoo, songbird
cat, kitten, feline, tabby
dog, puppy, beagle, pup, chihuahua, schnauzer, dachshund, rottweiler, canine, pitbull, collie, pug, terrier, poodle, labrador, doggie, doberman, mutt, doggy, spaniel, bulldog, sheepdog, weimaraner, corgi, cocker, greyhound, retriever, brindle, hound, whippet, husky
horse, colt, pony, racehorse, stallion, equine, mare, foal, palomino, mustang, clydesdale, bronc, bronco
sheep, lamb, ram, lamb, goat, ewe
cow, cattle, oxen, ox, calf, cattle, holstein, heifer, buffalo, bull, zebu, bison 
elephant
bear, panda
zebra
giraffe
backpack, knapsack
umbrella
handbag, wallet, purse, briefcase
tie, bow, bow tie
suitcase, suit case, luggage
frisbee
skis, ski
snowboard
sports ball, ball
kite
baseball bat
baseball glove
skateboard
surfboard, longboard, skimboard, shortboard, wakeboard
tennis racket, racket
bottle
wine glass
cup
fork
knife, pocketknife, knive
spoon
bowl, container
banana
apple
sandwich, burger, sub, cheeseburger, hamburger
orange
broccoli
carrot
hot dog
pizza
donut, doughnut, bagel
cake,  cheesecake, cupcake, shortcake, coffeecake, pancake
chair, seat, stool
couch, sofa, recliner, futon, loveseat, settee, chesterfield 
potted plant, houseplant
bed
dining table, table, desk
toilet, urinal, commode, toilet, lavatory, potty
tv, monitor, televison, television
laptop, computer, notebook, netbook, lenovo, macbook, laptop computer
mouse
remote
keyboard
cell phone, mobile phone, phone, cellphone, telephone, phon, smartphone, iPhone
microwave
oven, stovetop, stove, stove top oven
toaster
sink
refrigerator, fridge, fridge, freezer
book
clock
vase
scissors
teddy bear, teddybear
hair drier, hairdryer
toothbrush
"""

# chair.py's hard-coded rules for MSCOCO: two-word objects kept as one word, and qualifiers that would fire "person"
COCO_DOUBLE_WORDS = ["motor bike", "motor cycle", "air plane", "traffic light", "street light", "traffic signal",
                     "stop light", "fire hydrant", "stop sign", "parking meter", "suit case", "sports ball",
                     "baseball bat", "baseball glove", "tennis racket", "wine glass", "hot dog", "cell phone",
                     "mobile phone", "teddy bear", "hair drier", "potted plant", "bow tie", "laptop computer",
                     "stove top oven", "hot dog", "teddy bear", "home plate", "train track"]
ANIMAL_WORDS = ["bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe", "animal", "cub"]
VEHICLE_WORDS = ["jet", "train"]
# pattern.en 3.6's singularize (pattern/text/en/inflect.py of github.com/clips/pattern @ d25511f, BSD-3-Clause; its
# rules adapted from Bermi Ferrer's Inflector, MIT), which chair.py imports: pattern does not install on current
# Pythons, and TextBlob's port of it has an extra "-ses" loop ("omnibuses" -> "bus"). Kept rule for rule and in
# order; tests/test_chair.py checks it against pattern's own function on every word of lemminflect's lexicon.
PLURAL_PREPOSITIONS = {"about", "before", "during", "of", "till", "above", "behind", "except", "off", "to", "across",
                       "below", "for", "on", "under", "after", "beneath", "from", "onto", "until", "among", "beside",
                       "in", "out", "unto", "around", "besides", "into", "over", "upon", "at", "between", "near",
                       "since", "with", "athwart", "betwixt", "beyond", "but", "by"}
SINGULAR_RULES = [(re.compile(suffix), inflection) for suffix, inflection in (
    (r"(?i)(.)ae$", "\\1a"), (r"(?i)(.)itis$", "\\1itis"), (r"(?i)(.)eaux$", "\\1eau"), (r"(?i)(quiz)zes$", "\\1"),
    (r"(?i)(matr)ices$", "\\1ix"), (r"(?i)(ap|vert|ind)ices$", "\\1ex"), (r"(?i)^(ox)en", "\\1"),
    (r"(?i)(alias|status)es$", "\\1"), (r"(?i)([octop|vir])i$", "\\1us"), (r"(?i)(cris|ax|test)es$", "\\1is"),
    (r"(?i)(shoe)s$", "\\1"), (r"(?i)(o)es$", "\\1"), (r"(?i)(bus)es$", "\\1"), (r"(?i)([m|l])ice$", "\\1ouse"),
    (r"(?i)(x|ch|ss|sh)es$", "\\1"), (r"(?i)(m)ovies$", "\\1ovie"), (r"(?i)(.)ombies$", "\\1ombie"),
    (r"(?i)(s)eries$", "\\1eries"), (r"(?i)([^aeiouy]|qu)ies$", "\\1y"),
    (r"([aeo]l)ves$", "\\1f"), (r"([^d]ea)ves$", "\\1f"), (r"arves$", "arf"), (r"erves$", "erve"),
    (r"([nlw]i)ves$", "\\1fe"), (r"(?i)([lr])ves$", "\\1f"), (r"([aeo])ves$", "\\1ve"), (r"(?i)(sive)s$", "\\1"),
    (r"(?i)(tive)s$", "\\1"), (r"(?i)(hive)s$", "\\1"), (r"(?i)([^f])ves$", "\\1fe"),
    (r"(?i)(^analy)ses$", "\\1sis"),
    (r"(?i)((a)naly|(b)a|(d)iagno|(p)arenthe|(p)rogno|(s)ynop|(t)he)ses$", "\\1\\2sis"),
    (r"(?i)(.)opses$", "\\1opsis"), (r"(?i)(.)yses$", "\\1ysis"), (r"(?i)(h|d|r|o|n|b|cl|p)oses$", "\\1ose"),
    (r"(?i)(fruct|gluc|galact|lact|ket|malt|rib|sacchar|cellul)ose$", "\\1ose"), (r"(?i)(.)oses$", "\\1osis"),
    (r"(?i)([ti])a$", "\\1um"), (r"(?i)(n)ews$", "\\1ews"), (r"(?i)s$", ""))]
SINGULAR_UNINFLECTED = {
    "bison", "debris", "headquarters", "pincers", "trout", "bream", "diabetes", "herpes", "pliers", "tuna", "breeches",
    "djinn", "high-jinks", "proceedings", "whiting", "britches", "eland", "homework", "rabies", "wildebeest", "carp",
    "elk", "innings", "salmon", "chassis", "flounder", "jackanapes", "scissors", "christmas", "gallows", "mackerel",
    "series", "clippers", "georgia", "measles", "shears", "cod", "graffiti", "mews", "species", "contretemps", "mumps",
    "swine", "corps", "news", "swiss"}
SINGULAR_UNCOUNTABLE = {
    "advice", "equipment", "happiness", "luggage", "news", "software", "bread", "fruit", "information", "mathematics",
    "progress", "understanding", "butter", "furniture", "ketchup", "mayonnaise", "research", "water", "cheese",
    "garbage", "knowledge", "meat", "rice", "electricity", "gravel", "love", "mustard", "sand"}
SINGULAR_IE = {
    "alergie", "cutie", "hoagie", "newbie", "softie", "veggie", "auntie", "doggie", "hottie", "nightie", "sortie",
    "weenie", "beanie", "eyrie", "indie", "oldie", "stoolie", "yuppie", "birdie", "freebie", "junkie", "^pie",
    "sweetie", "zombie", "bogie", "goonie", "laddie", "pixie", "techie", "bombie", "groupie", "laramie", "quickie",
    "^tie", "collie", "hankie", "lingerie", "reverie", "toughie", "cookie", "hippie", "meanie", "rookie", "valkyrie"}
SINGULAR_IRREGULAR = {  # in pattern's order: the first key that ends the word wins
    "atlantes": "atlas", "atlases": "atlas", "axes": "axe", "beeves": "beef", "brethren": "brother",
    "children": "child", "corpora": "corpus", "corpuses": "corpus", "ephemerides": "ephemeris", "feet": "foot",
    "ganglia": "ganglion", "geese": "goose", "genera": "genus", "genii": "genie", "graffiti": "graffito",
    "helves": "helve", "kine": "cow", "leaves": "leaf", "loaves": "loaf", "men": "man", "mongooses": "mongoose",
    "monies": "money", "moves": "move", "mythoi": "mythos", "numena": "numen", "occipita": "occiput",
    "octopodes": "octopus", "opera": "opus", "opuses": "opus", "our": "my", "oxen": "ox", "penes": "penis",
    "penises": "penis", "people": "person", "sexes": "sex", "soliloquies": "soliloquy", "teeth": "tooth",
    "testes": "testis", "trilbys": "trilby", "turves": "turf", "zoa": "zoon"}


def _synonyms() -> tuple:
    """(every object word, word -> its category's first word), as CHAIR.__init__ reads synonyms.txt."""
    objects, inverse = set(), {}
    for line in SYNONYMS_TXT.splitlines():
        synonym = line.strip().split(", ")
        objects.update(synonym)
        for word in synonym:
            inverse[word] = synonym[0]
    return objects, inverse


MSCOCO_OBJECTS, INVERSE_SYNONYMS = _synonyms()
DOUBLE_WORDS = {**{w: w for w in COCO_DOUBLE_WORDS},
                **{f"{q} {w}": w for w in ANIMAL_WORDS for q in ("baby", "adult")},
                **{f"passenger {w}": w for w in VEHICLE_WORDS},
                "bow tie": "tie", "toilet seat": "toilet", "wine glas": "wine glass"}
_SENTENCES, _WORDS = PunktSentenceTokenizer(), NLTKWordTokenizer()


def word_tokenize(text: str) -> list:
    """nltk.word_tokenize's procedure (sentences, then the Treebank-style word tokenizer) with an untrained Punkt
    splitter: the trained English model (punkt_tab) is nltk data downloaded apart, not a package; without its
    abbreviation list, "Mr." or "St." also ends a sentence (the word tokens differ only there)."""
    return [token for sentence in _SENTENCES.tokenize(text) for token in _WORDS.tokenize(sentence)]


def singularize(word: str) -> str:
    """pattern.en 3.6's singularize, step for step (see SINGULAR_RULES)."""
    if "-" in word:  # compounds such as "mothers-in-law"
        parts = word.split("-")
        if len(parts) > 1 and parts[1] in PLURAL_PREPOSITIONS:
            return singularize(parts[0]) + "-" + "-".join(parts[1:])
    if word.endswith("'"):  # dogs' -> dog's
        return singularize(word[:-1]) + "'s"
    lower = word.lower()
    if any(x.endswith(lower) for x in SINGULAR_UNINFLECTED | SINGULAR_UNCOUNTABLE):
        return word
    if any(lower.endswith(x + "s") for x in SINGULAR_IE):
        return lower
    for plural, singular in SINGULAR_IRREGULAR.items():
        if lower.endswith(plural):
            return re.sub("(?i)" + plural + "$", singular, word)
    for suffix, inflection in SINGULAR_RULES:
        match = suffix.search(word)
        if match:
            for k, group in enumerate(match.groups()):
                if group is None:
                    inflection = inflection.replace("\\" + str(k + 1), "")
            return suffix.sub(inflection, word)
    return word


def caption_objects(caption: str) -> tuple:
    """chair.py's caption_to_words: (the object words of the caption, their categories' node words)."""
    words = [singularize(w) for w in word_tokenize(caption.lower())]
    merged, i = [], 0
    while i < len(words):
        pair = " ".join(words[i:i + 2])
        if pair in DOUBLE_WORDS:
            merged.append(DOUBLE_WORDS[pair])
            i += 2
        else:
            merged.append(words[i])
            i += 1
    if "toilet" in merged and "seat" in merged:  # "the seat of the toilet" is no chair
        merged = [w for w in merged if w != "seat"]
    found = [w for w in merged if w in MSCOCO_OBJECTS]
    return found, [INVERSE_SYNONYMS[w] for w in found]


def ground_truth(objects: list, references: list) -> set:
    """The image's objects as chair.py collects them: its instance categories and its reference captions' objects."""
    return {INVERSE_SYNONYMS[name] for name in objects} | {node for caption in references
                                                          for node in caption_objects(caption)[1]}


def _check(predictions, references, objects) -> None:
    for name, values in (("predictions", predictions), ("references", references), ("objects", objects)):
        if values is None or isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
            raise ValueError(f"{name} must be a list with one item per caption, got {type(values).__name__}")
        if len(values) != len(predictions):
            raise ValueError(f"{name} has {len(values)} items for {len(predictions)} predictions; they must pair up")
    if not predictions:
        raise ValueError("predictions is empty; pass at least one caption")
    for i, text in enumerate(predictions):
        if not isinstance(text, str):
            raise ValueError(f"predictions[{i}] is {text!r}, not a string; pass '' for an empty model output")
    for name, values in (("references", references), ("objects", objects)):
        for i, items in enumerate(values):
            if isinstance(items, (str, bytes)) or not all(isinstance(item, str) for item in items):
                raise ValueError(f"{name}[{i}] is {items!r}; give a list of strings per image")
    for i, names in enumerate(objects):
        unknown = [name for name in names if name not in INVERSE_SYNONYMS]
        if unknown:
            raise ValueError(f"objects[{i}] holds {unknown!r}, not COCO category names (instances_val2014 'name')")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Chair(evaluate.Metric):
    # The harness contract (ARCHITECTURE.md, "The metric contract"); the mention counts are no fractions.
    fractions = ("chair_s", "chair_i")
    higher_is_better = {"chair_s": False, "chair_i": False}
    # No per-item verdict (the metric contract): a caption's object mentions are counted, not judged right or
    # wrong as a whole.
    item_verdicts = None

    @staticmethod
    def example_inputs(rng, n):
        """Valid random inputs of n items for `_compute` (the contract test's)."""
        captions = ["Two puppies play with a frisbee on the grass.", "A man is sitting on a toilet seat.",
                    "A baby elephant walks past parked cars.", "", "A kitchen with a microwave and wine glasses.",
                    "An empty street."]
        refs = ["A dog catching a frisbee.", "A bathroom with a toilet.", "Elephants near a road.", "A kitchen."]
        names = ["dog", "frisbee", "toilet", "elephant", "car", "microwave", "wine glass", "person"]
        return {"predictions": [rng.choice(captions) for _ in range(n)],
                "references": [rng.sample(refs, rng.randint(0, 2)) for _ in range(n)],
                "objects": [rng.sample(names, rng.randint(0, 3)) for _ in range(n)]}

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string"),
                                        "references": datasets.Sequence(datasets.Value("string"))}),
            codebase_urls=["https://github.com/LisaAnne/Hallucination"],
            reference_urls=["https://arxiv.org/abs/1809.02156"],
        )

    def compute(self, **kwargs):
        """evaluate's compute, refusing a call with no inputs when none were added (evaluate would say that a cache
        file does not exist)."""
        if self.writer is None and all(kwargs.get(name) is None for name in self._feature_names()):
            raise ValueError(f"no inputs: pass {', '.join(self._feature_names())} (or add them with add_batch first)")
        return super().compute(**kwargs)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Checks the raw inputs (before evaluate turns them into Arrow), then adds them."""
        if predictions is None or isinstance(predictions, (str, bytes)):
            raise ValueError(f"predictions must be a list of captions, got {type(predictions).__name__}")
        for i, text in enumerate(predictions):
            if not isinstance(text, str):
                raise ValueError(f"predictions[{i}] is {text!r}, not a string; pass '' for an empty model output")
        super().add_batch(predictions=predictions, references=references, **kwargs)

    def _compute(self, predictions, references, objects=None):
        per_item, fixed = self._prepare(predictions, references, objects)
        return self._compute_prepared(**per_item, **fixed)

    def _prepare(self, predictions, references, objects=None):
        """Checks the items and finds their objects once (tokenizing and singularizing is the cost): per caption, its
        object mentions, those the image lacks, and whether it is empty, as numpy arrays a bootstrap resamples."""
        if objects is None:
            raise ValueError("objects is required: each image's COCO instance category names (instances_val2014)")
        _check(predictions, references, objects)
        mentions, missing = [], []
        for caption, refs, names in zip(predictions, references, objects):
            truth = ground_truth(names, refs)
            nodes = caption_objects(caption)[1]
            mentions.append(len(nodes))
            missing.append(sum(node not in truth for node in nodes))
        empty = [not caption.strip() for caption in predictions]
        return {"mentions": np.array(mentions), "missing": np.array(missing), "empty": np.array(empty)}, {}

    @staticmethod
    def _compute_prepared(mentions, missing, empty):
        """chair.py's sums: captions with a missing object over captions; missing mentions over mentions."""
        total, hallucinated = int(mentions.sum()), int(missing.sum())
        return {"chair_s": float((missing > 0).mean()),
                "chair_i": hallucinated / total if total else None,
                "mentions": total, "hallucinated_mentions": hallucinated,
                "unparsed": int(empty.sum()), "unparsed_indices": np.flatnonzero(empty).tolist(), "n": len(empty)}
