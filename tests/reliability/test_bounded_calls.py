"""Bounded network calls against a real misbehaving server on 127.0.0.1: a whole-request deadline (a
trickling or silent server cannot hold a sample), one retry budget per run bounding all its waiting on failures
(timeouts included) after which the run stops, Retry-After as seconds or an HTTP date, malformed bodies named,
no conversation of a batch tried twice, 401/403 stop the run, and a run whose samples all failed exits non-zero
naming the kinds of errors."""
import json
import time

import pytest

from hallubench.cli.main import main
from hallubench.harness import run_state, store
from hallubench.models import GenerationError, GenerationSettings, Message, TextPart, get_model
from hallubench.models.openai_compat import RetryBudgetSpent

from conftest import API_KEY, openai_run_argv

FAST = ",timeout=1.5,max_retries=1,backoff=0.05"


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("HB_RELIABILITY_KEY", API_KEY)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.mark.parametrize("mode", ["trickle", "hang"])
def test_a_trickling_or_silent_server_cannot_hold_a_sample_past_the_deadline(server, data_dir, tmp_path, mode, capfd):
    server.mode = mode
    out = tmp_path / "run"
    assert main(openai_run_argv(server, data_dir, out, model_args=FAST)) == 1
    # One sample per batch (the default), each 2 attempts cut at 1.5 s: 2 x 3 s.
    generation_s = json.loads((out / "results.json").read_text())["run"]["generation_s"]
    assert generation_s < 8, generation_s
    assert len(server.requests) == 4
    err = capfd.readouterr().err
    assert "2 of 2 samples failed" in err and "TimeoutException" in err and "every sample failed" in err
    records, _ = store.read_jsonl(out / store.MERGED)
    assert [r["error"]["class"] for r in records] == ["GenerationError"] * 2
    assert all("timeout=1.5 s (connect, headers and whole body)" in r["error"]["message"] for r in records)


@pytest.mark.parametrize("status", ["401", "403"])
def test_refused_credentials_stop_the_run_at_once(server, data_dir, tmp_path, status, capfd):
    server.mode = status
    t0 = time.monotonic()
    assert main(openai_run_argv(server, data_dir, tmp_path / "run", model_args=",timeout=1.5,max_retries=5")) == 1
    assert time.monotonic() - t0 < 10
    err = capfd.readouterr().err
    assert f"refused the credentials (HTTP {status}" in err and "check the key" in err
    assert len(server.requests) <= 2, "no retries on an auth error"
    assert API_KEY not in err


def test_all_failed_run_exits_non_zero_with_a_summary_and_keeps_its_records(server, data_dir, tmp_path, capfd):
    server.mode = "500"
    out = tmp_path / "run"
    assert main(openai_run_argv(server, data_dir, out, model_args=FAST)) == 1
    err = capfd.readouterr().err
    assert "2 of 2 samples failed:\n  2 x generation GenerationError: openai:tiny@http://127.0.0.1" in err
    assert "failed after 2 attempts; last error: HTTP 500" in err
    assert (out / "results.json").exists() and len(server.requests) == 4
    server.mode = "ok"  # the rerun retries the failed samples and now succeeds
    assert main(openai_run_argv(server, data_dir, out, model_args=FAST)) == 0
    records, _ = store.read_jsonl(out / store.MERGED)
    assert len(records) == 2 and all(r["error"] is None for r in records)


def test_a_partly_failed_run_exits_zero(server, data_dir, tmp_path, capfd):
    server.mode = "ok"
    out = tmp_path / "run"
    assert main(openai_run_argv(server, data_dir, out, "--limit", "1", model_args=FAST)) == 0
    server.mode = "500"
    assert main(openai_run_argv(server, data_dir, out, "--limit", "2", model_args=FAST)) == 0
    assert "1 of 2 samples failed" in capfd.readouterr().err


def _model(server, **options):
    return get_model("openai", model="m", base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key_env=None,
                     **options)


ASK = [Message("user", [TextPart("q")])]


def test_retry_budget_is_shared_by_all_requests_of_a_run_and_then_stops_it(server):
    server.mode = "500"
    sleeps = []
    model = _model(server, max_retries=5, backoff=1.0, retry_budget=2.5, sleep=sleeps.append)
    # Waits of 1 s then 2 s: the second no longer fits the 2.5 s budget, so the run stops there.
    with pytest.raises(RetryBudgetSpent, match=r"retry_budget=2.5 s in all .*the run stops.*conversation 0.*HTTP 500"):
        model.generate([ASK], GenerationSettings())
    # A later conversation of the same run sends nothing.
    with pytest.raises(RetryBudgetSpent):
        model.generate([ASK], GenerationSettings())
    assert sleeps == [1.0] and len(server.requests) == 2


def test_a_retry_after_http_date_is_honoured_and_capped(server):
    server.mode, server.retry_after_s = "429-date", 5
    sleeps = []
    with pytest.raises(GenerationError, match="failed after 2 attempts; last error: HTTP 429"):
        _model(server, max_retries=1, backoff=0.1, sleep=sleeps.append).generate([ASK], GenerationSettings())
    assert len(sleeps) == 1 and 3.9 < sleeps[0] <= 5.0, sleeps  # the date has whole seconds
    with pytest.raises(GenerationError):
        _model(server, max_retries=1, backoff=0.1, max_backoff=2.0, sleep=sleeps.append).generate([ASK],
                                                                                                   GenerationSettings())
    assert sleeps[1] == 2.0


def test_a_malformed_body_is_named_as_such(server):
    server.mode = "list"
    with pytest.raises(GenerationError, match=r"conversation 0: HTTP 200 with a malformed body \(a JSON list, not an "
                                              r"object with `choices`\): '\[\]'"):
        _model(server).generate([ASK], GenerationSettings())
    assert len(server.requests) == 1


def test_a_dead_server_stops_the_run_within_retry_budget_plus_timeout(server, data_dir, tmp_path, capfd):
    server.mode = "hang"
    out = tmp_path / "run"
    budget, timeout = 2.5, 1.0
    argv = openai_run_argv(server, data_dir, out, "--limit", "4",
                           model_args=f",timeout={timeout},max_retries=20,backoff=0.05,retry_budget={budget}")
    assert main(argv) == 1
    waited = time.monotonic() - server.times[0]
    assert waited < budget + timeout + 1.5, waited  # + the run's own work after the last attempt
    err = capfd.readouterr().err
    assert f"retry_budget={budget:g} s in all" in err and "the run stops, finished samples are kept" in err
    assert "Traceback" not in err
    assert run_state.unfinished(out)["stopped"].startswith("failed (RetryBudgetSpent")


def test_a_failing_conversation_in_a_batch_is_not_tried_again_alone(server, data_dir, tmp_path):
    server.mode = "500"
    out = tmp_path / "run"
    assert main(openai_run_argv(server, data_dir, out, "--batch-size", "2", model_args=FAST)) == 1
    assert len(server.requests) == 4  # 2 conversations x (1 attempt + 1 retry), none sent again on its own
