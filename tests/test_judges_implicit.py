"""CrossCheck-implicit on multimodal inputs (judges/implicit.py): the evidence model is shown the item's
media with the analysis prompt, the judge reads the analysis (and the media only when asked), YES/NO become
1/0, anything else is counted undecided; the evidence model is loaded only when a pair is missing."""
import json

import httpx
import numpy as np
import pytest
from PIL import Image

from hallubench.errors import ConfigError
from hallubench.judges import CachedJudge, JudgmentCache
from hallubench.judges.implicit import (
    OURS_ANALYSIS_PROMPT,
    OURS_VERDICT_PROMPT,
    ImplicitMultimodalJudge,
    Subject,
)
from hallubench.models import AudioPart, ImagePart, Message, TextPart, VideoPart

IMAGE = ImagePart(Image.new("RGB", (8, 8), (255, 0, 0)))
VIDEO = VideoPart(np.zeros((2, 8, 8, 3), dtype=np.uint8), fps=1.0)
AUDIO = AudioPart(np.zeros(160, dtype=np.float32), sr=16000)
SUBJECTS = {"img-1": Subject((IMAGE,), "Describe the image."), "clip-1": Subject((VIDEO, AUDIO), "Describe the video.")}


class ChatModelStandIn:
    """Answers by a function of (text, media parts) of the last user turn; records every call."""

    def __init__(self, name, answer, accepts=frozenset({"image", "video", "audio"})):
        self.name, self.fingerprint, self.accepts, self.answer = name, f"fp-{name}", accepts, answer
        self.calls = []

    def generate(self, conversations, settings, seeds=None):
        self.calls.append((conversations, settings))
        outs = []
        for conversation in conversations:
            parts = conversation[-1].content
            outs.append([self.answer(parts[-1].text, parts[:-1])] * settings.n)
        return outs


class EvidenceStandIn:
    """An evidence model known by name and fingerprint, counting its loads."""

    def __init__(self, model):
        self.model, self.name, self.fingerprint, self.loads = model, model.name, model.fingerprint, 0

    def load(self):
        self.loads += 1
        return self.model


def _analyst(text, media):
    # Says "wrong" about a sentence mentioning a dog, but only when it was shown some media.
    sentence = text.split(":\n")[1].split("\n")[0]
    return "The dog is not there, so it is wrong." if media and "dog" in sentence else "Nothing to fix."


def _verdict(text, media):
    analysis = text.split(":\n")[2]  # "about X:\n<sentence>\n...in this sentence...:\n<analysis>\n..."
    return '{"Answer": "YES"}' if "wrong" in analysis else ('{"Answer": "NO"}' if "Nothing" in analysis else "hmm")


def test_subject_names_its_media():
    assert [SUBJECTS[k].media for k in ("img-1", "clip-1")] == ["image", "video and its audio"]
    assert Subject((AUDIO,), "q").media == "audio" and Subject((VIDEO,), "q").media == "video"
    assert Subject((), "q").media == "input"


def test_table9_prompts_by_default_with_the_media_named_as_the_paper_does():
    analyst, judge_model = ChatModelStandIn("analyst", _analyst), ChatModelStandIn("judge", _verdict)
    judge = ImplicitMultimodalJudge(EvidenceStandIn(analyst), judge_model, SUBJECTS.__getitem__)
    assert judge.prompt_version == "crosscheck-implicit-mm-table9-v1"
    assert judge.score_batch([("A dog sits.", "img-1"), ("A dog barks.", "clip-1")]) == [1.0, 1.0]
    asked = [conv for conversations, _ in analyst.calls for conv in conversations]
    assert asked[0] == [Message("user", [IMAGE, TextPart(
        "You are given the following sentence about the image that might be inaccurate:\nA dog sits.\n"
        " List possible inaccurate information in this sentence.")])]
    assert asked[1][0].content[2].text.startswith("You are given the following sentence about the video that")
    verdicts = [conv for conversations, _ in judge_model.calls for conv in conversations]
    assert verdicts[0][0].content[0].text == (
        "You are given the following sentence about the image:\nA dog sits.\n"
        "The following is an analysis of possible inaccuracies in this sentence:\n"
        "The dog is not there, so it is wrong.\n"
        "Based on the analysis, determine if the sentence contains any inaccurate information. Answer Yes or No."
        "\n\nAnswer:")
    assert Subject((AUDIO,), "q").subject == "the audio"


def test_evidence_model_sees_the_media_and_the_judge_reads_its_analysis():
    analyst, judge_model = ChatModelStandIn("analyst", _analyst), ChatModelStandIn("judge", _verdict)
    judge = ImplicitMultimodalJudge(EvidenceStandIn(analyst), judge_model, SUBJECTS.__getitem__, batch_size=2,
                                    prompts="ours-v1")
    pairs = [("A dog sits.", "img-1"), ("A red square.", "img-1"), ("A dog barks.", "clip-1")]
    assert judge.score_batch(pairs) == [1.0, 0.0, 1.0]
    asked = [conv for conversations, _ in analyst.calls for conv in conversations]
    assert [len(c) for c, _ in analyst.calls] == [2, 1]  # batch_size conversations per call
    assert asked[0] == [Message("user", [IMAGE, TextPart(OURS_ANALYSIS_PROMPT.format(
        media="image", question="Describe the image.", sentence="A dog sits."))])]
    assert asked[2][0].content[:2] == [VIDEO, AUDIO]
    assert asked[2][0].content[2].text == (
        'You are given the video and its audio above and the following sentence about it, from a response to the '
        'request "Describe the video.":\nA dog barks.\nList any factual errors in the sentence.')
    verdicts = [conv for conversations, _ in judge_model.calls for conv in conversations]
    assert all(len(c[0].content) == 1 for c in verdicts), "the judge reads text only unless judge_sees_media"
    assert verdicts[1][0].content[0].text == OURS_VERDICT_PROMPT.format(
        article="an", media="image", sentence="A red square.", analysis="Nothing to fix.")
    assert verdicts[2][0].content[0].text.startswith("You are given the following sentence about a video and its audio")
    assert {(s.max_new_tokens, s.temperature) for _, s in analyst.calls} == {(128, 0.0)}
    assert {(s.max_new_tokens, s.temperature) for _, s in judge_model.calls} == {(8, 0.0)}


def test_unreadable_verdicts_are_counted_not_mapped():
    analyst = ChatModelStandIn("analyst", lambda text, media: "I am unsure what to say.")
    judge = ImplicitMultimodalJudge(EvidenceStandIn(analyst), ChatModelStandIn("judge", _verdict), SUBJECTS.__getitem__)
    judgments = judge.judge_batch([("A dog sits.", "img-1"), ("A cat.", "clip-1")])
    assert [(j.score, j.undecided, j.raw) for j in judgments] == [(0.5, True, "hmm")] * 2
    assert judge.counters["undecided"] == 2 and judge.undecided_outputs == {"hmm": 2}


def test_judge_sees_media_when_asked_and_a_text_judge_is_refused():
    judge_model = ChatModelStandIn("judge", lambda text, media: '{"Answer": "YES"}' if media else '{"Answer": "NO"}')
    judge = ImplicitMultimodalJudge(EvidenceStandIn(ChatModelStandIn("analyst", _analyst)), judge_model,
                                    SUBJECTS.__getitem__, judge_sees_media=True)
    assert judge.score_batch([("A cat.", "clip-1")]) == [1.0]
    assert judge_model.calls[0][0][0][0].content[:2] == [VIDEO, AUDIO]
    text_judge = ChatModelStandIn("text-judge", _verdict, accepts=frozenset())
    plain = ImplicitMultimodalJudge(EvidenceStandIn(ChatModelStandIn("analyst", _analyst)), text_judge,
                                    SUBJECTS.__getitem__)
    seeing = ImplicitMultimodalJudge(EvidenceStandIn(ChatModelStandIn("analyst", _analyst)), text_judge,
                                     SUBJECTS.__getitem__, judge_sees_media=True)
    assert plain.judge_id != seeing.judge_id, "showing the judge the media is another judgment: another cache key"
    with pytest.raises(ConfigError, match="takes no image input"):
        seeing.score_batch([("A dog.", "img-1")])


def test_each_evidence_model_is_its_own_judge_id_and_loads_only_for_missing_pairs(tmp_path):
    judge_model = ChatModelStandIn("judge", _verdict)
    evidence = {n: EvidenceStandIn(ChatModelStandIn(n, _analyst)) for n in ("a", "b")}
    judges = {n: ImplicitMultimodalJudge(e, judge_model, SUBJECTS.__getitem__) for n, e in evidence.items()}
    assert judges["a"].judge_id == "llm-implicit-mm:a:fp-a>judge:fp-judge" != judges["b"].judge_id
    assert judges["a"].prompt_version == "crosscheck-implicit-mm-table9-v1"
    ours = ImplicitMultimodalJudge(evidence["a"], judge_model, SUBJECTS.__getitem__, prompts="ours-v1")
    assert ours.prompt_version == "crosscheck-implicit-mm-ours-v1", "each prompt set keys its own cache rows"
    cache = JudgmentCache(tmp_path / "j.sqlite")
    pairs = [("A dog sits.", "img-1"), ("A red square.", "img-1")]
    assert CachedJudge(judges["a"], cache).score_batch(pairs) == [1.0, 0.0]
    assert evidence["a"].loads == 1 and evidence["b"].loads == 0, "an evidence model loads when first needed"
    again = CachedJudge(ImplicitMultimodalJudge(evidence["a"], judge_model, SUBJECTS.__getitem__), cache)
    assert again.score_batch(pairs) == [1.0, 0.0]
    assert again.counters["calls"] == 0 and evidence["a"].loads == 1 and len(judge_model.calls) == 1


def test_through_the_openai_adapter():
    from hallubench.models import get_model

    bodies = []

    def server_double(request):  # test double for an OpenAI-compatible server: analyst and judge in one
        body = json.loads(request.content)
        bodies.append(body)
        content = body["messages"][-1]["content"]
        text = content[-1]["text"]
        reply = _verdict(text, content[:-1]) if "an analysis of" in text else _analyst(text, content[:-1])
        return httpx.Response(200, json={"choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                                                      "finish_reason": "stop"}]})

    def make(name):
        return get_model("openai", model=name, base_url="http://mm.test/v1", api_key_env=None,
                         transport=httpx.MockTransport(server_double))

    judge = ImplicitMultimodalJudge(EvidenceStandIn(make("analyst")), make("judge"), SUBJECTS.__getitem__)
    assert judge.score_batch([("A dog sits.", "img-1"), ("A tone.", "clip-1")]) == [1.0, 0.0]
    by_model = {}
    for body in bodies:
        by_model.setdefault(body["model"], []).append([part["type"] for part in body["messages"][-1]["content"]])
    assert sorted(by_model["analyst"]) == [["image_url", "image_url", "input_audio", "text"], ["image_url", "text"]]
    assert by_model["judge"] == [["text"], ["text"]]
    assert {(b["max_tokens"], b["temperature"]) for b in bodies} == {(128, 0.0), (8, 0.0)}
