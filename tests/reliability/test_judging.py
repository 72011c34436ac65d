"""Judging keeps what it got: a judge failing on one pair of a batch loses none of the others (each is
cached as it arrives), the pair is retried alone, then recorded as a judge error (counted, reported with
its board, system, document and sentence, never cached); --strict-judging stops instead. Judging is journaled
call by call: Ctrl-C or kill -9 after 80 of 110 calls to a stand-in LLM judge server keeps every finished call,
and the rerun makes only the calls that were missing."""
import json
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hallubench.cli.main import main
from hallubench.judges import JudgmentCache
from hallubench.judges.base import BaseJudge, Judgment
from hallubench.judges.cached_judge import CachedJudge, JudgeError
from hallubench.models import GenerationError

from conftest import API_KEY, ROOT, env, openai_run_argv


class FlakyJudge(BaseJudge):
    """Scores by word overlap; a batch holding a sentence with `poison` fails like an LLM server would."""

    judge_id, prompt_version = "flaky-test-judge", "v1"

    def __init__(self, poison="POISON", fail_alone=True):
        super().__init__()
        self.poison, self.fail_alone, self.batches = poison, fail_alone, []

    def _judge(self, pairs):
        self.batches.append(len(pairs))
        bad = [i for i, (sentence, _) in enumerate(pairs) if self.poison in sentence]
        if bad and (self.fail_alone or len(pairs) > 1):
            raise GenerationError(f"conversation {bad[0]}: HTTP 500", index=bad[0])
        return [Judgment(score=0.0 if sentence.split()[0] in evidence else 1.0) for sentence, evidence in pairs]


PAIRS = [(f"word{i} here", "word1 word2 word3") for i in range(6)] + [("POISON sentence", "evidence")]


def test_a_failing_pair_costs_only_itself(tmp_path):
    cache = JudgmentCache(tmp_path / "j.sqlite")
    judge = CachedJudge(FlakyJudge(), cache, batch_size=16)
    judgments = judge.judge_batch(PAIRS)
    assert [j.score for j in judgments[:6]] == [1.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    assert judgments[6].undecided and judgments[6].raw.startswith("judge error: conversation 0: HTTP 500")
    assert judge.counters["errors"] == 1 and judge.errors[0]["sentence"] == "POISON sentence"
    assert len(cache) == 6, "every judgment received is cached; the failed one is not"
    rerun = CachedJudge(FlakyJudge(fail_alone=False), cache, batch_size=16)
    assert rerun.judge_batch(PAIRS)[6].score == 1.0 and rerun.counters["calls"] == 1  # only the failed pair


def test_strict_judging_stops_after_caching_what_came(tmp_path):
    cache = JudgmentCache(tmp_path / "j.sqlite")
    judge = CachedJudge(FlakyJudge(), cache, batch_size=16, strict=True)
    with pytest.raises(JudgeError, match="judging sentence 'POISON sentence' against evidence 'evidence' failed"):
        judge.judge_batch(PAIRS)
    assert len(cache) == 6


@pytest.fixture
def two_runs(server, data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("HB_RELIABILITY_KEY", API_KEY)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    runs = []
    for name in ("a", "b"):
        runs.append(tmp_path / name)
        assert main(openai_run_argv(server, data_dir, runs[-1], "--num-samples", "2", tasks="avhallubench_visual")) == 0
    return runs


@pytest.mark.parametrize("strict", [False, True])
def test_rank_reports_judge_errors_naming_system_document_and_sentence(two_runs, tmp_path, monkeypatch, capsys,
                                                                      strict):
    from hallubench.ranking import judging

    flaky = FlakyJudge(poison="yes")  # the server answers "yes": every target sentence fails
    monkeypatch.setattr(judging, "make_judge", lambda kind, args, cache: CachedJudge(flaky, cache))
    out = tmp_path / "ranking"
    argv = ["rank", *map(str, two_runs), "--output-dir", str(out), "--cache", str(tmp_path / "j.sqlite")]
    code = main(argv + (["--strict-judging"] if strict else []))
    captured = capsys.readouterr()
    if strict:
        assert code == 1 and "judging sentence 'yes' against evidence" in captured.err
        assert not (out / "crosscheck.json").exists()
        return
    assert code == 0
    errors = json.loads((out / "crosscheck.json").read_text())["judge"]["errors"]
    assert errors and {e["system"] for e in errors} == {"a", "b"}
    assert all(e["board"] == "avhallubench_visual" and e["sentence"] == "yes" and e["document"] for e in errors)
    # plain on the terminal, bold in the leaderboard file
    assert "judgments failed (judge errors, scored 0.5, not cached" in captured.out and "**" not in captured.out
    assert "judgments failed** (judge errors, scored 0.5, not cached" in (out / "leaderboard.md").read_text()


class CountingJudgeServer(ThreadingHTTPServer):
    """An OpenAI-compatible stand-in judge on 127.0.0.1 that counts its calls and answers "yes"; after `hold_after`
    calls it holds every further one unanswered (a call in flight) until `hold_after` is set to None."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _CountingHandler)
        self.calls, self.hold_after, self.lock = 0, None, threading.Lock()
        self.url = f"http://127.0.0.1:{self.server_port}/v1"


class _CountingHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        with self.server.lock:
            self.server.calls += 1
        while self.server.hold_after is not None and self.server.calls > self.server.hold_after:
            time.sleep(0.05)
        data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "yes"},
                                        "finish_reason": "stop"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def judge_server():
    httpd = CountingJudgeServer()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.hold_after = None
    httpd.shutdown()
    httpd.server_close()


N_PAIRS, INTERRUPTED_AT = 110, 80
# The whole path of `rank`'s judging (ranking/judging.make_judge: the LLM judge on the openai adapter behind the
# judgment cache, one CachedJudge batch of pairs_per_call = 256 pairs, so all 110 go out in one batch), in a child.
JUDGING = """
import sys
from hallubench.judges import JudgmentCache
from hallubench.ranking.judging import make_judge
judge = make_judge("llm", {"adapter": "openai", "model": "judge", "base_url": sys.argv[1],
                           "api_key_env": "HB_RELIABILITY_KEY"}, JudgmentCache(sys.argv[2]))
assert judge.batch_size >= int(sys.argv[3]), judge.batch_size
judge.judge_batch([(f"Sentence number {i}.", f"Evidence passage {i % 11}.") for i in range(int(sys.argv[3]))])
print("calls", judge.counters["calls"], flush=True)
"""


def _judging(judge_server, cache, **kwargs):
    return subprocess.Popen([sys.executable, "-c", JUDGING, judge_server.url, str(cache), str(N_PAIRS)], env=env(),
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL])
def test_an_interrupted_judging_keeps_every_finished_call(judge_server, tmp_path, signum):
    from hallubench.judges.configs import LLMJudgeArgs

    in_flight = LLMJudgeArgs.batch_size  # prompts per model call: the most one interrupt may cut off
    cache = tmp_path / "judgments.sqlite"
    judge_server.hold_after = INTERRUPTED_AT
    child = _judging(judge_server, cache)
    deadline = time.monotonic() + 120
    while judge_server.calls <= INTERRUPTED_AT and time.monotonic() < deadline:
        time.sleep(0.05)
    assert judge_server.calls > INTERRUPTED_AT, "the judging never got that far"
    child.send_signal(signum)
    judge_server.hold_after = None  # the calls in flight are answered now: too late, their process is stopping
    _, err = child.communicate(timeout=120)
    assert child.returncode != 0
    assert "judging (llm-explicit:openai:judge" in err, "the judging progress bar stays"
    kept = len(JudgmentCache(cache))
    assert INTERRUPTED_AT - in_flight < kept <= INTERRUPTED_AT + in_flight, kept
    judge_server.calls = 0
    rerun = _judging(judge_server, cache)
    out, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err
    assert out.split() == ["calls", str(N_PAIRS - kept)]
    assert judge_server.calls == N_PAIRS - kept <= N_PAIRS - INTERRUPTED_AT + in_flight
    assert len(JudgmentCache(cache)) == N_PAIRS
