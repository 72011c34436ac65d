"""The amber metric: parity with the authors' scorer, the yes/no readings, the lexicon, bad input."""
import json
from pathlib import Path

import evaluate
import pytest

from metric_doctests import METRICS, assert_examples_pass, assert_standalone, readme_examples

FIXTURE = Path(__file__).parent / "fixtures" / "amber"
# inference.py's printed section -> the metric's key prefix
SECTIONS = {"Generative Task": "", "Descriminative Task": "", "Exsitence": "existence_", "Attribute": "attribute_",
            "State": "state_", "Number": "number_", "Action": "action_", "Relation": "relation_"}
NAMES = {"CHAIR": "chair", "Cover": "cover", "Hal": "hal", "Cog": "cog", "Accuracy": "accuracy",
         "Precision": "precision", "Recall": "recall", "F1": "f1"}


@pytest.fixture(scope="module")
def amber():
    return evaluate.load(str(METRICS / "amber"))


def inputs(run, annotations):
    by_id = {a["id"]: a for a in annotations}
    refs, types = [], []
    for item in run:
        a = by_id[item["id"]]
        generative = a["type"] == "generative"
        refs.append({"answer": "" if generative else a["truth"], "truth": a["truth"] if generative else [],
                     "hallu": a.get("hallu", [])})
        types.append(a["type"])
    return {"predictions": [item["response"] for item in run], "references": refs, "types": types}


def test_reproduces_the_authors_script_on_adversarial_outputs(amber):
    """tests/fixtures/amber/make_parity.py ran inference.py of github.com/junyangwang0410/AMBER @ 534babf
    (--evaluation_type a) on 8 seeded runs (680 outputs: 320 descriptions with plurals, capitals, association
    words, safe words, empty ones; 360 answers with odd casing, punctuation, both/neither) against the mini
    annotations, with the installable nltk/lemminflect/vectorless-spaCy substitution; every printed number matches."""
    annotations = json.loads((FIXTURE / "annotations.json").read_text())
    runs = json.loads((FIXTURE / "outputs.json").read_text())
    official = json.loads((FIXTURE / "official_scores.json").read_text())
    assert len(runs) == len(official) == 8 and sum(map(len, runs)) >= 600
    for run, printed in zip(runs, official):
        ours = amber.compute(**inputs(run, annotations), mode="official")
        for section, values in printed.items():
            for name, value in values.items():
                key = SECTIONS[section] + NAMES[name]
                assert round(ours[key] * 100, 1) == value, (section, name, ours[key], value)
        assert ours["amber_score"] == pytest.approx((1 - ours["chair"] + ours["f1"]) / 2)


def test_the_authors_nlp_path_makes_the_scripts_calls(amber, monkeypatch, request):
    """nlp="authors" calls nltk and spaCy as inference.py does: with the parity run's substitutes in place of
    nltk's data and en_core_web_lg, it gives the script's numbers too."""
    import importlib.util
    import sys

    import nltk
    import nltk.stem

    spec = importlib.util.spec_from_file_location("make_parity", FIXTURE / "make_parity.py")
    substitutes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(substitutes)
    monkeypatch.setattr(nltk, "word_tokenize", substitutes.word_tokenize)
    monkeypatch.setattr(nltk, "pos_tag", lambda tokens: [(t, "NN") for t in tokens])
    monkeypatch.setattr(nltk.stem, "WordNetLemmatizer", substitutes.Lemmatizer)
    monkeypatch.setitem(sys.modules, "spacy", type(sys)("spacy"))
    sys.modules["spacy"].load = lambda name: lambda text: substitutes.VectorlessDoc()
    sys.modules["spacy"].Language = type("Language", (), {})  # datasets' pickler asks for it
    metric = evaluate.load(str(METRICS / "amber"))
    module = sys.modules[type(metric).__module__]
    for cached in (module._authors_tools, module._spacy_doc):  # the tools are made with the substitutes, then dropped
        cached.cache_clear()
        request.addfinalizer(cached.cache_clear)
    annotations = json.loads((FIXTURE / "annotations.json").read_text())
    run = json.loads((FIXTURE / "outputs.json").read_text())[0]
    printed = json.loads((FIXTURE / "official_scores.json").read_text())[0]["Generative Task"]
    ours = metric.compute(**inputs(run, annotations), mode="official", nlp="authors")
    assert {name: round(ours[NAMES[name]] * 100, 1) for name in printed} == printed


def test_default_mode_reads_the_first_yes_or_no_and_counts_the_rest(amber):
    refs = [{"answer": answer, "truth": [], "hallu": []} for answer in ("yes", "no", "no", "yes", "no")]
    types = ["discriminative-hallucination"] * 5
    outputs = ["**Yes**, there is.", "No.", "Yes/No", "I know", "no-one is there"]
    default = amber.compute(predictions=outputs, references=refs, types=types)
    official = amber.compute(predictions=outputs, references=refs, types=types, mode="official")
    assert default["unparsed_indices"] == [2, 3, 4] and official["unparsed"] == 5
    assert default["accuracy"] == 0.4 and official["accuracy"] == 0.0
    assert "chair" not in default and "amber_score" not in default  # no descriptions among the items


def test_descriptions_follow_the_lexicon(amber):
    """Association words count for their object, safe words are ignored, unannotated objects are hallucinated,
    plurals are lemmatized and capitalised words are left alone (WordNet finds no form for them)."""
    ref = {"answer": "", "truth": ["person", "grass"], "hallu": ["dog", "cat"]}
    out = amber.compute(predictions=["Two men and an orange on the grass with dogs near a car. Cat."],
                        references=[ref], types=["generative"])
    # objects: man (person), grass, dog (hallu), car (unannotated), and orange, a safe word, which the script skips
    # but keeps in CHAIR's denominator; "Cat" stays capitalised and is no object
    assert (out["chair"], out["cover"], out["hal"], out["cog"]) == (0.4, 1.0, 1.0, 0.5)


@pytest.mark.parametrize("kwargs, message", [
    ({"types": ["generative"], "references": [{"answer": "", "truth": ["unicorn"], "hallu": []}]}, "relation.json"),
    ({"types": ["yes-no"], "references": [{"answer": "yes", "truth": [], "hallu": []}]}, "types\\[0\\]"),
    ({"types": ["relation"], "references": [{"answer": "maybe", "truth": [], "hallu": []}]}, "'yes' or 'no'"),
    ({"types": None, "references": [{"answer": "yes", "truth": [], "hallu": []}]}, "one annotations.json type"),
    ({"types": ["relation"], "references": [{"answer": "yes", "truth": [], "hallu": []}], "nlp": "spacy"}, "nlp"),
])
def test_bad_input_is_named(amber, kwargs, message):
    with pytest.raises(ValueError, match=message):
        amber.compute(predictions=["x"], **kwargs)


def test_authors_nlp_without_its_models_says_what_to_install(amber):
    ref = {"answer": "", "truth": ["sky"], "hallu": []}
    try:
        amber.compute(predictions=["The sky."], references=[ref], types=["generative"], nlp="authors")
    except ValueError as err:
        assert "en_core_web_lg" in str(err) and "nlp='installable'" in str(err)
    else:
        pytest.skip("nltk's data and spaCy's en_core_web_lg are installed here")


def test_docstring_and_card_examples_pass_and_the_module_stands_alone():
    import importlib.util
    spec = importlib.util.spec_from_file_location("amber_module", METRICS / "amber" / "amber.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert_examples_pass(module._KWARGS_DESCRIPTION, "amber docstring")
    assert_examples_pass(readme_examples("amber"), "amber README")
    assert_standalone("amber")
