"""Embedding-judge ranking of a realistic CrossCheck workload: texts encoded vs unique texts, and wall time.

Run: python tests/perf/bench_embedding_ranking.py [--scale 0.05]   (not collected by pytest)

Workload (AVHalluBench size at --scale 1): T = 10 systems, D = 175 documents; each system answers every
document with ~5 sentences (its greedy answer, the target) and samples 10 passages of ~5 sentences (its
evidence). Sentences are drawn from a per-document pool of 600 generated sentences, so systems and samples
repeat some of each other's sentences as real models describing the same clip do (about 60 % of the
sentence slots are unique). --scale s keeps T and the sample count and uses round(175 * s) documents.

Judged as `hallubench rank --judge embedding` does: make_judge("embedding") (all-MiniLM-L6-v2, the
judgment cache on a fresh file) over judge_responses. Printed: pairs, unique texts (sentences of all
targets and passages), texts sent to the encoder and their ratio to the unique ones (target <= 1.1), the
count the previous per-batch encoding would have sent (each 64-pair batch encoded its own distinct texts,
one call per evidence model), sentence splits made vs texts split, and the wall time.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from hallubench.judges import JudgmentCache, judge_responses  # noqa: E402
from hallubench.judges import sentences as sentences_module  # noqa: E402
from hallubench.judges.sentences import split_sentences  # noqa: E402
from hallubench.ranking.judging import make_judge  # noqa: E402

SYSTEMS, DOCUMENTS, SENTENCES, SAMPLES, POOL = 10, 175, 5, 10, 600
OLD_BATCH = 64  # CachedJudge's batch: the previous embedding judge encoded each batch's texts afresh
WORDS = {
    "who": ["a man", "a woman", "a child", "a dog", "a cat", "a singer", "a crowd", "a car", "a drummer", "a bird"],
    "does": ["walks", "runs", "speaks", "sings", "plays guitar", "waves", "laughs", "stops", "turns", "jumps"],
    "where": ["on a stage", "in a kitchen", "by the sea", "in a park", "on a street", "in a studio",
              "near a window", "under a tree", "in the rain", "at night"],
    "how": ["slowly", "loudly", "quietly", "twice", "with a smile", "while music plays", "as a bell rings",
            "in the background", "at the start", "near the end"],
}


def document_pool(rng: random.Random, doc: int) -> list[str]:
    pool = set()
    while len(pool) < POOL:
        pool.add(f"In clip {doc}, {rng.choice(WORDS['who'])} {rng.choice(WORDS['does'])} "
                 f"{rng.choice(WORDS['where'])} {rng.choice(WORDS['how'])}.")
    return sorted(pool)


def workload(documents: int, seed: int = 0) -> tuple[dict[str, list[str]], dict[str, list[list[str]]]]:
    rng = random.Random(seed)
    pools = [document_pool(rng, d) for d in range(documents)]

    def passage(d: int) -> str:
        return " ".join(rng.choice(pools[d]) for _ in range(SENTENCES))

    systems = [f"system{t}" for t in range(SYSTEMS)]
    targets = {s: [passage(d) for d in range(documents)] for s in systems}
    evidence = {s: [[passage(d) for _ in range(SAMPLES)] for d in range(documents)] for s in systems}
    return targets, evidence


def previous_encodings(targets, evidence) -> int:
    """Texts the per-batch embedding judge encoded: distinct texts of each 64-pair batch, summed."""
    total = 0
    sentences = {t: [split_sentences(r) for r in rs] for t, rs in targets.items()}
    for passages in evidence.values():
        pairs = list(dict.fromkeys((s, p) for docs in sentences.values() for q, sents in enumerate(docs)
                                   for s in sents for p in passages[q]))
        for start in range(0, len(pairs), OLD_BATCH):
            batch = pairs[start:start + OLD_BATCH]
            total += len({s for s, _ in batch} | {x for _, p in batch for x in split_sentences(p)})
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="share of the 175 documents (default 1)")
    args = parser.parse_args()
    documents = max(1, round(DOCUMENTS * args.scale))
    targets, evidence = workload(documents)
    texts = [r for rs in targets.values() for r in rs] + [p for per in evidence.values() for ps in per for p in ps]
    unique = {s for text in set(texts) for s in split_sentences(text)}
    sentences_module._split.cache_clear()  # the timed ranking starts with nothing split

    segments = 0
    real_segmenter = sentences_module._pysbd_segmenter

    class CountingSegmenter:
        def __init__(self, language):
            self.inner = real_segmenter(language)

        def segment(self, text):
            nonlocal segments
            segments += 1
            return self.inner.segment(text)

    sentences_module._pysbd_segmenter = CountingSegmenter
    with tempfile.TemporaryDirectory() as tmp:
        judge = make_judge("embedding", {"sentence_splitter": "pysbd"}, cache=JudgmentCache(Path(tmp) / "j.sqlite"))
        judge.progress = False  # the printed figures are the output
        start = time.perf_counter()
        records = judge_responses(targets, evidence, judge, sentence_splitter="pysbd")
        wall = time.perf_counter() - start
    sentences_module._pysbd_segmenter = real_segmenter
    encoded = judge.judge.counters["encoded"]
    pairs = judge.counters["pairs"]
    previous = previous_encodings(targets, evidence)
    print(f"workload: T={SYSTEMS} systems, D={documents} documents, ~{SENTENCES} sentences, {SAMPLES} samples "
          f"(scale {args.scale})")
    print(f"pairs judged:        {pairs:,} ({judge.counters['calls']:,} unique), {len(records.systems):,} records")
    print(f"unique texts:        {len(unique):,}")
    print(f"texts encoded:       {encoded:,}  ratio to unique {encoded / len(unique):.3f} (target <= 1.1)")
    print(f"previous judge:      {previous:,} texts encoded, {previous / len(unique):.1f}x unique")
    print(f"sentence splits:     {segments:,} for {len(set(texts)):,} distinct responses and passages")
    print(f"wall time:           {wall:.1f} s ({pairs / wall:,.0f} pairs/s)")
    return 0 if encoded <= 1.1 * len(unique) else 1


if __name__ == "__main__":
    sys.exit(main())
