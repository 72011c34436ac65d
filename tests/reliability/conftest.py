"""A misbehaving chat-completions server on 127.0.0.1 and helpers to run `hallubench` against it.

`server.mode` picks the behaviour of every following request: "ok" answers (after `server.delay` s, or
at once when a test sets `server.release`, which also frees the answers being held),
"trickle" sends the body one byte every 0.2 s forever, "hang" sends nothing, "401"/"403"/"500" answer
that status with a body that echoes the Authorization header (as careless servers do), "429-date" answers 429
with a Retry-After HTTP date `server.retry_after_s` seconds ahead, "list" answers 200 with the body `[]`, "echo"
answers 400 with the pieces of a Basic credential apart: the token without its scheme, the password alone and
user:password. Every request's arrival time is kept (`server.times`, time.monotonic).
"""
import base64
import email.utils
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


API_KEY = "sk-reliability-" + "k3y" * 10  # 44 characters, like a real key
URL_USER, URL_PASSWORD = "alice", "p4ssw0rd-in-url"
ROOT = Path(__file__).resolve().parents[2]


def _answer(n):
    return {"choices": [{"index": i, "message": {"role": "assistant", "content": "yes"}, "finish_reason": "stop"}
                        for i in range(n)]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        server = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with server.lock:
            server.requests.append({"auth": self.headers.get("Authorization"), "body": body})
            server.times.append(time.monotonic())
        mode = server.mode
        if mode == "429-date":
            self.send_response(429)
            self.send_header("Retry-After", email.utils.formatdate(time.time() + server.retry_after_s, usegmt=True))
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif mode == "list":
            self._send(200, b"[]")
        elif mode in ("401", "403", "500"):
            # The credential straddles the 500th character, where error messages are cut.
            text = "x" * 470 + f" credential {self.headers.get('Authorization')} " + "x" * 100
            self._send(int(mode), text.encode())
        elif mode == "echo":
            scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
            pieces = [token] + (base64.b64decode(token).decode().split(":", 1) + [base64.b64decode(token).decode()]
                                if scheme == "Basic" else [])
            self._send(400, f"bad request from {' / '.join(pieces)}".encode())
        elif mode == "hang":
            server.stop.wait(120)
        elif mode == "trickle":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            while not server.stop.is_set():
                try:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                except OSError:
                    return
                server.stop.wait(0.2)
        else:
            server.release.wait(server.delay)
            self._send(200, json.dumps(_answer(body.get("n", 1))).encode())

    def _send(self, status, data):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def start_server() -> ThreadingHTTPServer:
    """The stand-in chat-completions server, serving until `stop_server`."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.mode, httpd.delay, httpd.requests, httpd.times, httpd.retry_after_s = "ok", 0.0, [], [], 5
    httpd.lock, httpd.stop, httpd.release = threading.Lock(), threading.Event(), threading.Event()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    httpd.url = f"http://127.0.0.1:{httpd.server_port}/v1"
    # httpx sends these as Basic auth in place of the bearer key.
    httpd.url_with_credentials = f"http://{URL_USER}:{URL_PASSWORD}@127.0.0.1:{httpd.server_port}/v1"
    return httpd


def stop_server(httpd: ThreadingHTTPServer) -> None:
    httpd.stop.set()
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def server():
    httpd = start_server()
    yield httpd
    stop_server(httpd)


@pytest.fixture
def offline(monkeypatch):
    """This process as the children run (`env`): offline, with no Hub token, the run's key in its variable."""
    monkeypatch.setenv("HB_RELIABILITY_KEY", API_KEY)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_TOKEN_PATH", str(ROOT / "tests" / "reliability" / "no-hub-login"))


@pytest.fixture(scope="session")
def data_dir(mini_datasets):
    return mini_datasets


def openai_run_argv(server, data_dir, out, *extra, model_args="", tasks="cmm", url=None):
    return ["run", "--model", "openai", "--model-args",
            f"pretrained=tiny,base_url={url or server.url},api_key_env=HB_RELIABILITY_KEY{model_args}",
            "--tasks", tasks, "--limit", "2", "--num-frames", "2", "--data-dir", str(data_dir),
            "--output-dir", str(out), *extra]


def env():
    """The children's environment: offline, with no Hub token (HF_TOKEN unset, no login file)."""
    inherited = {k: v for k, v in os.environ.items() if k != "HF_TOKEN"}
    return {**inherited, "HB_RELIABILITY_KEY": API_KEY, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
            "HF_TOKEN_PATH": str(ROOT / "tests" / "reliability" / "no-hub-login")}


def hallubench(*argv, **kwargs):
    """`python -m hallubench ARGV` as a child process (Popen), its output in pipes."""
    return subprocess.Popen([sys.executable, "-m", "hallubench", *map(str, argv)], env=env(), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def wait_for_holder(folder, pid, timeout=120):
    """Until process `pid` holds the lock of `folder` (its record names it)."""
    path = folder / ".hallubench.lock"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if json.loads(path.read_text() or "{}").get("pid") == pid:
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    raise AssertionError(f"pid {pid} never took {path}")


def publish_gets_past_the_lock(folder):
    """`hallubench publish` with no Hub token: past the folder's checks it stops at the token, before any request
    (the runs here are on the mini benchmarks, some with --limit)."""
    publish = hallubench("publish", folder, "--repo", "me/x", "--allow-mini-data", "--allow-partial")
    _, err = publish.communicate(timeout=120)
    assert publish.returncode == 2 and "no Hugging Face token" in err, err


def answers_run_folder(path: Path, answer: str, samples: list[str], task: str = "avhallubench_visual") -> Path:
    """A run folder of `task` holding only its samples (two items answering `answer` with `samples`), as `rank`
    reads it: enough to rank, nothing to generate."""
    path.mkdir(parents=True)
    lines = [{"key": f"{path.name}-q{i}", "task": task, "id": f"q{i}", "outputs": [answer], "samples": samples,
              "reference": answer, "error": None} for i in range(2)]
    (path / "samples.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path
