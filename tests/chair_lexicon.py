"""The English word list CHAIR's singularizer is checked on: every lemma and inflected form in lemminflect's
lexicon (an installed dependency; about 100,000 lower-cased words), plus the words the issue tracker found."""
import gzip
from importlib.resources import files

# TextBlob's port of pattern turns each of these into "bus" (a COCO object); pattern 3.6 does not.
BUSES = ("abuses", "disabuses", "incubuses", "mini-buses", "omnibuses", "rebuses", "rhombuses", "syllabuses")


def lexicon_words() -> list[str]:
    words = set(BUSES)
    for name in ("infl_lu.csv.gz", "lemma_lu.csv.gz"):
        text = gzip.decompress(files("lemminflect").joinpath("resources", name).read_bytes()).decode()
        for line in text.splitlines():
            lemma, _, forms = line.split(",", 2)
            for word in (lemma, *forms.replace(",", "/").split("/")):
                word = word.strip().lower()
                if word and " " not in word:
                    words.add(word)
    return sorted(words)


def plain_rule(word: str) -> str:
    """The word less a final "s" (the answer the fixture leaves out)."""
    return word[:-1] if word.endswith("s") else word
