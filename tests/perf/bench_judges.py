"""Judge throughput with batching and the judgment cache vs SelfCheckGPT's per-pair loop, same run.

Run: python tests/perf/bench_judges.py   (not collected by pytest: the name is not test_*)
Needs the baseline package: pip install selfcheckgpt==0.1.7 --no-deps

Model: the tiny random Qwen2-VL checkpoint of hallubench.testing.tiny_models. Our side loads it through the `hf`
adapter (the production path, batched, chat template). The baseline is `SelfCheckLLMPrompt` of the
`selfcheckgpt` package (0.1.7): it loads checkpoints with AutoModelForCausalLM, which has no Qwen2-VL
entry, so the script copies the same language-model weights into a Qwen2ForCausalLM folder and checks
that both give identical logits. SelfCheckLLMPrompt is used unmodified, but its module imports spaCy,
bert_score and nltk for other scorers; those are not installed here, so empty placeholder modules stand
in for them (SelfCheckLLMPrompt never calls them).

Workload: queries x target sentences x evidence models x passages, all judged with the explicit prompt,
greedy, 5 new tokens, one torch thread. After an untimed warm-up of both paths, each configuration runs
REPEATS times (fresh cache file each time); printed are the best times:
  - baseline: SelfCheckLLMPrompt.predict per (query, evidence model), one generate() per pair;
  - batched: ExplicitLLMJudge via judge_responses, no cache;
  - cached cold / warm: the same behind CachedJudge on a fresh SQLite file, then a re-run;
  - second target: another system whose responses share half of their sentences with the first,
    ranked against the same evidence: its cache hit rate and throughput.
"""
from __future__ import annotations

import sys
import tempfile
import time
import types
from pathlib import Path

import torch

from hallubench.judges import CachedJudge, JudgmentCache, judge_responses  # noqa: E402
from hallubench.judges.llm import ExplicitLLMJudge  # noqa: E402
from hallubench.models import get_model  # noqa: E402
from hallubench.testing.tiny_models import make_tiny_model  # noqa: E402

N_QUERIES, N_SENTENCES, N_PASSAGES = 4, 3, 4
REPEATS = 3  # best of 3: the machine is shared, the minimum is the least disturbed run
EVIDENCE_MODELS = ("e1", "e2", "e3")
BATCH = 16
SUBJECTS = ["a red square", "a dog", "a bell", "a blue circle", "a car", "a green triangle"]
FACTS = ["moves left", "is barking", "is ringing", "plays a tone", "stops", "turns around", "appears twice"]


def _sentence(q: int, k: int) -> str:
    return f"In clip {q}, {SUBJECTS[(q + k) % len(SUBJECTS)]} {FACTS[(q * 3 + k) % len(FACTS)]}."


def workload() -> tuple[dict, dict, dict]:
    first = {"A": [" ".join(_sentence(q, k) for k in range(N_SENTENCES)) for q in range(N_QUERIES)]}
    # Second target: first half of its sentences as A's, the rest its own.
    shared = N_SENTENCES // 2 + N_SENTENCES % 2
    second = {"B": [" ".join([_sentence(q, k) for k in range(shared)] + [_sentence(q, k + 20) for k in range(shared, N_SENTENCES)])
                    for q in range(N_QUERIES)]}
    evidence = {
        m: [[" ".join(_sentence(q, k + N_PASSAGES * i + j) for k in range(2)) for j in range(N_PASSAGES)] for q in range(N_QUERIES)]
        for i, m in enumerate(EVIDENCE_MODELS)
    }
    return first, second, evidence


def causal_lm_twin(vl_dir: Path, out: Path) -> Path:
    """The Qwen2-VL checkpoint's language model as a Qwen2ForCausalLM folder; asserts equal logits."""
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM, Qwen2VLForConditionalGeneration

    vl = Qwen2VLForConditionalGeneration.from_pretrained(vl_dir, dtype=torch.float32).eval()
    text = vl.config.text_config.to_dict()
    fields = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
              "num_key_value_heads", "max_position_embeddings", "rms_norm_eps", "hidden_act", "tie_word_embeddings",
              "bos_token_id", "eos_token_id", "pad_token_id")
    config = Qwen2Config(**{k: text[k] for k in fields if k in text},
                         rope_parameters={"rope_type": "default", "rope_theta": text["rope_parameters"]["rope_theta"]})
    lm = Qwen2ForCausalLM(config).eval()
    state = {k.replace("model.language_model.", "model."): v for k, v in vl.state_dict().items() if "visual" not in k}
    lm.load_state_dict(state, strict=True)
    tokenizer = AutoTokenizer.from_pretrained(vl_dir)
    ids = tokenizer("Context: a dog.\n\nSentence: a bell.\n\nAnswer: ", return_tensors="pt").input_ids
    with torch.no_grad():
        assert torch.equal(lm(ids).logits, vl(input_ids=ids).logits), "twin differs from the Qwen2-VL text model"
    lm.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def selfcheck_baseline(model_dir: Path):
    """SelfCheckLLMPrompt loaded on `model_dir`, and a function timing its per-pair loop over a workload."""
    for name in ("spacy", "bert_score", "nltk", "nltk.util"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["nltk.util"].ngrams = None  # `from nltk.util import ngrams` at import; unused by the LLM scorer
    from selfcheckgpt.modeling_selfcheck import SelfCheckLLMPrompt

    from hallubench.judges import split_sentences

    checker = SelfCheckLLMPrompt(str(model_dir), "cpu")

    def run(targets: dict, evidence: dict) -> tuple[int, float]:
        pairs = 0
        start = time.perf_counter()
        for responses in targets.values():
            for q, response in enumerate(responses):
                sentences = split_sentences(response, backend="pysbd")
                for passages in evidence.values():
                    checker.predict(sentences, passages[q])
                    pairs += len(sentences) * len(passages[q])
        return pairs, time.perf_counter() - start

    return run


def timed(judge, targets: dict, evidence: dict) -> tuple[int, float]:
    start = time.perf_counter()
    records = judge_responses(targets, evidence, judge, sentence_splitter="pysbd")
    elapsed = time.perf_counter() - start
    return sum(len(j) for j in records.judgments) * N_PASSAGES, elapsed


def main() -> None:
    torch.set_num_threads(1)  # 2 shared cores: one thread per side keeps the comparison steady
    first, second, evidence = workload()
    best: dict[str, tuple[int, float]] = {}

    def keep(label: str, result: tuple[int, float]) -> None:
        if label not in best or result[1] < best[label][1]:
            best[label] = result

    with tempfile.TemporaryDirectory() as tmp:
        vl_dir = make_tiny_model("qwen2_vl", tmp)
        twin = causal_lm_twin(vl_dir, Path(tmp) / "qwen2_text")
        chat = get_model("hf", model=str(vl_dir), dtype="float32", batch_size=BATCH)
        baseline = selfcheck_baseline(twin)
        # Untimed warm-up of both paths: first calls pay one-off costs (kernel selection for new shapes).
        baseline({"A": first["A"][:1]}, {m: passages[:1] for m, passages in evidence.items()})
        timed(ExplicitLLMJudge(chat, batch_size=BATCH), first, evidence)
        for repeat in range(REPEATS):
            keep("baseline SelfCheckLLMPrompt (per pair)", baseline(first, evidence))
            keep("batched ExplicitLLMJudge, no cache", timed(ExplicitLLMJudge(chat, batch_size=BATCH), first, evidence))
            cache = JudgmentCache(Path(tmp) / f"judgments-{repeat}.sqlite")
            cached = CachedJudge(ExplicitLLMJudge(chat, batch_size=BATCH), cache, batch_size=64)
            keep("batched + cache, cold", timed(cached, first, evidence))
            keep("batched + cache, warm re-run", timed(cached, first, evidence))
            calls_before = cached.counters["calls"]
            keep("second target, same evidence", timed(cached, second, evidence))
            second_calls = cached.counters["calls"] - calls_before

    base_pairs, base_s = best["baseline SelfCheckLLMPrompt (per pair)"]
    print(f"workload: {N_QUERIES} queries x {N_SENTENCES} sentences x {len(EVIDENCE_MODELS)} evidence models x "
          f"{N_PASSAGES} passages = {base_pairs} judgments per target; batch {BATCH}; torch threads "
          f"{torch.get_num_threads()}; best of {REPEATS}")
    for label, (pairs, seconds) in best.items():
        print(f"{label:40s} {pairs:5d} judgments {seconds:8.2f} s {pairs / seconds:9.1f} judgments/s "
              f"x{(pairs / seconds) / (base_pairs / base_s):8.2f} vs baseline")
    second_pairs = best["second target, same evidence"][0]
    print(f"second target: cache hit rate {(second_pairs - second_calls) / second_pairs:.1%} "
          f"({second_pairs - second_calls} of {second_pairs} judgments reused, {second_calls} judged)")


if __name__ == "__main__":
    main()
