"""Decoding speed on a GPU: transformers' default dynamic cache against `cache_implementation="static"`, which
makes `generate` compile the decoding step (CUDA graphs) - what the hf adapter's `cache_implementation=static`
model argument turns on.

Run on a CUDA machine (torch and transformers only; nothing is downloaded; not collected by pytest):
    python tests/perf/bench_decode.py [--new-tokens 128]
Model: a random-weight Qwen2.5-7B-shaped LM in bf16 (end-of-sequence off, so every call decodes exactly
--new-tokens tokens) on a 1,242-token prompt (what 8 frames of a 640x360 clip cost Qwen2.5-VL-7B), greedy (one
row) and 10 samples (`num_return_sequences=10`). For each cache: the first call (the static cache's includes
compiling), the best of the next calls, and a call with another prompt length (does it recompile?).
"""
from __future__ import annotations

import argparse
import sys
import time

import torch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=1, help="steady-state calls per row (best is reported)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench_decode.py: no CUDA device (static-cache compilation is a GPU feature)", file=sys.stderr)
        return 2
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
                         num_key_value_heads=4, vocab_size=152064, max_position_embeddings=32768, rope_theta=1e6)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = Qwen2ForCausalLM._from_config(config, dtype=torch.bfloat16, attn_implementation="sdpa").eval()
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0

    def call(copies: int, cache: str | None, prompt_tokens: int = 1242) -> float:
        ids = torch.randint(100, 150000, (1, prompt_tokens), device="cuda")
        sampling = dict(do_sample=True, temperature=1.0, top_p=0.9) if copies > 1 else dict(do_sample=False)
        extra = {"cache_implementation": cache} if cache else {}
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.inference_mode():
            model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=args.new_tokens,
                           num_return_sequences=copies, top_k=None, **sampling, **extra)
        torch.cuda.synchronize()
        return time.perf_counter() - start

    print(f"{torch.cuda.get_device_name()}, Qwen2.5-7B-shaped LM in bf16, 1,242-token prompt, {args.new_tokens} new tokens")
    print("| decoding | cache | first call | steady | another prompt length |\n|---|---|---|---|---|")
    steady = {}
    for copies, label in ((1, "greedy"), (10, "10 samples")):
        for cache in (None, "static"):
            first = call(copies, cache)
            steady[label, cache] = min(call(copies, cache) for _ in range(args.repeats))
            other = call(copies, cache, prompt_tokens=1100)
            print(f"| {label} | {cache or 'dynamic'} | {first:.2f} s | {steady[label, cache]:.2f} s | {other:.2f} s |")
    for label in ("greedy", "10 samples"):
        print(f"{label}: static / dynamic steady time {steady[label, 'static'] / steady[label, None]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
