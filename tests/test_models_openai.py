"""The OpenAI-compatible adapter against test doubles: httpx.MockTransport servers and one loopback server."""
import base64
import io
import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import numpy as np
import pytest
import soundfile
from PIL import Image

from hallubench.models import (
    AudioPart,
    GenerationError,
    GenerationSettings,
    ImagePart,
    Message,
    TextPart,
    VideoPart,
    get_model,
)
from hallubench.models.protocol import ModelUnusable

SECRET = "sk-test-SECRET-0123456789"


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("HB_TEST_KEY", SECRET)


def _completion(texts):
    return {"choices": [{"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
                        for i, t in enumerate(texts)]}


class FakeServer:
    """Test double for a chat-completions server: replies from a script of (status, body) or exceptions."""

    def __init__(self, script=None, reply=None):
        self.script = list(script or [])
        self.reply = reply or (lambda body: (200, _completion(["ok"] * body["n"])))
        self.requests = []
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        with self.lock:
            self.requests.append((request, body))
            step = self.script.pop(0) if self.script else None
        if isinstance(step, Exception):
            raise step
        status, payload, headers = step if step and len(step) == 3 else (*(step or self.reply(body)), {})
        return httpx.Response(status, json=payload, headers=headers)


def _model(server, sleeps=None, **kwargs):
    return get_model("openai", model="tiny-omni", base_url="http://test.invalid/v1", api_key_env="HB_TEST_KEY",
                     transport=httpx.MockTransport(server), sleep=(sleeps.append if sleeps is not None else None)
                     or (lambda s: None), **kwargs)


def _ask(text="Is there a dog?"):
    return [Message("user", [TextPart(text)])]


def test_model_default_decoding_sends_no_temperature_or_top_p():
    server = FakeServer()
    assert _model(server).generate([_ask()], GenerationSettings(max_new_tokens=5, temperature=None)) \
        == [["ok"]]
    body = server.requests[0][1]
    assert "temperature" not in body and "top_p" not in body and body["max_tokens"] == 5


def test_request_body_carries_every_part_and_setting():
    server = FakeServer()
    frames = np.random.default_rng(0).integers(0, 256, (3, 8, 10, 3), dtype=np.uint8)
    samples = (0.5 * np.sin(np.linspace(0, 100, 8000))).astype(np.float32)
    conv = [Message("system", [TextPart("Be brief.")]),
            Message("user", [ImagePart(Image.new("RGB", (12, 7), "red")), VideoPart(frames, 2.0),
                             AudioPart(samples, 8000), TextPart("What happens?")])]
    out = _model(server).generate([conv], GenerationSettings(max_new_tokens=5, temperature=0.7, top_p=0.9, n=2,
                                                             seed=3))
    assert out == [["ok", "ok"]]
    request, body = server.requests[0]
    assert request.url == "http://test.invalid/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert {k: body[k] for k in ("model", "max_tokens", "temperature", "top_p", "n", "seed")} == \
        {"model": "tiny-omni", "max_tokens": 5, "temperature": 0.7, "top_p": 0.9, "n": 2, "seed": 3}
    assert body["messages"][0] == {"role": "system", "content": [{"type": "text", "text": "Be brief."}]}
    content = body["messages"][1]["content"]
    assert [c["type"] for c in content] == ["image_url"] * 4 + ["input_audio", "text"]

    def decode_png(url):
        assert url.startswith("data:image/png;base64,")
        return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))))

    assert decode_png(content[0]["image_url"]["url"]).shape == (7, 12, 3)
    for frame, part in zip(frames, content[1:4]):  # PNG is lossless: the exact frames arrive, in order
        assert np.array_equal(decode_png(part["image_url"]["url"]), frame)
    assert content[4]["input_audio"]["format"] == "wav"
    wav, sr = soundfile.read(io.BytesIO(base64.b64decode(content[4]["input_audio"]["data"])), dtype="float32")
    assert sr == 8000 and np.allclose(wav, samples, atol=1e-4)


def test_vllm_video_mode_sends_jpeg_frames_with_fps():
    server = FakeServer()
    frames = np.full((5, 16, 16, 3), 128, dtype=np.uint8)
    conv = [Message("user", [VideoPart(frames, 4.0), TextPart("Describe.")])]
    _model(server, video_mode="vllm").generate([conv], GenerationSettings())
    body = server.requests[0][1]
    video = body["messages"][0]["content"][0]
    assert video["type"] == "video_url"
    prefix, data = video["video_url"]["url"].split(",", 1)
    assert prefix == "data:video/jpeg;base64"
    decoded = [Image.open(io.BytesIO(base64.b64decode(part))) for part in data.split(",")]
    assert len(decoded) == 5 and all(img.format == "JPEG" and img.size == (16, 16) for img in decoded)
    assert body["media_io_kwargs"] == {"video": {"fps": 4.0, "num_frames": 5}}


def _slow_reply(texts, peak):
    """A 50 ms reply with the choices `texts(question, body)`; records the most requests in flight in peak[0]."""
    active, lock = [0], threading.Lock()

    def reply(body):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return 200, _completion(texts(body["messages"][0]["content"][0]["text"], body))

    return reply


def test_outputs_follow_input_order_under_concurrency():
    peak = [0]
    reply = _slow_reply(lambda question, body: [f"answer to {question}"] * body["n"], peak)
    model = _model(FakeServer(reply=reply), concurrency=3)
    questions = [f"q{i}" for i in range(9)]
    out = model.generate([_ask(q) for q in questions], GenerationSettings())
    assert out == [[f"answer to {q}"] for q in questions]
    assert 1 < peak[0] <= 3


def test_missing_samples_are_requested_again_when_server_ignores_n():
    server = FakeServer(reply=lambda body: (200, _completion([f"s{body['n']}"])))
    out = _model(server).generate([_ask()], GenerationSettings(temperature=1.0, n=3, seed=10))
    assert out == [["s3", "s2", "s1"]]
    assert [(body["n"], body["seed"]) for _, body in server.requests] == [(3, 10), (2, 11), (1, 12)]


def test_per_conversation_seeds_are_sent_concurrently_and_each_tops_up_from_its_own_seed():
    peak = [0]
    # A server that ignores n: one choice per request.
    server = FakeServer(reply=_slow_reply(lambda question, body: [f"{question}@{body['seed']}"], peak))
    model = _model(server, concurrency=4)
    questions, seeds = ["q0", "q1", "q2", "q3"], [100, 200, 300, 400]
    out = model.generate([_ask(q) for q in questions], GenerationSettings(temperature=0.7, n=2, seed=5), seeds=seeds)
    assert out == [[f"{q}@{s}", f"{q}@{s + 1}"] for q, s in zip(questions, seeds)]
    sent = sorted((body["messages"][0]["content"][0]["text"], body["seed"], body["n"]) for _, body in server.requests)
    assert sent == sorted([(q, s, 2) for q, s in zip(questions, seeds)]
                         + [(q, s + 1, 1) for q, s in zip(questions, seeds)])
    assert 1 < peak[0] <= 4
    with pytest.raises(ValueError, match="2 seeds for 4 conversations"):
        model.generate([_ask(q) for q in questions], GenerationSettings(), seeds=seeds[:2])


def test_retries_429_5xx_and_timeouts_with_exponential_backoff():
    sleeps = []
    server = FakeServer(script=[(429, {"error": "slow down"}), (503, {"error": "busy"}),
                                httpx.ReadTimeout("read timed out"), httpx.ConnectError("refused")])
    out = _model(server, sleeps, max_retries=5, backoff=0.5).generate([_ask()], GenerationSettings())
    assert out == [["ok"]]
    assert len(server.requests) == 5
    assert sleeps == [0.5, 1.0, 2.0, 4.0]


def test_retry_after_header_and_backoff_cap():
    sleeps = []
    server = FakeServer(script=[(429, {}, {"Retry-After": "7"}), (500, {}), (500, {})])
    _model(server, sleeps, backoff=1.0, max_backoff=5.0).generate([_ask()], GenerationSettings())
    assert sleeps == [5.0, 2.0, 4.0]  # Retry-After 7 capped at 5, then 2**k backoff


def test_exhausted_retries_raise_generation_error_naming_the_conversation():
    def reply(body):
        broken = body["messages"][0]["content"][0]["text"] == "broken"
        return (502, {"error": "bad gateway"}) if broken else (200, _completion(["fine"]))

    sleeps = []
    server = FakeServer(reply=reply)
    model = _model(server, sleeps, max_retries=2, backoff=0.1)
    with pytest.raises(GenerationError, match=r"conversation 1 failed after 3 attempts.*HTTP 502") as info:
        model.generate([_ask("fine"), _ask("broken")], GenerationSettings())
    assert info.value.index == 1 and info.value.partial == [["fine"], None]
    assert len(server.requests) == 4 and sleeps == [0.1, 0.2]


def test_client_errors_are_not_retried_and_partial_results_kept():
    def reply(body):
        if body["messages"][0]["content"][0]["text"] == "bad":
            return 400, {"error": {"message": "image too large"}}
        return 200, _completion(["fine"])

    sleeps = []
    server = FakeServer(reply=reply)
    with pytest.raises(GenerationError, match="conversation 1: HTTP 400.*image too large") as info:
        _model(server, sleeps).generate([_ask("good"), _ask("bad"), _ask("good")], GenerationSettings())
    assert info.value.index == 1
    assert info.value.partial == [["fine"], None, ["fine"]]
    assert len(server.requests) == 3 and sleeps == []


def test_choice_without_text_is_an_error_not_an_empty_answer():
    server = FakeServer(reply=lambda body: (200, {"choices": [{"index": 0, "message": {"content": None},
                                                               "finish_reason": "content_filter"}]}))
    with pytest.raises(GenerationError, match="content_filter"):
        _model(server).generate([_ask()], GenerationSettings())


def test_api_key_never_leaks(caplog, capsys):
    echo = FakeServer(reply=lambda body: (401, {"error": "bad key"}))
    model = _model(echo)
    # A server that echoes the credential back in its error body.
    echo.reply = lambda body: (401, {"error": f"invalid key {SECRET}"})
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ModelUnusable) as info:  # 401: no request can succeed, the run stops
        model.generate([_ask()], GenerationSettings())
    logging.getLogger("test").error("failed", exc_info=info.value)
    assert "***" in str(info.value)
    captured = capsys.readouterr()
    for text in (str(info.value), repr(info.value), repr(model), caplog.text, captured.out, captured.err,
                 json.dumps(vars(model), default=repr)):
        assert SECRET not in text


def test_missing_key_variable_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("HB_TEST_KEY")
    with pytest.raises(ValueError, match="HB_TEST_KEY"):
        _model(FakeServer())
    model = get_model("openai", model="m", base_url="http://test.invalid/v1", api_key_env=None,
                      transport=httpx.MockTransport(FakeServer()))
    assert model.generate([_ask()], GenerationSettings()) == [["ok"]]


def test_fingerprint_is_stable_and_identifies_the_endpoint():
    server = FakeServer()
    assert _model(server).fingerprint == _model(server).fingerprint
    other = get_model("openai", model="other", base_url="http://test.invalid/v1", api_key_env="HB_TEST_KEY")
    assert other.fingerprint != _model(server).fingerprint


def test_real_timeout_on_loopback_server_is_retried():
    """A real socket: the first reply comes after the client timeout, the retry succeeds."""
    calls = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            calls.append(self.headers["Authorization"])
            if len(calls) == 1:
                time.sleep(1.5)
            payload = json.dumps(_completion(["late but fine"])).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        sleeps = []
        model = get_model("openai", model="m", base_url=f"http://127.0.0.1:{server.server_port}/v1",
                          api_key_env="HB_TEST_KEY", timeout=0.5, backoff=0.01, sleep=sleeps.append)
        assert model.generate([_ask()], GenerationSettings()) == [["late but fine"]]
        assert len(calls) == 2 and sleeps == [0.01] and calls[0] == f"Bearer {SECRET}"
    finally:
        server.shutdown()
        server.server_close()
