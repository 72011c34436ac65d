"""The LLM judge on text-only causal LMs and its logprob mode (P(no) / (P(yes) + P(no)), one forward pass),
through the hf adapter (tiny random Qwen2 LM, offline) and an OpenAI-compatible test server."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import httpx
import pytest
import torch
from hallubench.errors import ConfigError
from hallubench.judges.llm import EXPLICIT_PROMPT, ExplicitLLMJudge, LogprobLLMJudge
from hallubench.models import GenerationError, GenerationSettings, Message, TextPart, get_model
from hallubench.models.hf import word_token_ids
from hallubench.testing.tiny_models import make_tiny_model
from hallubench.ranking.judging import make_judge

PAIRS = [("The dog barks.", "A dog is barking in the yard. The sky is grey."),
         ("A car passes.", "A dog is barking in the yard. The sky is grey."),
         ("Is there a bell ringing now?", "Bells.")]


@pytest.fixture(scope="module")
def text_lm(tmp_path_factory):
    """A tiny random Qwen2 causal LM with the tiny checkpoints' tokenizer; one copy without a chat template."""
    from transformers import AutoProcessor, Qwen2Config, Qwen2ForCausalLM

    root = tmp_path_factory.mktemp("text_lm")
    tokenizer = AutoProcessor.from_pretrained(make_tiny_model("qwen2_vl", root)).tokenizer
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config)
    folders = {}
    for name, template in (("chat", "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}"
                                     "<|im_end|>\n{% endfor %}<|im_start|>assistant\n"), ("bare", None)):
        tokenizer.chat_template = template
        folders[name] = root / name
        model.save_pretrained(folders[name])
        tokenizer.save_pretrained(folders[name])
    return folders


def _conversation(text):
    return [Message("user", [TextPart(text)])]


def test_text_only_causal_lm_runs_with_and_without_a_chat_template(text_lm):
    for name, marker in (("chat", "<|im_start|>assistant"), ("bare", None)):
        model = get_model("hf", model=str(text_lm[name]), dtype="float32", batch_size=2)
        assert model.accepts == frozenset()
        prompt = model.tokenizer.decode(model.prepare([_conversation("Is it a dog?")])["input_ids"][0])
        assert ("Is it a dog?" in prompt) and ((marker in prompt) if marker else prompt.endswith("Is it a dog?"))
        greedy = GenerationSettings(max_new_tokens=4)
        conversations = [_conversation("Is it a dog?"), _conversation("Describe what you see and hear.")]
        assert model.generate(conversations, greedy) == [model.generate([c], greedy)[0] for c in conversations]


def test_next_token_probs_are_one_forward_pass_and_batch_independent(text_lm):
    model = get_model("hf", model=str(text_lm["chat"]), dtype="float32", batch_size=3)
    conversations = [_conversation(EXPLICIT_PROMPT.format(context=e, sentence=s)) for s, e in PAIRS]
    batched = model.next_token_probs(conversations, ["yes", "no"])
    for conversation, probs in zip(conversations, batched):
        inputs = model.prepare([conversation])
        with torch.no_grad():
            last = torch.softmax(model.model(**inputs).logits[0, -1].float(), dim=-1)
        expected = [last[word_token_ids(model.tokenizer, w)].sum().item() for w in ("yes", "no")]
        assert probs == pytest.approx(expected, rel=1e-4, abs=1e-7)
    ids = word_token_ids(model.tokenizer, "yes")
    assert ids and all(model.tokenizer.decode([i]).strip().lower() == "yes" for i in ids)
    with pytest.raises(ValueError, match="no single token .* spells 'zebracorn'"):
        word_token_ids(model.tokenizer, "zebracorn")


class ScorerDouble:
    """Test double: a ChatModel with next_token_probs answering fixed (yes, no) probabilities in turn."""

    name, fingerprint, accepts = "double", "d1", frozenset()

    def __init__(self, answers):
        self.answers, self.calls = list(answers), []

    def generate(self, conversations, settings, seeds=None):
        return [["Yes"] * settings.n for _ in conversations]

    def next_token_probs(self, conversations, words):
        self.calls.append(len(conversations))
        assert words == ["yes", "no"]
        return [self.answers.pop(0) for _ in conversations]


def test_logprob_judge_scores_p_no_over_p_yes_plus_no_and_counts_non_answers():
    model = ScorerDouble([(0.6, 0.2), (0.1, 0.85), (0.2, 0.1)])
    judge = LogprobLLMJudge(model, batch_size=2)
    judgments = judge.judge_batch(PAIRS)
    assert [j.score for j in judgments] == pytest.approx([0.25, 0.85 / 0.95, 0.5])
    assert [j.undecided for j in judgments] == [False, False, True]  # 0.3 of the mass on yes/no: neither
    # One call per passage group of up to batch_size prompts, a passage never split (the model runs its prefix once),
    # each call kept by the judgment cache as it finishes.
    assert model.calls == [2, 1] and judge.counters["undecided"] == 1
    assert judge.judge_id != ExplicitLLMJudge(model).judge_id and judge.judge_id.startswith("llm-explicit-logprob:")
    with pytest.raises(TypeError, match="next-token probabilities"):
        LogprobLLMJudge(type("Plain", (), {"name": "p", "fingerprint": "f", "accepts": frozenset(),
                                            "generate": ScorerDouble.generate})())


def test_make_judge_modes(text_lm, tmp_path):
    from hallubench.judges import JudgmentCache

    cache = JudgmentCache(tmp_path / "c.sqlite")
    args = {"pretrained": str(text_lm["chat"]), "dtype": "float32", "batch_size": 8}
    logprob = make_judge("llm", {**args, "mode": "logprob"}, cache=cache)
    assert isinstance(logprob.judge, LogprobLLMJudge) and logprob.judge.model.batch_size == 8
    assert isinstance(make_judge("llm", args, cache=cache).judge, ExplicitLLMJudge)  # the default stays the paper's
    scores = logprob.score_batch(PAIRS)
    assert all(0.0 <= x <= 1.0 for x in scores)
    with pytest.raises(ConfigError, match="mode='sample'.*generate, logprob"):
        make_judge("llm", {**args, "mode": "sample"}, cache=cache)


def _logprob_server(requests, with_logprobs=True):
    def reply(request):
        body = __import__("json").loads(request.content)
        requests.append(body)
        choice = {"index": 0, "message": {"role": "assistant", "content": "Yes"}, "finish_reason": "length"}
        if with_logprobs:
            top = [{"token": "Yes", "logprob": -0.5}, {"token": " yes", "logprob": -2.0},
                   {"token": "No", "logprob": -1.5}, {"token": "Maybe", "logprob": -3.0}]
            choice["logprobs"] = {"content": [{"token": "Yes", "logprob": -0.5, "top_logprobs": top}]}
        return httpx.Response(200, json={"choices": [choice]})

    return httpx.MockTransport(reply)


def test_openai_next_token_probs_ask_one_token_with_logprobs():
    import math

    requests = []
    model = get_model("openai", model="judge", base_url="http://server/v1", api_key_env=None,
                      transport=_logprob_server(requests))
    probs = model.next_token_probs([_conversation("q1"), _conversation("q2")], ["yes", "no"])
    assert probs == [pytest.approx([math.exp(-0.5) + math.exp(-2.0), math.exp(-1.5)])] * 2
    assert all(b["max_tokens"] == 1 and b["logprobs"] is True and b["top_logprobs"] == 20 and b["n"] == 1
               and b["temperature"] == 0.0 for b in requests)
    judged = LogprobLLMJudge(model).judge_batch(PAIRS[:1])[0]
    assert judged.score == pytest.approx(math.exp(-1.5) / (math.exp(-0.5) + math.exp(-2.0) + math.exp(-1.5)))
    silent = get_model("openai", model="judge", base_url="http://server/v1", api_key_env=None,
                       transport=_logprob_server([], with_logprobs=False))
    with pytest.raises(GenerationError, match="returned no logprobs.*mode=generate"):
        silent.next_token_probs([_conversation("q")], ["yes", "no"])


def _passage_prompts():
    """Judge prompts of 3 passages of different lengths x 5 sentences (sharing each passage's prefix) and 2
    prompts sharing nothing."""
    passages = [" ".join(f"Sentence {k} of passage {p}: a dog barks while a bell rings in the yard." for k in range(4 + p))
                for p in range(3)]
    sentences = ["The dog barks.", "A car passes by slowly.", "Bells.", "A man in a blue coat waves.", "It rains."]
    prompts = [EXPLICIT_PROMPT.format(context=p, sentence=s) for p in passages for s in sentences]
    return prompts + ["Is there a bell ringing now?", "Describe what you see and hear."]


@pytest.mark.parametrize("batch_size", [1, 4, 5, 16])
def test_shared_prefixes_run_once_and_give_whole_prompt_probabilities(text_lm, batch_size):
    from hallubench.models.prefix_scoring import prefix_groups

    model = get_model("hf", model=str(text_lm["chat"]), dtype="float32", batch_size=batch_size)
    conversations = [_conversation(p) for p in _passage_prompts()]
    forwarded = []
    hook = model.model.register_forward_pre_hook(lambda _, args, kwargs: forwarded.append(kwargs["input_ids"].numel()),
                                                 with_kwargs=True)
    try:
        probs = model.next_token_probs(conversations, ["yes", "no"])
    finally:
        hook.remove()
    whole = [len(model.prepare([c])["input_ids"][0]) for c in conversations]
    for conversation, got in zip(conversations, probs):
        with torch.no_grad():
            last = torch.softmax(model.model(**model.prepare([conversation])).logits[0, -1].float(), dim=-1)
        assert got == pytest.approx([last[word_token_ids(model.tokenizer, w)].sum().item() for w in ("yes", "no")],
                                    rel=1e-4, abs=1e-7)
    # Each passage's prefix once plus the suffixes (padded): well under half the tokens of the whole prompts.
    assert sum(forwarded) < 0.5 * sum(whole)
    tokens = model.tokenizer([model._prompt([{"role": "user", "content": [{"type": "text", "text": p}]}])
                              for p in _passage_prompts()])["input_ids"]
    groups = prefix_groups(tokens)
    assert sorted(i for _, members in groups for i in members) == list(range(len(tokens)))
    assert sorted(len(members) for shared, members in groups if shared) == [5, 5, 5]
    for shared, members in groups:
        assert all(tokens[m][:shared] == tokens[members[0]][:shared] and len(tokens[m]) > shared for m in members)


def test_shared_prefix_path_refuses_media_for_a_text_model(text_lm):
    from PIL import Image
    from hallubench.models import ImagePart

    model = get_model("hf", model=str(text_lm["chat"]), dtype="float32")
    with pytest.raises(ValueError, match="takes no image input"):
        model.next_token_probs([[Message("user", [ImagePart(Image.new("RGB", (8, 8))), TextPart("Yes?")])]],
                               ["yes", "no"])


@pytest.mark.parametrize("judge_batch", [4, 60, 256])
def test_a_passage_is_forwarded_once_for_every_target_sentence_of_the_board(text_lm, tmp_path, monkeypatch,
                                                                              judge_batch):
    """A ranking board of T = 10 systems x 6 sentences against two evidence passages: every pair of a passage
    reaches the model in one call and forms one prefix group (60 prompts) whatever the judge's batch size (below,
    at and above 60), and the prefill counts show the passage's tokens forwarded once."""
    from hallubench.judges import CachedJudge, JudgmentCache, judge_responses
    from hallubench.models import prefix_scoring

    groups = []
    real = prefix_scoring.prefix_groups
    monkeypatch.setattr(prefix_scoring, "prefix_groups", lambda prompts: groups.extend(real(prompts)) or groups[-len(real(prompts)):])
    model = get_model("hf", model=str(text_lm["chat"]), dtype="float32", batch_size=judge_batch)
    passage = " ".join(f"Evidence sentence number {i} says a dog barks near a red car." for i in range(6))
    targets = {f"system{t}": [" ".join(f"System {t} claim {k} is about the dog." for k in range(6))] for t in range(10)}
    evidence = {"witness": [[passage, passage.replace("dog", "cat")]]}
    judge = CachedJudge(LogprobLLMJudge(model, batch_size=judge_batch), JudgmentCache(tmp_path / "j.sqlite"),
                        batch_size=judge_batch, progress=False)
    judge_responses(targets, evidence, judge)
    assert sorted(len(members) for shared, members in groups if shared) == [60, 60]
    counts = model.prefill
    assert counts["prompts"] == 120
    per_pair_saved = (counts["prompt_tokens"] - counts["forwarded_tokens"]) / counts["prompts"]
    assert per_pair_saved > 0.9 * len(model.tokenizer(passage)["input_ids"]) * 59 / 60
