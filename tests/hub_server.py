"""A stand-in for huggingface.co on 127.0.0.1: a threaded `http.server` answering the endpoints that
`huggingface_hub.snapshot_download` calls (huggingface_hub 2.x), so Hub code runs its real HTTP path offline.

- GET  /api/datasets/<repo>/revision/<rev>          repo info: {"id", "sha", "siblings"}
- GET  /api/datasets/<repo>/tree/<rev>?recursive=.. the file list: [{"type": "file", "path", "size", "oid"}]
- HEAD / GET /datasets/<repo>/resolve/<rev>/<path> the file, with X-Repo-Commit, ETag and Content-Length

and, for pushes (`HfApi.create_repo`, `create_commit`, `get_repo_discussions`, `model_info`, `whoami`), on
dataset, model and Space repos alike (`models`: model repo id -> Repo; `spaces`, `created`: the Spaces and every
repo-creation body):

- GET  /api/whoami-v2                               the token's user, `user`
- POST /api/repos/create                            a new empty repo; 409 when it exists (exist_ok reads that)
- POST /api/validate-yaml                           a card's YAML header: 400 unless it is a mapping
- GET  /api/<kind>s/<repo>                          repo info at main
- POST /api/<kind>s/<repo>/preupload/<rev>          every file "regular" (its bytes travel in the commit)
- POST /api/<kind>s/<repo>/commit/<rev>             a commit to main, to refs/pr/N, or (create_pr=1) a new PR
- GET  /api/<kind>s/<repo>/discussions              the PRs, filtered by type, status and author as the Hub does
- HEAD / GET /<repo>/resolve/<rev>/<path>           a model repo's file (refs/pr/N too)
- HEAD / GET /spaces/<repo>/resolve/<rev>/<path>    a Space's file (`spaces`: Space repo id -> Repo; pushed like the
                                                    others, with `type: space`; evaluate.load("ORG/<name>") reads here)

Unknown repos answer 404 with X-Error-Code RepoNotFound, unknown revisions RevisionNotFound, as the Hub does.
`requests` records (method, path) of every call, `seen` each call's {method, url, headers (lower-case names),
body} but huggingface_hub's own tokenless daily `/api/agent-harnesses` fetch (in `library_calls`), `commits`
every commit accepted ({kind, repo, revision, create_pr, summary, files, deleted}) and `pulls[(kind, repo)]`
every PR opened ({num, title, author, status, repo: its Repo}).
"""
from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import yaml

KINDS = {"datasets": "dataset", "models": "model", "spaces": "space"}


def git_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    files: dict[str, bytes]
    commit: str = field(default="")

    def __post_init__(self):
        if not self.commit:
            self.commit = self.content_sha()

    def content_sha(self, parent: str = "") -> str:
        digest = hashlib.sha1(parent.encode())
        for path in sorted(self.files):
            digest.update(path.encode() + b"\0" + git_oid(self.files[path]).encode())
        return digest.hexdigest()

    def apply(self, files: dict[str, bytes], deleted: list[str]) -> None:
        """A commit: `files` added or replaced, `deleted` removed, a new commit sha."""
        self.files = {p: d for p, d in {**self.files, **files}.items() if p not in deleted}
        self.commit = self.content_sha(self.commit)

    @classmethod
    def from_folder(cls, folder: Path) -> "Repo":
        return cls({p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()})


class StandInHub:
    """Serves `repos` (dataset repo id -> Repo) and `models` (model repo id -> Repo) until `close()`; `url` is
    the HF_ENDPOINT to use; `user` the name the token belongs to."""

    def __init__(self, repos: dict[str, Repo], models: dict[str, Repo] | None = None, user: str = "me"):
        self.repos = repos
        self.models = dict(models or {})
        self.user = user
        self.requests: list[tuple[str, str]] = []
        self.seen: list[dict] = []
        self.library_calls: list[dict] = []
        self.commits: list[dict] = []
        self.created: list[dict] = []  # every repo-creation request's JSON body
        self.spaces: dict[str, Repo] = {}
        self.pulls: dict[tuple[str, str], list[dict]] = {}
        self.on_commit = None  # called with (kind, repo id) when a commit arrives, before it is applied
        self.refuse_commit: str | None = None  # answer commits 403 with this error text (a Hub error)
        self.lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_HEAD(self):
                hub.answer(self, body=False)

            def do_GET(self):
                hub.answer(self, body=True)

            def do_POST(self):
                hub.answer_post(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def serve_in_process(self, monkeypatch, tmp_path: Path) -> "StandInHub":
        """Make huggingface_hub in this process talk to this server (its endpoint, file URLs, a fresh cache, online,
        no login token); HF_TOKEN is left to the test."""
        from huggingface_hub import constants

        monkeypatch.setattr(constants, "ENDPOINT", self.url)
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", self.url + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "stand-in-hub-cache"))
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-login-token"))
        return self

    def _repo(self, parts: list[str]) -> tuple[str, Repo | None]:
        repo_id = "/".join(parts[:2])
        return repo_id, self.repos.get(repo_id)

    def _see(self, handler, url, body: bytes) -> None:
        call = {"method": handler.command, "url": handler.path, "headers": {k.lower(): v for k, v in handler.headers.items()},
                "body": body}
        (self.library_calls if url.path == "/api/agent-harnesses" else self.seen).append(call)

    def _store(self, kind: str) -> dict[str, Repo]:
        return {"dataset": self.repos, "space": self.spaces}.get(kind, self.models)

    def _at(self, kind: str, repo_id: str, revision: str) -> Repo | None:
        """The repo's files at `revision`: main or its commit sha, or a PR's refs/pr/N."""
        repo = self._store(kind).get(repo_id)
        if repo is None or revision in ("main", repo.commit):
            return repo
        pull = revision.removeprefix("refs/pr/")
        return next((p["repo"] for p in self.pulls.get((kind, repo_id), []) if str(p["num"]) == pull), None)

    def answer(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        url = urlparse(handler.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        self.requests.append((handler.command, url.path))
        self._see(handler, url, b"")
        if self.answer_push_reads(handler, url, parts, body):
            return
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

    def answer_push_reads(self, handler, url, parts: list[str], body: bool) -> bool:
        """The GETs of a push (whoami, repo info, discussions, model trees and files); False for other paths."""
        json_type = {"Content-Type": "application/json"}
        if parts == ["api", "whoami-v2"]:
            self._send(handler, 200, json.dumps({"type": "user", "name": self.user, "orgs": []}).encode(), body, json_type)
            return True
        if parts[:1] == ["api"] and len(parts) >= 4 and parts[1] in KINDS:
            kind, repo_id = KINDS[parts[1]], "/".join(parts[2:4])
            repo = self._store(kind).get(repo_id)
            if repo is None and (kind == "model" or len(parts) in (4, 5)):
                self._send(handler, 404, b'{"error": "Repository not found"}', body, {"X-Error-Code": "RepoNotFound"})
                return True
            if len(parts) == 4:
                info = {"id": repo_id, "sha": repo.commit, "private": False,
                        "siblings": [{"rfilename": p} for p in sorted(repo.files)]}
                self._send(handler, 200, json.dumps(info).encode(), body, json_type)
                return True
            if parts[4] == "discussions":
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                pulls = [p for p in self.pulls.get((kind, repo_id), [])
                         if query.get("type") in (None, "all", "pull_request")
                         and query.get("status") in (None, "all", p["status"])
                         and query.get("author") in (None, p["author"])]
                listing = [{"num": p["num"], "title": p["title"], "status": p["status"], "isPullRequest": True,
                            "author": {"name": p["author"]}, "createdAt": "2026-01-01T00:00:00.000Z",
                            "repo": {"name": repo_id, "type": kind}} for p in pulls]
                answer = {"discussions": listing, "count": len(listing), "start": 0, "numClosedDiscussions": 0}
                self._send(handler, 200, json.dumps(answer).encode(), body, json_type)
                return True
            if kind == "model" and parts[4] in ("revision", "tree") and len(parts) >= 6:
                at = self._at(kind, repo_id, parts[5])
                if at is None:
                    self._send(handler, 404, b'{"error": "Invalid rev id"}', body, {"X-Error-Code": "RevisionNotFound"})
                elif parts[4] == "revision":
                    info = {"id": repo_id, "sha": at.commit, "siblings": [{"rfilename": p} for p in sorted(at.files)]}
                    self._send(handler, 200, json.dumps(info).encode(), body, json_type)
                else:
                    tree = [{"type": "file", "path": p, "size": len(d), "oid": git_oid(d)} for p, d in sorted(at.files.items())]
                    self._send(handler, 200, json.dumps(tree).encode(), body, json_type)
                return True
        kind, parts = ("space", parts[1:]) if parts[:1] == ["spaces"] else ("model", parts)
        if len(parts) >= 5 and parts[2] == "resolve" and "/".join(parts[:2]) in self._store(kind):
            at = self._at(kind, "/".join(parts[:2]), parts[3])
            data = None if at is None else at.files.get("/".join(parts[4:]))
            if data is None:
                self._send(handler, 404, b"", body, {"X-Error-Code": "EntryNotFound" if at else "RevisionNotFound"})
            else:
                self._send(handler, 200, data, body, {"X-Repo-Commit": at.commit, "ETag": f'"{git_oid(data)}"',
                                                      "Content-Type": "application/octet-stream"})
            return True
        return False

    def answer_post(self, handler: BaseHTTPRequestHandler) -> None:
        """Repo creation, card YAML validation, preupload and commits (to main, a PR or a new PR)."""
        url = urlparse(handler.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        self.requests.append((handler.command, url.path))
        payload = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        self._see(handler, url, payload)
        with self.lock:
            self._answer_post(handler, url, parts, payload)

    def _answer_post(self, handler, url, parts: list[str], payload: bytes) -> None:
        json_type = {"Content-Type": "application/json"}
        if parts == ["api", "repos", "create"]:
            request = json.loads(payload)
            self.created.append(request)
            kind, repo_id = request.get("type") or "model", f"{request['organization']}/{request['name']}"
            prefix = "" if kind == "model" else f"{kind}s/"
            answer = json.dumps({"url": f"{self.url}/{prefix}{repo_id}"}).encode()
            if repo_id in self._store(kind):
                return self._send(handler, 409, answer, True, json_type)
            self._store(kind)[repo_id] = Repo({})
            return self._send(handler, 200, answer, True, json_type)
        if parts == ["api", "validate-yaml"]:
            front = json.loads(payload)["content"].split("---\n")[1]
            ok = isinstance(yaml.safe_load(front), dict)
            return self._send(handler, 200 if ok else 400, json.dumps({"errors": [] if ok else [{"message": "bad"}]}).encode(),
                              True, json_type)
        if parts[:1] == ["api"] and len(parts) >= 6 and parts[1] in KINDS and parts[4] in ("preupload", "commit"):
            kind, repo_id, revision = KINDS[parts[1]], "/".join(parts[2:4]), "/".join(parts[5:])
            at = self._at(kind, repo_id, revision)
            if at is None:
                missing = "RepoNotFound" if repo_id not in self._store(kind) else "RevisionNotFound"
                return self._send(handler, 404, b'{"error": "not found"}', True, {"X-Error-Code": missing})
            if parts[4] == "preupload":
                files = [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None}
                         for f in json.loads(payload)["files"]]
                return self._send(handler, 200, json.dumps({"files": files}).encode(), True, json_type)
            if self.refuse_commit is not None:
                return self._send(handler, 403, json.dumps({"error": self.refuse_commit}).encode(), True, json_type)
            if self.on_commit:
                self.lock.release()  # the hook may start processes that call this server
                try:
                    self.on_commit(kind, repo_id)
                finally:
                    self.lock.acquire()
            return self._commit(handler, kind, repo_id, revision, at, url, payload)
        self._send(handler, 404, b"", True, {})

    def _commit(self, handler, kind: str, repo_id: str, revision: str, at: Repo, url, payload: bytes) -> None:
        lines = [json.loads(line) for line in payload.splitlines() if line.strip()]
        files = {line["value"]["path"]: base64.b64decode(line["value"]["content"])
                 for line in lines if line["key"] == "file"}
        deleted = [line["value"]["path"] for line in lines if line["key"] == "deletedFile"]
        create_pr = parse_qs(url.query).get("create_pr") == ["1"]
        prefix = "" if kind == "model" else f"{kind}s/"
        pull_url = None
        if create_pr:
            pulls = self.pulls.setdefault((kind, repo_id), [])
            pull = {"num": len(pulls) + 1, "title": lines[0]["value"]["summary"], "author": self.user,
                    "status": "open", "repo": Repo(dict(at.files), commit=at.commit)}
            pulls.append(pull)
            at, revision = pull["repo"], f"refs/pr/{pull['num']}"
        if revision.startswith("refs/pr/"):
            pull_url = f"{self.url}/{prefix}{repo_id}/discussions/{revision.removeprefix('refs/pr/')}"
        at.apply(files, deleted)
        self.commits.append({"kind": kind, "repo": repo_id, "revision": revision, "create_pr": create_pr,
                             "summary": lines[0]["value"]["summary"], "files": files, "deleted": deleted})
        answer = {"commitUrl": f"{self.url}/{prefix}{repo_id}/commit/{at.commit}", "commitOid": at.commit,
                  "pullRequestUrl": pull_url}
        self._send(handler, 200, json.dumps(answer).encode(), True, {"Content-Type": "application/json"})

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
