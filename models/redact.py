"""Hide credentials in text before it is stored, printed or uploaded.

`redact` replaces the given secrets, the user:password part of any URL, Bearer / Basic credentials, the values of fields named like
token, api_key, password or secret, and tokens of the well-known shapes (Hugging Face `hf_...`, OpenAI-style `sk-...`) by `***`.
Mask before you truncate: a cut can leave most of a secret that no longer matches in full.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

MASK = "***"
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")
_AUTHORIZATION = re.compile(r"(?i)\b((?:bearer|basic)\s+)[^\s\"',;]+")
# token=..., "api_key": "...", password=... as written in --model-args, a YAML/JSON dump or a URL query.
_TOKEN_SHAPES = re.compile(r"\b(?:hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_\-]{20,})")
_SECRET_FIELD = re.compile(r"(?i)\b((?:[a-z_]*token|api[_-]?key|password|secret)\"?\s*[=:]\s*\"?)[^\s\"',;&}]+")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    text = _URL_CREDENTIALS.sub(rf"\1{MASK}@", text)
    text = _SECRET_FIELD.sub(rf"\1{MASK}", text)
    text = _TOKEN_SHAPES.sub(MASK, text)
    return _AUTHORIZATION.sub(rf"\1{MASK}", text)


def redact_values(value: Any, secrets: Iterable[str] = ()) -> Any:
    """`value` (str, list, tuple or dict, nested) with every string redacted."""
    secrets = tuple(secrets)
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {key: MASK if isinstance(item, str) and _SECRET_FIELD.fullmatch(f"{key}={item}") else
                redact_values(item, secrets) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_values(item, secrets) for item in value)
    return value
