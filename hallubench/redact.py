"""The one redaction: hide credentials in every string hallubench records, uploads or shows.

`redact` replaces the secrets in use (`secrets_in_use`: the values of the credential variables of the environment,
HF_TOKEN, OPENAI_API_KEY and any variable a `SecretEnv` config field named in this process, the `Secret` values and
URL passwords configs were given), the user:password part of any URL, Bearer / Basic credentials, the values of
fields and query parameters named like token, key, api_key, sig, password or secret, and tokens of the well-known
shapes (Hugging Face `hf_...`, OpenAI-style `sk-...`) by `***`. Mask before you truncate: a cut can leave most of a
secret that no longer matches in full.

No replaced run of text holds a quote or a backslash, so redacting JSON text keeps it JSON with the same structure:
the file writers (hallubench/writes.py) redact every text file they write, whatever its fields, and `redact_values`
walks every string of a record before it is written or shown.
"""
from __future__ import annotations

import base64
import json
import logging
import os
import re
from typing import Any, Iterable
from urllib.parse import unquote, urlsplit

MASK = "***"
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@\"'\\<>]+@")
_AUTHORIZATION = re.compile(r"(?i)\b((?:bearer|basic)\s+)[^\s\"',;\\<>]+")
_TOKEN_SHAPES = re.compile(r"\b(?:hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_\-]{20,})")
# token=..., "api_key": "...", password=... as written in --model-args, a YAML/JSON dump or a URL query (?key=, &sig=).
# (hf_token=, access_token:, client_secret= match at their last word: the same mask, found without backtracking)
_SECRET_NAME = r"token|api[_-]?key|password|passwd|secret|signature"
_SECRET_FIELD = re.compile(rf"(?i)((?:{_SECRET_NAME})\"?\s*[=:]\s*\"?)[^\s\"',;&}}\\<>]+")
_SECRET_KEY = re.compile(rf"(?i)(?:{_SECRET_NAME})$")  # a mapping's key naming a credential: its value is one
_FIELD_WORDS = ("token", "api", "passw", "secret", "signature")
_SECRET_PARAMETER = re.compile(r"(?i)([?&](?:key|sig|code|auth|access_token|token)=)[^\s\"'&#\\<>]+")
# The environment variables whose values are credentials: these, any named like them, and those configs name.
_CREDENTIAL_VARIABLES = {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "OPENAI_API_KEY"}
_CREDENTIAL_VARIABLE = re.compile(r"(?:^|_)(?:TOKEN|API_KEY|SECRET|PASSWORD|ACCESS_KEY)$")
_MIN_SECRET = 6  # a shorter value (a test's "x") would mask every such piece of text; the shapes above still apply
_noted_variables: set[str] = set()
_noted_secrets: set[str] = set()


def note_secret_variable(name: str) -> None:
    """`name` is an environment variable whose value a plug-in sends (a `SecretEnv` field): mask its value."""
    if name:
        _noted_variables.add(str(name))


def note_secret(value: str) -> None:
    """`value` is a credential given to a plug-in (a `Secret` field): mask it."""
    if isinstance(value, str) and len(value) >= _MIN_SECRET:
        _noted_secrets.add(value)


def note_url(url: str) -> None:
    """Mask a URL's password, its user:password and their Basic token wherever they appear (an `Endpoint` field)."""
    for secret in url_secrets(url):
        note_secret(secret)


def url_secrets(url: str) -> list[str]:
    """The credentials in a URL's userinfo as a server may echo them: `user:password` (raw and decoded), the password
    alone and the Basic-auth token (base64 of `user:password`)."""
    try:
        parts = urlsplit(str(url))
    except ValueError:
        return []
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    if not userinfo:
        return []
    user, _, password = userinfo.partition(":")
    pair = f"{unquote(user)}:{unquote(password)}"
    return [userinfo, pair, unquote(password), base64.b64encode(pair.encode()).decode()]


_names: dict[tuple[int, int], frozenset[str]] = {}


def secrets_in_use() -> list[str]:
    """The credential values of this process: those noted, and the values of the credential variables set (their
    names found again when the environment or the noted names change in number; every line written asks)."""
    key = (len(os.environ), len(_noted_variables))
    if key not in _names:
        _names.clear()
        _names[key] = frozenset(_CREDENTIAL_VARIABLES | _noted_variables |
                                {n for n in os.environ if _CREDENTIAL_VARIABLE.search(n)})
    values = {os.environ.get(name, "") for name in _names[key]} | _noted_secrets
    return sorted((v for v in values if len(v) >= _MIN_SECRET), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every credential masked: `secrets`, those in use, and the shapes above."""
    for secret in (*secrets, *secrets_in_use()):
        if secret:
            text = text.replace(secret, MASK)
            escaped = json.dumps(secret, ensure_ascii=False)[1:-1]  # as it stands inside JSON text
            if escaped != secret:
                text = text.replace(escaped, MASK)
    low = text.lower()  # each pattern runs only where its cheap mark is (every record line written is redacted)
    if "@" in low:
        text = _URL_CREDENTIALS.sub(rf"\1{MASK}@", text)
    if any(word in low for word in _FIELD_WORDS):
        text = _SECRET_FIELD.sub(rf"\1{MASK}", text)
    if "=" in low:
        text = _SECRET_PARAMETER.sub(rf"\1{MASK}", text)
    if "hf_" in low or "sk-" in low:
        text = _TOKEN_SHAPES.sub(MASK, text)
    if "bearer" in low or "basic" in low:
        text = _AUTHORIZATION.sub(rf"\1{MASK}", text)
    return text


def redact_values(value: Any, secrets: Iterable[str] = ()) -> Any:
    """`value` (str, list, tuple or dict, nested) with every string redacted, keys too; a string under a key named
    like a credential is masked whole."""
    secrets = tuple(secrets)
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {redact(key, secrets) if isinstance(key, str) else key:
                MASK if isinstance(item, str) and isinstance(key, str) and _SECRET_KEY.search(key) else
                redact_values(item, secrets) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_values(item, secrets) for item in value)
    return value


def redact_log_records() -> None:
    """Every log record made in this process from now on (ours and every library's) carries its message redacted."""
    make = logging.getLogRecordFactory()
    if getattr(make, "redacts", False):
        return

    def masked(*args, **kwargs) -> logging.LogRecord:
        record = make(*args, **kwargs)
        try:
            record.msg, record.args = redact(record.getMessage()), ()
        except Exception:  # noqa: BLE001  a record logging cannot format: left for logging's own error report
            pass
        return record

    masked.redacts = True
    logging.setLogRecordFactory(masked)


SHOWN_CHARS = 60


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """`value` as an error message quotes it: its repr on one line, credentials masked (`redact`, before the cut,
    which could leave a password without the `@` that marks it), cut to `limit` characters ("..." and the length
    after), so a huge or many-line value (a YAML alias bomb, a pasted file) never floods the message."""
    text = repr(value) if not isinstance(value, (list, dict, tuple, set)) or _small(value) else \
        f"<{type(value).__name__} of {len(value)}>"
    text = redact(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _small(value: object, budget: int = 200) -> bool:
    """Whether a container holds at most `budget` items, nested ones counted, without walking more than that (a
    YAML alias bomb is a tree of billions of items sharing a few objects: its repr alone would take gigabytes)."""
    stack, seen = [value], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > budget or (isinstance(item, (dict, list, tuple, set)) and len(item) > budget):
            return False
        if isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, (list, tuple, set)):
            stack += list(item)
    return True
