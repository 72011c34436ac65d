"""OpenAI-compatible chat completions over httpx (a vLLM server or a hosted API).

Requests run concurrently on a thread pool; each retries 429 / 5xx / timeouts / connection errors
with exponential backoff (honouring Retry-After, in seconds or as an HTTP date, up to `max_backoff`), never
other 4xx. A conversation that still fails raises `GenerationError` naming it; so does a 200 whose body is not
a JSON object (`[]`, HTML), named as such. 401 and 403 raise `ModelUnusable`: no request can succeed, so the
run stops instead of recording the same error for every sample.

Bounds: `timeout` is the deadline of one attempt as a whole (connect, headers and the whole body).
httpx's (and so the openai client's) timeouts bound each read, so a server trickling a byte now and then
held a request forever; each attempt therefore runs under `asyncio.wait_for`, which cancels it at the
deadline whatever phase it is in (at the price of one connection per attempt). `retry_budget` bounds the
seconds all requests of this model together spend on failures: every failed attempt's duration (a timeout
counts in full) and every wait before a retry. Once it is spent no attempt starts and `RetryBudgetSpent`
(a ModelUnusable) stops the run, finished samples kept; attempts already under way end within `timeout`, so a
dead server costs a run at most `retry_budget + timeout` seconds. The retry loop stays hand-written: tenacity
retries one call at a time, and the budget shared by every request of a run (timeouts included) and the
HTTP-date Retry-After would be as long around it.

The API key is read from an environment variable, sent only in the Authorization header, and masked
(with any user:password in URLs) in every error message before it is cut to length.
"""
from __future__ import annotations

import asyncio
import base64
import dataclasses
import email.utils
import hashlib
import io
import json
import math
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timezone
from typing import Any, Callable

import httpx
import soundfile
from PIL import Image

from .protocol import (
    AudioPart,
    Conversation,
    GenerationError,
    GenerationSettings,
    ImagePart,
    ModelUnusable,
    TextPart,
    VideoPart,
    check_seeds,
    collect,
)
from hallubench.redact import redact
from hallubench.errors import RetryBudgetSpent

VIDEO_MODES = ("frames", "vllm")
TOP_LOGPROBS = 20  # the most the OpenAI API returns; vLLM allows more (its --max-logprobs, default 20)
RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
AUTH_STATUS = frozenset({401, 403})
ERROR_TEXT_CHARS = 500  # of a server's error body kept in the message (after masking)


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """A Retry-After header's wait in seconds (RFC 9110: delay-seconds or an HTTP date), None if unreadable."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - now)
def url_secrets(url: httpx.URL) -> list[str]:
    """The credentials in a URL's userinfo as a server may echo them: `user:password` (raw and decoded), the password
    alone and the Basic-auth token (base64 of `user:password`). A password under 4 characters is masked only in those
    forms (alone it would mask every such piece of text)."""
    if not url.userinfo:
        return []
    pair = f"{url.username}:{url.password}"
    alone = [url.password] if len(url.password) >= 4 else []
    return [url.userinfo.decode(), pair, *alone, base64.b64encode(pair.encode()).decode()]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _image_bytes(image: Image.Image, fmt: str) -> bytes:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format=fmt)
    return buffer.getvalue()


def image_data_url(image: Image.Image) -> str:
    return f"data:image/png;base64,{_b64(_image_bytes(image, 'PNG'))}"


def wav_base64(part: AudioPart) -> str:
    buffer = io.BytesIO()
    soundfile.write(buffer, part.samples, part.sr, format="WAV", subtype="PCM_16")
    return _b64(buffer.getvalue())


def _video_content(part: VideoPart, mode: str) -> list[dict[str, Any]]:
    frames = [Image.fromarray(frame) for frame in part.frames]
    if mode == "vllm":
        # vLLM decodes "video/jpeg" as comma-separated JPEG frames and keeps them all (no re-sampling).
        joined = ",".join(_b64(_image_bytes(frame, "JPEG")) for frame in frames)
        return [{"type": "video_url", "video_url": {"url": f"data:video/jpeg;base64,{joined}"}}]
    return [{"type": "image_url", "image_url": {"url": image_data_url(frame)}} for frame in frames]


def to_openai_messages(conversation: Conversation, video_mode: str = "frames") -> list[dict[str, Any]]:
    """The chat-completions `messages` list for one conversation."""
    messages = []
    for message in conversation:
        content: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                content.append({"type": "text", "text": part.text})
            elif isinstance(part, ImagePart):
                content.append({"type": "image_url", "image_url": {"url": image_data_url(part.image)}})
            elif isinstance(part, VideoPart):
                content.extend(_video_content(part, video_mode))
            elif isinstance(part, AudioPart):
                content.append({"type": "input_audio", "input_audio": {"data": wav_base64(part), "format": "wav"}})
        messages.append({"role": message.role, "content": content})
    return messages


def _vllm_video_kwargs(conversation: Conversation) -> dict[str, Any]:
    """vLLM's per-request `media_io_kwargs` carrying the clips' fps and frame count (one value per request)."""
    videos = [part for message in conversation for part in message.content if isinstance(part, VideoPart)]
    if not videos:
        return {}
    rates = {part.fps for part in videos}
    if len(rates) > 1:
        raise ValueError(f"video_mode='vllm' sends one fps per request; this conversation mixes fps {sorted(rates)}")
    return {"media_io_kwargs": {"video": {"fps": rates.pop(), "num_frames": max(len(p.frames) for p in videos)}}}


class OpenAIChatModel:
    """Chat completions client; `generate` sends one request per conversation, `concurrency` at a time."""

    def __init__(self, model: str, base_url: str = "https://api.openai.com/v1",
                 api_key_env: str | None = "OPENAI_API_KEY", timeout: float = 120.0, max_retries: int = 5,
                 backoff: float = 1.0, max_backoff: float = 60.0, concurrency: int = 8,
                 video_mode: str = "frames", extra_body: dict[str, Any] | None = None, retry_budget: float = 600.0,
                 transport: httpx.AsyncBaseTransport | None = None, sleep: Callable[[float], None] = time.sleep):
        if video_mode not in VIDEO_MODES:
            raise ValueError(f"video_mode must be one of {', '.join(VIDEO_MODES)}; got {video_mode!r}")
        if max_retries < 0 or concurrency < 1 or timeout <= 0 or retry_budget < 0:
            raise ValueError("need max_retries >= 0, concurrency >= 1, timeout > 0 and retry_budget >= 0")
        api_key = os.environ.get(api_key_env, "") if api_key_env else ""
        if api_key_env and not api_key:
            raise ValueError(f"environment variable {api_key_env} is empty or unset; export the API key there "
                             "(or pass api_key_env=None for a server without authentication)")
        url = httpx.URL(base_url)
        # user:password in the URL travel as Basic auth, kept out of the URL httpx logs and errors quote.
        self._auth = httpx.BasicAuth(url.username, url.password) if url.userinfo else None
        self.model = model
        self.base_url = str(url.copy_with(userinfo=b"")).rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.concurrency = concurrency
        self.video_mode = video_mode
        self.extra_body = dict(extra_body or {})
        self._sleep = sleep
        self._transport = transport
        self._ssl = httpx.create_ssl_context()  # built once: loading the CA bundle per attempt costs ~10 ms of CPU
        self.retry_budget = retry_budget
        self._failing_s, self._spent = 0.0, False  # seconds spent on failures and waits; whether the budget ran out
        self._budget_lock = threading.Lock()
        # The key lives only in these headers (httpx masks them in repr), never on this object.
        self._headers = httpx.Headers({"Authorization": f"Bearer {api_key}"} if api_key else {})
        # Every form a server may echo back: the key, the URL's user:password, the password alone, its Basic token;
        # they live in this closure only.
        secrets = [api_key, *url_secrets(url)]
        self._mask = lambda text: redact(text, secrets)
        self.name = f"openai:{model}@{self.base_url}"
        self.accepts = frozenset({"image", "video", "audio"})  # the server decides; its errors are recorded
        identity = {"model": model, "base_url": self.base_url, "video_mode": video_mode, "extra_body": self.extra_body}
        self.fingerprint = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.model!r}, base_url={self.base_url!r})"

    def close(self) -> None:
        """Nothing to release: every attempt opens and closes its own connection."""

    def generate(self, conversations: list[Conversation], settings: GenerationSettings,
                 seeds: list[int] | None = None) -> list[list[str]]:
        """`settings.n` texts per conversation, each request with its own seed when `seeds` is given;
        raises GenerationError (lowest failing index, `partial` set) once all finish."""
        check_seeds(conversations, seeds)
        own = [settings] * len(conversations) if seeds is None else \
            [dataclasses.replace(settings, seed=seed) for seed in seeds]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            futures = [pool.submit(self._complete, i, conv, own[i]) for i, conv in enumerate(conversations)]
        return collect([self._outcome(future) for future in futures])

    def _outcome(self, future: Future) -> list[str] | GenerationError:
        error = future.exception()
        if error is None:
            return future.result()
        if isinstance(error, ModelUnusable):
            raise error
        return error if isinstance(error, GenerationError) else GenerationError(self._mask(f"{self.name}: {error!r}"))

    def request_body(self, conversation: Conversation, settings: GenerationSettings, n: int,
                     seed_offset: int = 0) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(conversation, self.video_mode),
                                "max_tokens": settings.max_new_tokens, "n": n}
        if not settings.model_default:  # else the server's defaults decide
            body.update(temperature=settings.temperature, top_p=settings.top_p)
        if settings.seed is not None:
            body["seed"] = settings.seed + seed_offset
        if self.video_mode == "vllm":
            body.update(_vllm_video_kwargs(conversation))
        body.update(self.extra_body)
        return body

    def next_token_probs(self, conversations: list[Conversation], words: list[str]) -> list[list[float]]:
        """Per conversation, P(the reply's first token is each word), from one `max_tokens=1` request with
        `logprobs` (the server's top TOP_LOGPROBS tokens; a word's variants in casing and spacing are summed).
        A server that returns no logprobs raises GenerationError saying so."""
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            futures = [pool.submit(self._first_token, i, conv, words) for i, conv in enumerate(conversations)]
        return collect([self._outcome(future) for future in futures])

    def _first_token(self, index: int, conversation: Conversation, words: list[str]) -> list[float]:
        body = self.request_body(conversation, GenerationSettings(max_new_tokens=1), n=1)
        body.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
        choices = self._post(index, body).get("choices") or [{}]
        content = (choices[0].get("logprobs") or {}).get("content") or []
        if not content or "top_logprobs" not in content[0]:
            raise GenerationError(f"{self.name}: conversation {index}: the server returned no logprobs; it does not "
                                  "offer them (the LLM judge: use its default mode=generate; a run: leave out "
                                  "--answer-probs)", index=index)
        probs = dict.fromkeys(words, 0.0)
        for entry in content[0]["top_logprobs"]:
            word = entry["token"].strip().lower()
            if word in probs:
                probs[word] += math.exp(entry["logprob"])
        return [probs[word] for word in words]

    def _complete(self, index: int, conversation: Conversation, settings: GenerationSettings) -> list[str]:
        texts: list[str] = []
        # Some servers cap or ignore `n`; ask again for what is missing.
        while len(texts) < settings.n:
            # A follow-up request gets another seed, or a seeded server would repeat the samples it already gave.
            body = self.request_body(conversation, settings, settings.n - len(texts), seed_offset=len(texts))
            choices = sorted(self._post(index, body).get("choices") or [], key=lambda c: c.get("index", 0))
            if not choices:
                raise GenerationError(f"{self.name}: conversation {index}: response has no choices", index=index)
            for choice in choices:
                content = (choice.get("message") or {}).get("content")
                if not isinstance(content, str):
                    raise GenerationError(f"{self.name}: conversation {index}: choice without text content "
                                          f"(finish_reason={choice.get('finish_reason')!r})", index=index)
                texts.append(content)
        return texts[:settings.n]

    async def _attempt(self, body: dict[str, Any]) -> httpx.Response:
        async with httpx.AsyncClient(base_url=self.base_url, headers=self._headers, auth=self._auth, verify=self._ssl,
                                     timeout=self.timeout, transport=self._transport) as client:
            return await client.post("/chat/completions", json=body)  # reads the whole body

    def _send(self, body: dict[str, Any]) -> httpx.Response:
        """One attempt, cancelled `timeout` s after it began whatever it is waiting for."""
        try:
            return asyncio.run(asyncio.wait_for(self._attempt(body), self.timeout))
        except asyncio.TimeoutError:  # the builtin TimeoutError from Python 3.11
            raise httpx.TimeoutException(f"no complete response within timeout={self.timeout} s "
                                         "(connect, headers and whole body)") from None

    def _post(self, index: int, body: dict[str, Any]) -> dict[str, Any]:
        last, retry_after = "", None
        for attempt in range(self.max_retries + 1):
            delay = self._delay(attempt, retry_after) if attempt else 0.0
            self._spend(delay, index, last)  # RetryBudgetSpent: no attempt starts once failures used the budget
            if delay:
                self._sleep(delay)
            retry_after, started = None, time.monotonic()
            try:
                response = self._send(body)
            except (httpx.TimeoutException, httpx.TransportError) as err:
                last = self._mask(f"{type(err).__name__}: {err}")
                self._charge(time.monotonic() - started)
                continue
            if response.status_code == 200:
                try:
                    data = response.json()
                except ValueError:
                    last = self._mask(f"HTTP 200 with a body that is not JSON: {response.text!r}")[:200]
                    self._charge(time.monotonic() - started)
                    continue
                if not isinstance(data, dict):
                    raise GenerationError(self._mask(
                        f"{self.name}: conversation {index}: HTTP 200 with a malformed body (a JSON "
                        f"{type(data).__name__}, not an object with `choices`): {response.text!r}")[:ERROR_TEXT_CHARS],
                        index=index)
                return data
            self._charge(time.monotonic() - started)
            last = self._mask(f"HTTP {response.status_code}: {response.text}")[:ERROR_TEXT_CHARS]
            if response.status_code in AUTH_STATUS:
                raise ModelUnusable(f"{self.name}: the server refused the credentials ({last}); check the key in "
                                    "api_key_env and that it may use this model, then run again (finished samples "
                                    "are kept)")
            if response.status_code not in RETRY_STATUS:
                raise GenerationError(f"{self.name}: conversation {index}: {last}", index=index)
            retry_after = response.headers.get("retry-after")
        raise GenerationError(f"{self.name}: conversation {index} failed after {self.max_retries + 1} attempts; "
                              f"last error: {last}", index=index)

    def _charge(self, seconds: float) -> None:
        """Count a failed attempt's `seconds` against the run's budget."""
        with self._budget_lock:
            self._failing_s += seconds

    def _spend(self, seconds: float, index: int, last: str) -> None:
        """Take `seconds` of waiting (0 for a first attempt) from the budget; RetryBudgetSpent when failures have
        used it up or not that much is left, and for every attempt after that."""
        with self._budget_lock:
            self._spent = self._spent or self._failing_s + seconds > self.retry_budget
            if not self._spent:
                self._failing_s += seconds
                return
        raise RetryBudgetSpent(self._mask(
            f"{self.name}: requests failed for retry_budget={self.retry_budget:g} s in all (failed attempts, timeouts "
            f"included, and the waits between them), so the server looks down: the run stops, finished samples are "
            f"kept. Last error (conversation {index}): {last or 'none yet'}. Check the server, then run the same "
            "command again (it resumes), or raise retry_budget in --model-args")[:2 * ERROR_TEXT_CHARS])

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        delay = self.backoff * 2 ** (attempt - 1)
        asked = retry_after_seconds(retry_after, time.time())
        if asked is not None:
            delay = max(delay, asked)
        return min(delay, self.max_backoff)

