"""GPU code paths: every tiny model family through the hf adapter on CUDA, the logprob judge's shared-prefix
scoring against whole prompts in bf16, and a whole `hallubench run` on the GPU.

Run on a CUDA machine (needs torch, transformers and hallubench; nothing is downloaded):
    python tests/perf/check_gpu_paths.py [--mini-dir FOLDER]     # --cpu: the same checks on the CPU (a smoke test)
(not collected by pytest). Prints one line per check and a summary; exits 1 if any check failed.

1. Each tiny family (testing/tiny_models.py kinds and testing/tiny_zoo.py families) loaded with
   `device=cuda, dtype=auto`: the weights must be on the GPU in bf16 with the attention kernel the adapter chose,
   and greedy generation must answer on every medium the family takes, and on all of them at once; with the
   default cache, which is compiled decoding (static) where transformers can compile the model: the line says so
   and how many answers the dynamic cache gives too (a family where it fails is a failed check: record it as
   `compiled_decoding=False` in models/families.py).
2. `device_map=auto` (accelerate's placement) on one family.
3. The logprob judge on a random 1.5B-shaped Qwen2 LM in bf16: shared-prefix scoring against one whole-prompt
   forward pass per prompt (the same function up to bf16 rounding: max |dP| reported; must stay under 0.02).
4. `hallubench run` (tiny Qwen2.5-Omni on the GPU, cmm and avhallubench_visual, 2 items each, with samples).
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import traceback
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from hallubench.models import AudioPart, GenerationSettings, ImagePart, Message, TextPart, VideoPart, get_model
from hallubench.testing.tiny_checkpoints import TINY_KINDS, make_tiny, requirements
from hallubench.testing.tiny_zoo import ZOO_SPECS

GREEDY = GenerationSettings(max_new_tokens=4)
DEVICE = "cuda"  # --cpu: a smoke test of the script itself
PARTS = {
    "image": lambda: ImagePart(Image.fromarray(np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8))),
    "video": lambda: VideoPart(np.random.default_rng(1).integers(0, 256, (4, 64, 64, 3), dtype=np.uint8), fps=2.0),
    "audio": lambda: AudioPart(np.sin(np.linspace(0, 880 * np.pi, 16000)).astype(np.float32), sr=16000),
}


def _families(work: Path):
    """(name, builder) of every tiny kind that builds here (one whose package is missing is skipped)."""
    for kind in TINY_KINDS:
        if kind in ZOO_SPECS and ZOO_SPECS[kind].media_in_conversation:
            continue  # Voxtral: the adapter refuses it (media only inside mistral_common's conversation)
        missing = [package for package in requirements(kind) if importlib.util.find_spec(package) is None]
        if missing:
            print(f"skip  family {kind}: needs {', '.join(missing)}")
            continue
        yield kind, lambda kind=kind: make_tiny(kind, work / kind)


def check_family(name: str, build, device_map: bool = False) -> str:
    # On the CPU (--cpu) a static cache is asked for explicitly: its default is on CUDA only.
    cache = {"cache_implementation": "static"} if DEVICE == "cpu" and not device_map else {}
    model = get_model("hf", model=str(build()), dtype="auto", device="auto" if device_map else DEVICE, **cache)
    weights = next(model.model.parameters())
    if DEVICE == "cuda" and (weights.device.type != "cuda" or weights.dtype != torch.bfloat16):
        raise AssertionError(f"weights on {weights.device} in {weights.dtype}, expected cuda bf16")
    media = sorted(model.accepts)
    prompts = [[Message("user", [PARTS[kind](), TextPart("Describe it.")])] for kind in media]
    if len(media) > 1:
        together = [Message("user", [*(PARTS[kind]() for kind in media), TextPart("Describe them.")])]
        if model.family is not None and model.family.batch_by_media:  # its processor cannot mix them: refused
            try:
                model.prepare([together])
            except ValueError as err:
                if "in one prompt" not in str(err):
                    raise
            else:
                raise AssertionError("a prompt mixing media kinds was not refused")
        else:
            prompts.append(together)
    prompts.append([Message("user", [TextPart("Say yes or no.")])])
    for prompt in prompts:  # each kind of prompt alone, then all in one batch (the harness and judges mix them)
        if len(model.generate([prompt], GREEDY)[0]) != 1:
            raise AssertionError(f"expected one output for {prompt!r:.200}")
    try:
        outputs = model.generate(prompts, GREEDY)
    except Exception as err:
        raise AssertionError(f"each prompt alone answers, but a batch mixing them fails: {err}") from err
    if len(outputs) != len(prompts) or any(len(o) != 1 for o in outputs):
        raise AssertionError(f"expected one output per prompt, got {outputs!r}")
    peak = f", {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB peak" if DEVICE == "cuda" else ""
    return (f"media {'+'.join(media) or 'text'}, attention {model.attn_implementation}, {weights.dtype}{peak}, "
            f"{_compiled_decoding(model, build, outputs, prompts, device_map)}")


def _compiled_decoding(model, build, outputs, prompts, device_map: bool) -> str:
    """What the family's default cache is here and, when it is compiled decoding, how many of its greedy answers
    the dynamic cache gives too (the record behind `Family.compiled_decoding`)."""
    if model.cache_implementation is None:
        return "cache dynamic"
    dynamic = get_model("hf", model=str(build()), dtype="auto", device="auto" if device_map else DEVICE,
                        cache_implementation="dynamic")
    same = sum(a == b for a, b in zip(outputs, dynamic.generate(prompts, GREEDY)))
    return f"cache {model.cache_implementation}: {same} of {len(prompts)} greedy answers as the dynamic cache's"


def check_prefix_scoring(work: Path) -> str:
    from transformers import AutoProcessor, Qwen2Config, Qwen2ForCausalLM

    from hallubench.judges.llm import EXPLICIT_PROMPT

    tokenizer = AutoProcessor.from_pretrained(make_tiny("qwen2_vl", work / "tok")).tokenizer
    folder = work / "judge_lm"
    shape = dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
                 num_key_value_heads=2) if DEVICE == "cuda" else dict(hidden_size=64, intermediate_size=128,
                                                                      num_hidden_layers=2, num_attention_heads=4,
                                                                      num_key_value_heads=2)
    torch.manual_seed(0)
    with torch.device(DEVICE):
        Qwen2ForCausalLM(Qwen2Config(vocab_size=len(tokenizer), **shape)).to(
            torch.bfloat16 if DEVICE == "cuda" else torch.float32).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    model = get_model("hf", model=str(folder), device=DEVICE, dtype="auto", batch_size=16)
    words = "the red car stops near a dog while a bell rings and a man waves".split()
    rng = np.random.default_rng(0)
    passages = [" ".join(rng.choice(words, 12 * (3 + p % 4))) for p in range(6)]
    prompts = [EXPLICIT_PROMPT.format(context=p, sentence=" ".join(rng.choice(words, 8)) + ".")
               for p in passages for _ in range(5)]
    conversations = [[Message("user", [TextPart(p)])] for p in prompts]
    shared = np.array(model.next_token_probs(conversations, ["yes", "no"]))
    whole = []
    from hallubench.models.hf import word_token_ids

    ids = [word_token_ids(model.tokenizer, w) for w in ("yes", "no")]
    with torch.inference_mode():
        for conversation in conversations:
            inputs = model.prepare([conversation])
            last = torch.softmax(model.model(**inputs, logits_to_keep=1).logits[0, -1].float(), dim=-1)
            whole.append([last[i].sum().item() for i in ids])
    gap = float(np.abs(shared - np.array(whole)).max())
    if not gap < 0.02:
        raise AssertionError(f"shared-prefix probabilities differ from whole prompts by {gap:.4f}")
    return f"{len(prompts)} prompts of 6 passages, max |dP| {gap:.2e} (bf16), P(yes) range " \
           f"{shared[:, 0].min():.3g}-{shared[:, 0].max():.3g}"


def check_run(work: Path, mini: Path | None) -> str:
    import json

    from hallubench.harness.data import ensure_mini
    from hallubench.harness.options import RunOptions
    from hallubench.harness.runner import run

    data = ensure_mini(mini or work / "mini")
    folder = make_tiny("qwen2_5_omni", work / "omni")
    options = RunOptions(model="hf", model_args={"pretrained": str(folder), "device": DEVICE, "dtype": "auto"},
                         tasks=["cmm", "avhallubench_visual"], output_dir=work / "run", data_dir=data, limit=2,
                         batch_size=4, gen_kwargs={"max_new_tokens": 8})
    run(options)
    results = json.loads(next((work / "run").rglob("results.json")).read_text())
    counts = {name: (task["n_selected"], task["n_errors"]) for name, task in results["tasks"].items()}
    if any(errors for _, errors in counts.values()):
        raise AssertionError(f"errors in the run: {counts}")
    return f"(selected, errors) per task {counts}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mini-dir", type=Path, default=None, help="mini benchmarks built beforehand (needs FFmpeg)")
    parser.add_argument("--cpu", action="store_true", help="run every check on the CPU: a smoke test of this script")
    args = parser.parse_args()
    global DEVICE
    DEVICE = "cpu" if args.cpu else "cuda"
    if not args.cpu and not torch.cuda.is_available():
        print("check_gpu_paths.py: no CUDA device", file=sys.stderr)
        return 2
    print(torch.cuda.get_device_name() if DEVICE == "cuda" else "CPU", torch.__version__)
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        checks = [(f"family {name}", lambda name=name, build=build: check_family(name, build))
                  for name, build in _families(work)]
        checks.append(("device_map=auto (qwen2_vl)", lambda: check_family("qwen2_vl", lambda: make_tiny(
            "qwen2_vl", work / "auto"), device_map=True)))
        checks.append(("logprob judge, shared prefixes vs whole prompts", lambda: check_prefix_scoring(work)))
        checks.append(("hallubench run on the GPU", lambda: check_run(work, args.mini_dir)))
        for title, check in checks:
            if DEVICE == "cuda":
                torch.cuda.reset_peak_memory_stats()
            try:
                print(f"ok    {title}: {check()}", flush=True)
            except Exception as err:  # report every failing path, then exit 1
                failed.append(title)
                print(f"FAIL  {title}: {type(err).__name__}: {err}".splitlines()[0][:400], flush=True)
                traceback.print_exc(limit=-3)
    print(f"\n{len(checks) - len(failed)} of {len(checks)} checks passed" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
