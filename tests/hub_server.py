"""A stand-in for huggingface.co on 127.0.0.1: a threaded `http.server` answering the endpoints that
`huggingface_hub.snapshot_download` calls (huggingface_hub 2.x), so Hub code runs its real HTTP path offline.

- GET  /api/datasets/<repo>/revision/<rev>          repo info: {"id", "sha", "siblings"}
- GET  /api/datasets/<repo>/tree/<rev>?recursive=.. the file list: [{"type": "file", "path", "size", "oid"}]
- HEAD / GET /datasets/<repo>/resolve/<rev>/<path> the file, with X-Repo-Commit, ETag and Content-Length

Unknown repos answer 404 with X-Error-Code RepoNotFound, unknown revisions RevisionNotFound, as the Hub does.
`requests` records (method, path) of every call.

Writes (what `HfApi.create_repo` and `create_commit` send), for any repo type (datasets, spaces, models):
- POST /api/repos/create                          {"type", "name", "organization", "sdk"...}: recorded in `created`
- POST /api/validate-yaml                         the README's YAML front matter, checked to parse to a mapping
- POST /api/<type>s/<repo>/preupload/<rev>        every file "regular", so contents travel base64 in the commit
- POST /api/<type>s/<repo>/commit/<rev>           recorded in `commits`: {"kind", "repo", "files": {path: bytes}}
"""
from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse

import yaml


def git_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    files: dict[str, bytes]
    commit: str = field(default="")

    def __post_init__(self):
        if not self.commit:
            digest = hashlib.sha1()
            for path in sorted(self.files):
                digest.update(path.encode() + b"\0" + git_oid(self.files[path]).encode())
            self.commit = digest.hexdigest()

    @classmethod
    def from_folder(cls, folder: Path) -> "Repo":
        return cls({p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()})


class StandInHub:
    """Serves `repos` (dataset repo id -> Repo) until `close()`; `url` is the HF_ENDPOINT to use."""

    def __init__(self, repos: dict[str, Repo]):
        self.repos = repos
        self.requests: list[tuple[str, str]] = []
        self.created: list[dict] = []
        self.commits: list[dict] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_HEAD(self):
                hub.answer(self, body=False)

            def do_GET(self):
                hub.answer(self, body=True)

            def do_POST(self):
                hub.accept(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _repo(self, parts: list[str]) -> tuple[str, Repo | None]:
        repo_id = "/".join(parts[:2])
        return repo_id, self.repos.get(repo_id)

    def answer(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        url = urlparse(handler.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        self.requests.append((handler.command, url.path))
        if parts[:2] == ["api", "datasets"] and len(parts) >= 6 and parts[4] in ("revision", "tree"):
            repo_id, repo = self._repo(parts[2:4])
            if error := self._missing(repo, parts[5]):
                return self._send(handler, 404, json.dumps({"error": error[1]}).encode(), body, {"X-Error-Code": error[0]})
            if parts[4] == "revision":
                info = {"id": repo_id, "sha": repo.commit, "private": False,
                        "siblings": [{"rfilename": p} for p in sorted(repo.files)]}
            else:
                info = [{"type": "file", "path": p, "size": len(d), "oid": git_oid(d)} for p, d in sorted(repo.files.items())]
            return self._send(handler, 200, json.dumps(info).encode(), body, {"Content-Type": "application/json"})
        if parts[:1] == ["datasets"] and len(parts) >= 6 and parts[3] == "resolve":
            repo_id, repo = self._repo(parts[1:3])
            if error := self._missing(repo, parts[4]):
                return self._send(handler, 404, b"", body, {"X-Error-Code": error[0]})
            path = "/".join(parts[5:])
            if path not in repo.files:
                return self._send(handler, 404, b"", body, {"X-Error-Code": "EntryNotFound"})
            data = repo.files[path]
            return self._send(handler, 200, data, body, {"X-Repo-Commit": repo.commit, "ETag": f'"{git_oid(data)}"',
                                                          "Content-Type": "application/octet-stream"})
        self._send(handler, 404, b"", body, {})

    @staticmethod
    def _missing(repo: Repo | None, revision: str) -> tuple[str, str] | None:
        if repo is None:
            return "RepoNotFound", "Repository not found"
        if revision not in ("main", repo.commit):
            return "RevisionNotFound", "Invalid rev id"
        return None

    @staticmethod
    def _send(handler, status: int, data: bytes, body: bool, headers: dict[str, str]) -> None:
        handler.send_response(status)
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        if body:
            handler.wfile.write(data)

    def accept(self, handler: BaseHTTPRequestHandler) -> None:
        """A write: repo creation, README YAML validation, preupload or commit (see the module description)."""
        url = urlparse(handler.path)
        body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        self.requests.append((handler.command, url.path))
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        reply: object = {"error": "not in the stand-in Hub"}
        status = 404
        if parts == ["api", "repos", "create"]:
            payload = json.loads(body)
            self.created.append(payload)
            status, reply = 200, {"url": f"{self.url}/{payload['type']}s/{payload['organization']}/{payload['name']}"}
        elif parts == ["api", "validate-yaml"]:
            ok = isinstance(yaml.safe_load(json.loads(body)["content"].split("---\n")[1]), dict)
            status, reply = (200 if ok else 400), {"errors": [] if ok else [{"message": "not a YAML mapping"}]}
        elif len(parts) >= 6 and parts[0] == "api" and parts[4] == "preupload":
            files = json.loads(body)["files"]
            status, reply = 200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                                             "oid": None} for f in files]}
        elif len(parts) >= 6 and parts[0] == "api" and parts[4] == "commit":
            lines = [json.loads(line) for line in body.splitlines() if line.strip()]
            files = {line["value"]["path"]: base64.b64decode(line["value"]["content"]) for line in lines
                     if line["key"] == "file"}
            repo_id = f"{parts[2]}/{parts[3]}"
            self.commits.append({"kind": parts[1].rstrip("s"), "repo": repo_id, "files": files})
            oid = hashlib.sha1(repr(sorted(files.items())).encode()).hexdigest()
            status, reply = 200, {"commitUrl": f"{self.url}/{parts[1]}/{repo_id}/commit/{oid}", "commitOid": oid}
        self._send(handler, status, json.dumps(reply).encode(), True, {"Content-Type": "application/json"})
