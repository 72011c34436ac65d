"""Secrets never stored: under each failure mode of the server, every file that `run`, `rank` and
`publish` write, and everything they print or log, is scanned for the API key (and long pieces of it),
the password of a base_url with user:password, its Basic-auth form and the Hub token."""
import base64
import logging

import pytest

from hallubench.cli.main import main

from conftest import API_KEY, URL_PASSWORD, URL_USER, openai_run_argv

HUB_TOKEN = "hf_ReliabilitySecret0123456789abcdefXYZ"
SECRETS = [API_KEY, API_KEY[:20], API_KEY[-20:], URL_PASSWORD, HUB_TOKEN,
           base64.b64encode(f"{URL_USER}:{URL_PASSWORD}".encode()).decode()]
FAST = ",timeout=1.0,max_retries=1,backoff=0.01"


def assert_no_secret(folder, *texts):
    files = [path for path in folder.rglob("*") if path.is_file()]
    assert files
    for path in files:
        data = path.read_bytes()
        for secret in SECRETS:
            assert secret.encode() not in data, f"{secret[:6]}... in {path}"
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"{secret[:6]}... in the output: {text[:300]}"


@pytest.fixture(autouse=True)
def environment(monkeypatch, caplog):
    monkeypatch.setenv("HB_RELIABILITY_KEY", API_KEY)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    caplog.set_level(logging.DEBUG)


@pytest.mark.parametrize("with_url_credentials", [False, True], ids=["key", "url-credentials"])
@pytest.mark.parametrize("mode", ["ok", "401", "500", "echo", "trickle"])
def test_run_stores_and_prints_no_secret(server, data_dir, tmp_path, capfd, caplog, mode, with_url_credentials):
    server.mode = mode
    out = tmp_path / "run"
    url = server.url_with_credentials if with_url_credentials else None
    code = main(openai_run_argv(server, data_dir, out, model_args=FAST, url=url))
    assert code == (0 if mode == "ok" else 1)
    captured = capfd.readouterr()
    # The server echoed the credential across the cut at 500 characters: masked first, then cut.
    shown = {"401": captured.err, "500": (out / "samples.jsonl").read_text() if mode == "500" else ""}.get(mode)
    if shown is not None:
        assert "credential Bearer *" in shown or "credential Basic *" in shown
    assert_no_secret(out, captured.out, captured.err, caplog.text)


def test_rank_and_publish_store_no_secret(server, data_dir, tmp_path, capfd, caplog, monkeypatch):
    from hub_server import StandInHub  # the stand-in Hub on 127.0.0.1

    runs = []
    for name in ("a", "b"):
        runs.append(tmp_path / name)
        assert main(openai_run_argv(server, data_dir, runs[-1], "--num-samples", "2", tasks="avhallubench_visual",
                                    model_args=FAST, url=server.url_with_credentials)) == 0
    ranking = tmp_path / "ranking"
    assert main(["rank", *map(str, runs), "--output-dir", str(ranking), "--cache", str(tmp_path / "j.sqlite")]) == 0

    monkeypatch.delenv("HF_TOKEN", raising=False)
    double = StandInHub({}).serve_in_process(monkeypatch, tmp_path)
    double.refuse_commit = f"token {HUB_TOKEN} may not write here"  # a Hub error echoing the token
    publish = ["publish", str(runs[0]), "--repo", "me/x", "--no-model-results", "--allow-mini-data", "--allow-partial",
               "--token", HUB_TOKEN]
    try:
        assert main(publish) != 0
        double.refuse_commit = None
        assert main(publish) == 0
    finally:
        double.close()
    uploaded = b"".join(content for commit in double.commits for content in commit["files"].values())
    captured = capfd.readouterr()
    assert_no_secret(tmp_path, captured.out, captured.err, caplog.text, uploaded.decode("utf-8", "replace"))


@pytest.mark.parametrize("text,kept", [
    ("--model-args pretrained=x,token=hf_abc123,max_new_tokens=64", "max_new_tokens=64"),
    ('{"hf_token": "hf_abc123", "api_key_env": "OPENAI_API_KEY"}', '"api_key_env": "OPENAI_API_KEY"'),
    ("https://host/v1/chat?api-key=hf_abc123&x=1", "&x=1"),
    ("https://user:hf_abc123@host/v1", "https://***@host/v1"),
    ("Authorization: Bearer hf_abc123", "Bearer ***"),
    ("the server said: no access for hf_abc123abcdefghijklmnopqrstuv here", "no access for *** here"),
    ("key sk-proj-abc123abcdefghijklmnopqrstuv was refused", "key *** was refused"),
])
def test_redact_hides_secret_fields_and_keeps_the_rest(text, kept):
    from hallubench.redact import redact, redact_values

    assert "hf_abc123" not in redact(text) and kept in redact(text)
    assert redact_values({"token": "hf_abc123", "max_new_tokens": 64, "nested": [text]}) == \
        {"token": "***", "max_new_tokens": 64, "nested": [redact(text)]}

