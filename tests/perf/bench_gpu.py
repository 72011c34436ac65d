"""GPU benchmark: hallubench's generation and judging against direct transformers calls on a real-size model.

Run on any CUDA machine (needs only torch, transformers and hallubench; nothing is downloaded):
    python tests/perf/bench_gpu.py                 # Qwen2.5-VL-7B-shaped, bf16, ~7.5 min on one H100
    python tests/perf/bench_gpu.py --tiny          # smoke test on the CPU: tiny shapes, same code paths
(not collected by pytest: the name is not test_*)

Model: a random-weight checkpoint with the shapes of Qwen2.5-VL-7B-Instruct (text 3584 x 28 layers, GQA 28/4
heads, MLP 18944, vocabulary 152,064; vision tower 32 layers of 1280), built from its config on the GPU in
bf16 with the tiny checkpoints' tokenizer and the real Qwen2.5-VL processor (so prompts are real-size:
8 frames of a 640x360 clip, about 1,240 prompt tokens). End-of-sequence is switched off, so every call
generates exactly --max-new-tokens tokens, as a trained model writing a long description would.
The judge is a random-weight Qwen2.5-7B-shaped text LM (Qwen2ForCausalLM) with ~405-token explicit prompts.

Rows (each the best of --repeats after a warm-up; CUDA synchronised around every timing):
  1. 10 samples of one video: the hf adapter (`generate(..., seeds=)`) vs one direct processor +
     `generate(num_return_sequences=10)` call on the same frames; and the 10 samples of each of 8 videos in one
     call (`--batch-size 8`: 80 rows, per-row seeded sampling), amortised per video;
  2. the greedy answer: adapter vs direct, and 8 videos' greedy answers in one call;
  3. a whole `hallubench run` of avhallubench_visual (greedy + 10 samples, `--batch-size 8`) on the mini
     benchmark (frames upscaled by the processor to 640x360's pixel count): seconds per video, the GPU's busy
     share (pynvml, if installed), and the run's wall time over the time its model calls took (target <= 1.05);
  4. the explicit LLM judge: generate-and-parse at batch 16 and 64, the logprob mode at batch 64 with 8 and with
     60 sentences per passage (a ranking board of T = 10 systems x ~6 sentences: each passage's prefix forwarded
     once for all of them; the prompt tokens forwarded per pair against the whole prompt's), and one bare
     forward pass over whole prompts (`logits_to_keep=1`) as the ceiling, in pairs/s;
then the harness/direct ratios and the projected GPU-hours to rank one new 7B model on AVHalluBench.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from hallubench.judges.llm import EXPLICIT_PROMPT, ExplicitLLMJudge, LogprobLLMJudge  # noqa: E402
from hallubench.models import GenerationSettings, Message, TextPart, VideoPart  # noqa: E402
from hallubench.models.hf import HFChatModel  # noqa: E402
from hallubench.testing.tiny_models import make_tiny_model  # noqa: E402

# Qwen2.5-VL-7B-Instruct's config.json shapes (the language model is Qwen2.5-7B's).
TEXT_7B = dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
               num_key_value_heads=4, vocab_size=152064, max_position_embeddings=128000,
               rope_parameters={"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [16, 24, 24]})
VISION_7B = dict(depth=32, hidden_size=1280, intermediate_size=3420, num_heads=16, out_hidden_size=3584,
                 patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=112,
                 fullatt_block_indexes=[7, 15, 23, 31], tokens_per_second=2)
# The release's video processor limits; min_pixels at 640x360 so the mini benchmark's small clips are
# upscaled to the prompt size of a 640x360 clip.
VIDEO_SIZE = {"videos_kwargs": {"size": {"shortest_edge": 640 * 360, "longest_edge": 768 * 28 * 28}}}
VIDEOS, TASKS = 175, 2  # AVHalluBench: 175 videos x (visual, audio) descriptions
GREEDY_BATCH = 8  # videos per call in the projection (--batch-size 8), greedy and sampled
BOARD_WIDTH = 60  # target sentences checked against one passage in a ranking: T = 10 systems x ~6 sentences
JUDGE_PAIRS_PER_MODEL = 230_000  # pairs to rank one new model on AVHalluBench (issue 9's estimate)


class Timer:
    def __init__(self, device: str):
        self.cuda = device.startswith("cuda")

    def __call__(self, fn, repeats: int):
        """Best wall time of `repeats` calls after one warm-up, and the last result."""
        result = fn()
        best = float("inf")
        for _ in range(repeats):
            if self.cuda:
                torch.cuda.synchronize()
            start = time.perf_counter()
            result = fn()
            if self.cuda:
                torch.cuda.synchronize()
            best = min(best, time.perf_counter() - start)
        return best, result


def hardware_limits(args, timer: Timer) -> dict:
    """The device's measured ceilings (METHOD.md): a bf16 8192^3 matrix product in TFLOP/s, and a 1 GiB
    device-to-device copy in TB/s counting bytes read plus written. On the CPU (--tiny): none."""
    if args.device != "cuda":
        return {}
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    matmul, _ = timer(lambda: a @ b, 10)
    source = torch.randint(0, 255, (1 << 30,), dtype=torch.uint8, device="cuda")
    target = torch.empty_like(source)
    copy, _ = timer(lambda: target.copy_(source), 10)
    return {"tflops": 2 * 8192 ** 3 / matmul / 1e12, "tbps": 2 * source.numel() / copy / 1e12}


def _weights(model: torch.nn.Module) -> tuple[int, int]:
    """(parameters, bytes) of a model's weights."""
    params = list(model.parameters())
    return sum(p.numel() for p in params), sum(p.numel() * p.element_size() for p in params)


def vl_model(tiny_dir: Path, args) -> HFChatModel:
    """The hf adapter over the tiny Qwen2.5-VL folder, its model swapped for the benchmark's random one."""
    from transformers import AutoConfig, GenerationConfig, Qwen2_5_VLForConditionalGeneration

    tiny = AutoConfig.from_pretrained(tiny_dir)
    config = tiny if args.tiny else type(tiny).from_dict({
        # layer_types is per layer: the tiny model's one entry cannot describe 28 layers, so it is rebuilt.
        **tiny.to_dict(), "text_config": {**_without(tiny.text_config.to_dict(), "layer_types"), **TEXT_7B},
        "vision_config": {**tiny.vision_config.to_dict(), **VISION_7B}})
    chat = HFChatModel(str(tiny_dir), dtype="float32", batch_size=args.batch_size,
                       processor_kwargs=None if args.tiny else VIDEO_SIZE)
    chat.model = _random(Qwen2_5_VLForConditionalGeneration, config, args)
    chat.model.generation_config = GenerationConfig.from_pretrained(tiny_dir)
    chat.model.generation_config.eos_token_id = None  # always max_new_tokens tokens
    return chat


def text_model(tiny_dir: Path, work: Path, args) -> HFChatModel:
    """The hf adapter over a text-only LM folder (tiny tokenizer), its model swapped for a 7B-shaped one."""
    from transformers import AutoProcessor, Qwen2Config, Qwen2ForCausalLM

    tokenizer = AutoProcessor.from_pretrained(tiny_dir).tokenizer
    small = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                 num_key_value_heads=1, vocab_size=len(tokenizer))
    folder = work / "text_lm"
    Qwen2ForCausalLM(Qwen2Config(**small)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    shape = small if args.tiny else {k: v for k, v in TEXT_7B.items() if k != "rope_parameters"}
    chat = HFChatModel(str(folder), dtype="float32", batch_size=64)
    chat.model = _random(Qwen2ForCausalLM, Qwen2Config(**shape, rope_theta=1000000.0), args)
    chat.model.generation_config.eos_token_id = None
    return chat


def _without(config: dict, *keys: str) -> dict:
    return {key: value for key, value in config.items() if key not in keys}


def _random(model_class, config, args) -> torch.nn.Module:
    with torch.device(args.device):
        model = model_class._from_config(config, dtype=args.dtype, attn_implementation="sdpa")
    return model.eval()


def clip(args, seed: int = 0) -> VideoPart:
    height, width = (64, 96) if args.tiny else (360, 640)
    return VideoPart(np.random.default_rng(seed).integers(0, 256, (8, height, width, 3), dtype=np.uint8), fps=2.0)


def direct_generate(chat: HFChatModel, conversation, settings: GenerationSettings, copies: int):
    """The same prompt through the processor and `generate` directly, as a user of transformers would write it."""
    from transformers.video_utils import VideoMetadata

    video = next(p for m in conversation for p in m.content if isinstance(p, VideoPart))
    question = next(p.text for m in conversation for p in m.content if isinstance(p, TextPart))
    messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": question}]}]
    text = chat.processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    count, height, width = video.frames.shape[:3]
    metadata = VideoMetadata(total_num_frames=count, fps=video.fps, width=width, height=height,
                             duration=count / video.fps, frames_indices=list(range(count)))
    inputs = chat.processor(text=[text], videos=[video.frames], return_tensors="pt",
                            videos_kwargs={"do_sample_frames": False, "video_metadata": [metadata],
                                           **chat.processor_kwargs.get("videos_kwargs", {})}).to(chat.model.device)
    sampling = dict(do_sample=True, temperature=settings.temperature, top_p=settings.top_p) if settings.do_sample \
        else dict(do_sample=False, temperature=None, top_p=None)
    with torch.inference_mode():
        chat.model.generate(**inputs, max_new_tokens=settings.max_new_tokens, num_return_sequences=copies,
                            top_k=None, num_beams=1, **sampling)
    return int(inputs["input_ids"].shape[1])


def generation_rows(chat: HFChatModel, args, timer: Timer) -> dict:
    conversation = [Message("user", [clip(args), TextPart("Describe what you see in this video in detail.")])]
    samples = GenerationSettings(max_new_tokens=args.max_new_tokens, temperature=1.0, top_p=0.9, n=10)
    greedy = GenerationSettings(max_new_tokens=args.max_new_tokens)
    rows = {}
    rows["params"], rows["weight_bytes"] = _weights(chat.model)
    for batch_size in (1, 10):
        chat.batch_size = batch_size
        rows[f"samples_bs{batch_size}"], _ = timer(lambda: chat.generate([conversation], samples, seeds=[1]),
                                                   args.repeats)
    rows["samples_direct"], rows["prompt_tokens"] = timer(
        lambda: direct_generate(chat, conversation, samples, 10), args.repeats)
    rows["greedy"], _ = timer(lambda: chat.generate([conversation], greedy), args.repeats)
    # A run at --batch-size 8 answers 8 videos greedily in one call (decoding a few rows costs about one).
    videos = [[Message("user", [clip(args, seed), TextPart("Describe what you see in this video in detail.")])]
              for seed in range(GREEDY_BATCH)]
    chat.batch_size = GREEDY_BATCH
    rows["greedy_batched"], _ = timer(lambda: chat.generate(videos, greedy), args.repeats)
    rows["greedy_direct"], _ = timer(lambda: direct_generate(chat, conversation, greedy, 1), args.repeats)
    seconds, _ = timer(lambda: chat.generate(videos, samples, seeds=list(range(GREEDY_BATCH))), args.repeats)
    rows["samples_batched"] = seconds / GREEDY_BATCH
    return rows


def whole_run(chat: HFChatModel, work: Path, args) -> tuple[float, str, float]:
    """Seconds per video of `hallubench run` (avhallubench_visual, mini benchmark, greedy + 10 samples at batch
    size 8), the GPU's busy share, and the run's wall time over its model calls' time."""
    from hallubench import models
    from hallubench.harness.data import ensure_mini
    from hallubench.harness.options import RunOptions
    from hallubench.harness.runner import run

    data = ensure_mini(args.mini_dir or work / "mini")
    models.MODELS["bench"] = lambda **_: chat
    chat.batch_size = GREEDY_BATCH
    in_model = [0.0]
    generate = chat.generate

    def timed_generate(*call, **kwargs):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        start = time.perf_counter()
        try:
            return generate(*call, **kwargs)
        finally:
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            in_model[0] += time.perf_counter() - start

    chat.generate = timed_generate
    busy: list[int] = []
    stop = threading.Event()
    watcher = threading.Thread(target=_watch_gpu, args=(busy, stop), daemon=True)
    watcher.start()
    options = RunOptions(model="bench", model_args={"pretrained": "bench"}, tasks=["avhallubench_visual"],
                         output_dir=work / "run", data_dir=data, limit=args.run_videos, batch_size=GREEDY_BATCH,
                         num_samples=10, gen_kwargs={"max_new_tokens": args.max_new_tokens}, modality="visual-only")
    start = time.perf_counter()
    run(options)
    wall = time.perf_counter() - start
    per_video = wall / args.run_videos
    del chat.generate
    stop.set()
    watcher.join()
    share = f"{min(busy)}-{max(busy)} % (median {int(np.median(busy))} %)" if busy else "n/a (no pynvml or no GPU)"
    return per_video, share, wall / in_model[0]


def _watch_gpu(busy: list[int], stop: threading.Event) -> None:
    if not torch.cuda.is_available():
        return
    try:
        while not stop.wait(0.5):
            busy.append(torch.cuda.utilization())
    except Exception:  # torch.cuda.utilization needs pynvml; without it the column says n/a
        busy.clear()


def judge_pairs(chat: HFChatModel, count: int, target_tokens: int, width: int = 8) -> list[tuple[str, str]]:
    """`count` (sentence, passage) pairs, `width` sentences per passage, prompts of about `target_tokens` tokens."""
    words = "the red car stops near a dog while a bell rings and a man in a blue coat waves slowly".split()
    rng = np.random.default_rng(0)

    def sentence():
        return " ".join(rng.choice(words, 12)).capitalize() + "."

    base = len(chat.tokenizer(EXPLICIT_PROMPT.format(context="", sentence=sentence()))["input_ids"])
    per_sentence = len(chat.tokenizer(" " + sentence())["input_ids"])
    length = max(1, (target_tokens - base) // per_sentence)
    passages = [" ".join(sentence() for _ in range(length)) for _ in range(max(1, count // width))]
    return [(sentence(), passages[i // width % len(passages)]) for i in range(count)]


def judge_rows(judge_model: HFChatModel, args, timer: Timer) -> dict:
    pairs = judge_pairs(judge_model, args.judge_pairs, 405)
    prompt = EXPLICIT_PROMPT.format(context=pairs[0][1], sentence=pairs[0][0])
    rows = {"judge_prompt_tokens": len(judge_model.prepare([[Message("user", [TextPart(prompt)])]])["input_ids"][0])}
    for name, judge_class, batch in (("generate_bs16", ExplicitLLMJudge, 16), ("generate_bs64", ExplicitLLMJudge, 64),
                                     ("logprob_bs64", LogprobLLMJudge, 64)):
        judge_model.batch_size = batch
        judge = judge_class(judge_model, batch_size=batch)
        seconds, _ = timer(lambda: judge.judge_batch(pairs), args.repeats)
        rows[name] = len(pairs) / seconds
    board = judge_pairs(judge_model, max(args.judge_pairs, 2 * BOARD_WIDTH), 405, BOARD_WIDTH)
    judge_model.batch_size = 64
    judge = LogprobLLMJudge(judge_model, batch_size=64)
    judge_model.prefill.clear()
    seconds, _ = timer(lambda: judge.judge_batch(board), args.repeats)
    rows["logprob_board"] = len(board) / seconds
    counts = judge_model.prefill
    rows["board_forwarded_per_pair"] = counts["forwarded_tokens"] / counts["prompts"]
    rows["board_prompt_per_pair"] = counts["prompt_tokens"] / counts["prompts"]
    prompts = [EXPLICIT_PROMPT.format(context=e, sentence=s) for s, e in pairs]
    batches = [judge_model.prepare([[Message("user", [TextPart(p)])] for p in prompts[i:i + 64]])
               for i in range(0, len(prompts), 64)]

    def forward():
        with torch.inference_mode():
            for inputs in batches:
                judge_model.model(**inputs, logits_to_keep=1)

    seconds, _ = timer(forward, args.repeats)
    rows["forward_bs64"] = len(pairs) / seconds
    rows["params"], _ = _weights(judge_model.model)
    rows["tokens_per_pair"] = sum(int(b["attention_mask"].sum()) for b in batches) / len(pairs)
    return rows


def report(gen: dict, run_row: tuple[float, str, float], judge: dict, limits: dict, args) -> None:
    per_video = gen["greedy_batched"] / GREEDY_BATCH + gen["samples_batched"]
    generation_h = VIDEOS * TASKS * per_video / 3600
    judging_h = JUDGE_PAIRS_PER_MODEL / judge["logprob_board"] / 3600
    print(f"\n{args.machine}, {args.dtype}, {gen['prompt_tokens']} prompt tokens (8 frames), "
          f"{args.max_new_tokens} new tokens, {'tiny shapes' if args.tiny else 'Qwen2.5-VL-7B shapes'}\n")
    print("| step | hallubench | same model, one direct `generate` call | ratio |")
    print("|---|---|---|---|")
    for batch_size in (1, 10):
        value = gen[f"samples_bs{batch_size}"]
        print(f"| 10 samples of one video, `--batch-size {batch_size}` | {value:.2f} s | {gen['samples_direct']:.2f} s "
              f"(`num_return_sequences=10`) | {value / gen['samples_direct']:.2f}x |")
    print(f"| greedy answer | {gen['greedy']:.2f} s | {gen['greedy_direct']:.2f} s | "
          f"{gen['greedy'] / gen['greedy_direct']:.2f}x |")
    print(f"| greedy answers of {GREEDY_BATCH} videos in one call, `--batch-size {GREEDY_BATCH}` | "
          f"{gen['greedy_batched']:.2f} s ({gen['greedy_batched'] / GREEDY_BATCH:.2f} s a video) | — | — |")
    print(f"| 10 samples of each of {GREEDY_BATCH} videos in one call, `--batch-size {GREEDY_BATCH}` | "
          f"{gen['samples_batched']:.2f} s a video (target <= 1.5) | {gen['samples_direct']:.2f} s (one video) | "
          f"{gen['samples_batched'] / gen['samples_direct']:.2f}x |")
    print(f"| whole `hallubench run`, avhallubench_visual, greedy + 10 samples, bs {GREEDY_BATCH} | {run_row[0]:.1f} s "
          f"per video, GPU {run_row[1]} | its model calls | {run_row[2]:.2f}x (target <= 1.05) |")
    print(f"| explicit LLM judge ({judge['judge_prompt_tokens']}-token prompts), generate bs 16 / 64 | "
          f"{judge['generate_bs16']:.1f} / {judge['generate_bs64']:.1f} pairs/s | {judge['forward_bs64']:.1f} pairs/s "
          f"as one forward pass over whole prompts (bs 64) | {judge['generate_bs64'] / judge['forward_bs64']:.2f}x |")
    print(f"| LLM judge, logprob mode, bs 64, 8 sentences a passage | {judge['logprob_bs64']:.1f} pairs/s | "
          f"{judge['forward_bs64']:.1f} pairs/s | {judge['logprob_bs64'] / judge['forward_bs64']:.2f}x |")
    print(f"| LLM judge, logprob mode, bs 64, {BOARD_WIDTH} sentences a passage (T = 10) | {judge['logprob_board']:.1f} "
          f"pairs/s (target >= 600) | {judge['forward_bs64']:.1f} pairs/s | "
          f"{judge['logprob_board'] / judge['forward_bs64']:.2f}x |")
    print(f"\nprompt tokens forwarded per pair at T = 10: {judge['board_forwarded_per_pair']:.1f} of "
          f"{judge['board_prompt_per_pair']:.1f} ({judge['board_forwarded_per_pair'] / judge['board_prompt_per_pair']:.1%})")
    if limits:
        decode_floor = args.max_new_tokens * gen["weight_bytes"] / (limits["tbps"] * 1e12)
        forward_tflops = judge["forward_bs64"] * judge["tokens_per_pair"] * 2 * judge["params"] / 1e12
        print(f"\nhardware, measured in this run: bf16 matrix product {limits['tflops']:.0f} TFLOP/s, "
              f"device copy {limits['tbps']:.2f} TB/s")
        print(f"decoding floor ({args.max_new_tokens} steps, each reading {gen['weight_bytes'] / 1e9:.1f} GB of weights "
              f"at the copy rate): {decode_floor:.2f} s; direct 10 samples {gen['samples_direct'] / decode_floor:.2f}x "
              f"it, hallubench {gen['samples_bs1'] / decode_floor:.2f}x; greedy {gen['greedy'] / decode_floor:.2f}x")
        print(f"judge forward pass over whole prompts ({judge['tokens_per_pair']:.0f} tokens a pair, "
              f"2 x {judge['params'] / 1e9:.2f} G FLOP a token): {forward_tflops:.0f} TFLOP/s, "
              f"{forward_tflops / limits['tflops']:.0%} of the matrix product's rate; the logprob mode's shared "
              f"prefixes do {judge['logprob_bs64'] / judge['forward_bs64']:.2f}x its pairs/s")
    print(f"\nlogprob / generate-and-parse (bs 64): {judge['logprob_bs64'] / judge['generate_bs64']:.2f}x (target >= 2)")
    print(f"projected, one new model on AVHalluBench with the hf adapter: generation {VIDEOS} videos x {TASKS} tasks "
          f"x (greedy at bs {GREEDY_BATCH} + 10 samples = {per_video:.1f} s) = {generation_h:.2f} h; judging {JUDGE_PAIRS_PER_MODEL:,} pairs "
          f"at {judge['logprob_board']:.0f} pairs/s (logprob, T = 10 boards) = {judging_h:.2f} h; total "
          f"{generation_h + judging_h:.2f} GPU-hours (target <= 0.25)")
    budget = max(0.0, 0.25 - judging_h) * 3600 / (VIDEOS * TASKS)
    print(f"for <= 0.25 h with vLLM: generation must take <= {budget:.1f} s per video (greedy + 10 samples) at this "
          f"judging rate, i.e. {per_video / budget if budget else float('inf'):.1f}x the hf adapter's speed here")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="tiny shapes on the CPU: a smoke test of every path")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats per row (default 3, 1 with --tiny)")
    parser.add_argument("--max-new-tokens", type=int, default=None, help="default 256 (8 with --tiny)")
    parser.add_argument("--judge-pairs", type=int, default=None, help="pairs per judge row (default 512, 32 with --tiny)")
    parser.add_argument("--run-videos", type=int, default=None, help="videos in the whole-run row (default 5, 2 tiny)")
    parser.add_argument("--mini-dir", type=Path, default=None,
                        help="mini benchmarks built beforehand (building them needs FFmpeg, which GPU images often lack)")
    args = parser.parse_args()
    if not args.tiny and not torch.cuda.is_available():
        print("bench_gpu.py: no CUDA device; run it on a GPU machine, or pass --tiny for a CPU smoke test",
              file=sys.stderr)
        return 2
    args.device = "cpu" if args.tiny else "cuda"
    args.dtype = torch.float32 if args.tiny else torch.bfloat16
    args.repeats = args.repeats or (1 if args.tiny else 3)
    args.max_new_tokens = args.max_new_tokens or (8 if args.tiny else 256)
    args.judge_pairs = args.judge_pairs or (32 if args.tiny else 512)
    args.run_videos = args.run_videos or (2 if args.tiny else 5)
    args.batch_size = 1
    args.machine = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    timer = Timer(args.device)
    limits = hardware_limits(args, timer)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tiny_dir = make_tiny_model("qwen2_5_vl", work)
        chat = vl_model(tiny_dir, args)
        gen = generation_rows(chat, args, timer)
        run_row = whole_run(chat, work, args)
        del chat
        if args.device == "cuda":
            torch.cuda.empty_cache()
        judge = judge_rows(text_model(tiny_dir, work, args), args, timer)
    report(gen, run_row, judge, limits, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
