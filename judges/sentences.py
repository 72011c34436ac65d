"""Offline sentence splitting: spaCy `en_core_web_sm` (what CrossCheckGPT/SelfCheckGPT used) when it
is installed, else the rule-based pysbd. spaCy is optional and never installed by hallubench."""
from __future__ import annotations

import importlib.util
from functools import lru_cache

SPACY_MODEL = "en_core_web_sm"
BACKENDS = ("auto", "spacy", "pysbd")


@lru_cache(maxsize=None)
def spacy_available() -> bool:
    """True when spaCy and its `en_core_web_sm` pipeline can be imported."""
    return all(importlib.util.find_spec(name) is not None for name in ("spacy", SPACY_MODEL))


def sentence_backend(language: str = "en", backend: str = "auto") -> str:
    """The splitter `split_sentences` uses for these arguments: "spacy" or "pysbd" (record it with results:
    sentence boundaries change the judged units)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}: expected one of {BACKENDS}")
    if backend == "auto":
        return "spacy" if language == "en" and spacy_available() else "pysbd"
    if backend == "spacy" and not (language == "en" and spacy_available()):
        raise ValueError(
            f"backend='spacy' needs spaCy with {SPACY_MODEL} and language='en' (got language={language!r}); "
            "install them or use backend='pysbd'"
        )
    return backend


@lru_cache(maxsize=None)
def _spacy_nlp():
    import spacy

    return spacy.load(SPACY_MODEL)


@lru_cache(maxsize=None)
def _pysbd_segmenter(language: str):
    import pysbd

    try:
        return pysbd.Segmenter(language=language, clean=False)
    except ValueError as err:
        raise ValueError(f"language={language!r} is not supported by pysbd: {err}") from None


def split_sentences(text: str, language: str = "en", backend: str = "auto") -> list[str]:
    """Split `text` into stripped, non-empty sentences (empty or blank text gives []).

    Splits are memoised per (text, language, splitter): a ranking asks for the same response and passage
    many times (once per judged pair, per board and for RefCheck), and each is split once."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return list(_split(text, language, sentence_backend(language, backend)))


@lru_cache(maxsize=1 << 17)
def _split(text: str, language: str, name: str) -> tuple[str, ...]:
    if not text.strip():
        return ()
    if name == "spacy":
        pieces = [sent.text for sent in _spacy_nlp()(text).sents]
    else:
        pieces = _pysbd_segmenter(language).segment(text)
    return tuple(piece.strip() for piece in pieces if piece.strip())
