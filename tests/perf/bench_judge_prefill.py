"""Prompt tokens the CrossCheck logprob judge forwards per pair on a ranking board, against whole prompts.

    python tests/perf/bench_judge_prefill.py [--systems 10] [--sentences 6] [--evidence 10] [--passages 3]

A synthetic board of one item: T target systems' answers of ~6 sentences each, judged against E evidence models'
passages of ~400 prompt tokens through `judge_responses` -> `CachedJudge` -> `LogprobLLMJudge` -> the hf adapter's
`next_token_probs` (a tiny random text LM with the tiny checkpoints' real tokenizer: token counts are real, timings
are not). It prints the prompt tokens a pair would cost as a whole prompt, what the judge forwarded per pair
(`HFChatModel.prefill`: each passage's shared prefix once for every sentence checked against it), and, in the
same run, what the calls as they were cut before (256 pairs a call by count, 16 prompts a model call) would have
forwarded, from the same prefix grouping (models/prefix_scoring.py). Not collected by pytest.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from hallubench.judges import CachedJudge, JudgmentCache, judge_responses, split_sentences  # noqa: E402
from hallubench.judges.llm import EXPLICIT_PROMPT, LogprobLLMJudge  # noqa: E402
from hallubench.models import get_model  # noqa: E402
from hallubench.models.prefix_scoring import prefix_groups  # noqa: E402
from hallubench.testing.tiny_models import make_tiny_model  # noqa: E402

WORDS = "the red car stops near a dog while a bell rings and a man in a blue coat waves slowly".split()


def text_lm(work: Path) -> Path:
    from transformers import AutoProcessor, Qwen2Config, Qwen2ForCausalLM

    tokenizer = AutoProcessor.from_pretrained(make_tiny_model("qwen2_vl", work)).tokenizer
    folder = work / "text_lm"
    Qwen2ForCausalLM(Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                 num_attention_heads=2, num_key_value_heads=1)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def board(args, rng) -> tuple[dict, dict]:
    def sentence() -> str:
        return " ".join(rng.choice(WORDS, 12)).capitalize() + "."

    targets = {f"system{t}": [" ".join(sentence() for _ in range(args.sentences))] for t in range(args.systems)}
    evidence = {f"evidence{e}": [[" ".join(sentence() for _ in range(22)) for _ in range(args.passages)]]
                for e in range(args.evidence)}
    return targets, evidence


def forwarded_before(model, prompts: list[str]) -> int:
    """Tokens forwarded with the calls cut as before: 256 pairs a judge call by count, 16 prompts a model call,
    each call's prompts grouped by shared prefix on their own."""
    tokens = [model.tokenizer(model._prompt([{"role": "user", "content": [{"type": "text", "text": p}]}]))["input_ids"]
              for p in prompts]
    total = 0
    for call in range(0, len(tokens), 256):
        for chunk in range(call, min(call + 256, len(tokens)), 16):
            part = tokens[chunk:min(chunk + 16, call + 256, len(tokens))]
            total += sum(shared + sum(len(part[i]) - shared for i in members) for shared, members in prefix_groups(part))
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--sentences", type=int, default=6)
    parser.add_argument("--evidence", type=int, default=10)
    parser.add_argument("--passages", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = get_model("hf", model=str(text_lm(Path(tmp))), dtype="float32", batch_size=64)
        targets, evidence = board(args, np.random.default_rng(0))
        judge = CachedJudge(LogprobLLMJudge(model, batch_size=64), JudgmentCache(Path(tmp) / "j.sqlite"),
                            batch_size=256, progress=False)
        start = time.perf_counter()
        judge_responses(targets, evidence, judge)
        seconds = time.perf_counter() - start
        counts = model.prefill
        pairs = counts["prompts"]
        sentences = [s for t in targets.values() for s in split_sentences(t[0])]
        prompts = sorted((EXPLICIT_PROMPT.format(context=p, sentence=s) for e in evidence.values() for p in e[0]
                          for s in sentences), key=len)
        before = forwarded_before(model, prompts)
    width = len(sentences)
    print(f"board: T = {args.systems} systems x {args.sentences} sentences = {width} sentences a passage; "
          f"{args.evidence} evidence models x {args.passages} passages; {pairs} pairs ({pairs / seconds:.0f} pairs/s "
          "on a tiny CPU model: not a speed figure)")
    whole = counts["prompt_tokens"] / pairs
    now = counts["forwarded_tokens"] / pairs
    print(f"prompt tokens per pair: whole prompt {whole:.1f}; forwarded now {now:.1f} ({now / whole:.1%}); "
          f"with the calls cut as before {before / pairs:.1f} ({before / pairs / whole:.1%}); "
          f"now / before {now / (before / pairs):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
