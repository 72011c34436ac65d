"""Requests/s of the OpenAI adapter (a whole-attempt deadline: one event loop and connection per attempt)
against a baseline in the same run: the same requests through one pooled httpx.Client on the same thread
pool (what the adapter did before the deadline). Loopback server; 0 and 50 ms of server latency.

    python tests/perf/bench_openai_requests.py
"""
import json
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from hallubench.models import GenerationSettings, Message, TextPart, get_model

N, CONCURRENCY, REPEATS = 200, 8, 3
REPLY = json.dumps({"choices": [{"index": 0, "message": {"content": "yes"}, "finish_reason": "stop"}]}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(self.server.latency)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(REPLY)))
        self.end_headers()
        self.wfile.write(REPLY)

    def log_message(self, *args):
        pass


def adapter_rate(url: str) -> float:
    model = get_model("openai", model="m", base_url=url, api_key_env=None, concurrency=CONCURRENCY)
    conversations = [[Message("user", [TextPart(f"q{i}")])] for i in range(N)]
    start = time.perf_counter()
    assert model.generate(conversations, GenerationSettings()) == [["yes"]] * N
    return N / (time.perf_counter() - start)


def pooled_rate(url: str) -> float:
    body = {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]}], "n": 1}
    with httpx.Client(base_url=url, timeout=120) as client, ThreadPoolExecutor(CONCURRENCY) as pool:
        start = time.perf_counter()
        replies = list(pool.map(lambda _: client.post("/chat/completions", json=body).json(), range(N)))
        elapsed = time.perf_counter() - start
    assert all(r["choices"][0]["message"]["content"] == "yes" for r in replies)
    return N / elapsed


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/v1"
    for latency in (0.0, 0.05):
        server.latency = latency
        adapter = statistics.median(adapter_rate(url) for _ in range(REPEATS))
        pooled = statistics.median(pooled_rate(url) for _ in range(REPEATS))
        print(f"latency {latency * 1000:.0f} ms: adapter {adapter:.0f} req/s, pooled httpx baseline {pooled:.0f} req/s, "
              f"ratio {adapter / pooled:.2f}")
    server.shutdown()


if __name__ == "__main__":
    main()
