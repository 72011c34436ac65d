"""LLM judges: exact CrossCheckGPT prompts, Yes/No parsing with the undecided counter, batching, and a
run on a tiny random `hf` checkpoint."""
import json

import httpx
import pytest

from hallubench.judges import CachedJudge, JudgmentCache
from hallubench.judges.llm import (
    EXPLICIT_PROMPT,
    ExplicitLLMJudge,
    parse_explicit,
    parse_implicit,
)
from hallubench.models import GenerationSettings, Message, TextPart


class ScriptedChatModelDouble:
    """Test double ChatModel: answers by a function of the prompt text; records every call."""

    name = "double:scripted"
    fingerprint = "0123456789abcdef"
    accepts = frozenset()  # text only

    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    def generate(self, conversations, settings, seeds=None):
        self.calls.append((conversations, settings))
        return [[self.answer(conv[0].content[0].text)] * settings.n for conv in conversations]


def test_explicit_prompt_is_verbatim():
    # selfcheckgpt 0.1.7 SelfCheckLLMPrompt.prompt_template (reused by CrossCheckGPT), trailing space included.
    assert EXPLICIT_PROMPT.format(context="CTX", sentence="SENT") == (
        "Context: CTX\n\nSentence: SENT\n\nIs the sentence supported by the context above? "
        "Answer Yes or No.\n\nAnswer: "
    )


def test_explicit_judge_sends_the_prompt_and_maps_answers():
    replies = {"A.": " Yes, it is.", "B.": "No", "C.": "I cannot tell", "D.": "NO."}
    model = ScriptedChatModelDouble(lambda prompt: replies[prompt.split("Sentence: ")[1].split("\n")[0]])
    judge = ExplicitLLMJudge(model, batch_size=3)
    scores = judge.score_batch([("A.", "line one\nline two"), ("B.", "e"), ("C.", "e"), ("D.", "e")])
    assert scores == [0.0, 1.0, 0.5, 1.0]
    conversations, settings = model.calls[0]
    assert [len(c) for c, _ in model.calls] == [3, 1]
    assert conversations[0] == [Message("user", [TextPart(
        "Context: line one line two\n\nSentence: A.\n\n"
        "Is the sentence supported by the context above? Answer Yes or No.\n\nAnswer: ")])]
    assert settings == GenerationSettings(max_new_tokens=5, temperature=0.0)
    assert judge.counters["undecided"] == 1 and judge.undecided_outputs == {"I cannot tell": 1}
    assert judge.judge_id == "llm-explicit:double:scripted:0123456789abcdef"


@pytest.mark.parametrize(
    "text, score, undecided",
    [("Yes", 0.0, False), ("  yes.", 0.0, False), ("No", 1.0, False), ("no, it is not", 1.0, False),
     ("**No**", 1.0, False), ("Maybe", 0.5, True), ("", 0.5, True), ("The answer is yes", 0.5, True),
     ("Not sure", 0.5, True), ("None of it", 0.5, True), ("Yesterday", 0.5, True)],
)
def test_parse_explicit(text, score, undecided):
    judgment = parse_explicit(text)
    assert (judgment.score, judgment.undecided, judgment.raw) == (score, undecided, text)


@pytest.mark.parametrize(
    "text, score, undecided",
    [('{"Answer": "YES"}', 1.0, False), ('{"Answer": "NO"}', 0.0, False), ('{"Answer": "NO"} I know', 0.0, False),
     ('{"Answer": "YES"}, not correct', 1.0, False), ("yes or no", 0.5, True), ("unsure", 0.5, True)],
)
def test_parse_implicit_yes_means_errors(text, score, undecided):
    assert (parse_implicit(text).score, parse_implicit(text).undecided) == (score, undecided)


def test_not_a_chat_model_is_refused():
    with pytest.raises(TypeError, match="ChatModel"):
        ExplicitLLMJudge(object())


def test_explicit_judge_through_the_openai_adapter():
    from hallubench.models import get_model

    bodies = []

    def server_double(request):  # test double for an OpenAI-compatible server
        body = json.loads(request.content)
        bodies.append(body)
        prompt = body["messages"][-1]["content"][-1]["text"]
        reply = "Yes" if "Sentence: Paris is in France." in prompt else "Not sure"
        return httpx.Response(200, json={"choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                                                      "finish_reason": "stop"}]})

    model = get_model("openai", model="judge-llm", base_url="http://judge.test/v1", api_key_env=None,
                      transport=httpx.MockTransport(server_double))
    judge = ExplicitLLMJudge(model)
    assert judge.score_batch([("Paris is in France.", "Paris is the capital of France."), ("It is blue.", "x")]) == [0.0, 0.5]
    assert {(b["max_tokens"], b["temperature"]) for b in bodies} == {(5, 0.0)}
    assert judge.undecided_outputs == {"Not sure": 1}


def test_explicit_judge_on_tiny_hf_model(tmp_path, monkeypatch):
    from hallubench.testing import tiny_models
    from hallubench.models import get_model

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = tiny_models.make_tiny_model("qwen2_vl", tmp_path)
    model = get_model("hf", model=str(folder), dtype="float32", batch_size=4)
    judge = CachedJudge(ExplicitLLMJudge(model, batch_size=4), JudgmentCache(tmp_path / "j.sqlite"))
    pairs = [("A red square moves left.", "A dog is barking."), ("Yes, a dog is barking.", "The sound is a bell."),
             ("A red square moves left.", "A dog is barking.")]
    judgments = judge.judge_batch(pairs)
    # A random model answers gibberish: every judgment is a valid score and gibberish is counted, never mapped.
    for j in judgments:
        assert j.score in (0.0, 0.5, 1.0) and j.undecided == (j.score == 0.5) and isinstance(j.raw, str)
    assert judgments[0] == judgments[2] and judge.counters["calls"] == 2
    assert judge.judge.counters["undecided"] == sum(j.undecided for j in judgments[:2])
