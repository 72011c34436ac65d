"""The authors' released files that the reproductions read, pinned in sources.json (repository, commit, path, sha256
and size of each) and laid out as tests/conftest.py's reference folder is (`sac3/prime-500-SC.json`, ...).

A reproduction reads them from a folder the user gives (`--references DIR`: no network at all) or from the cache
under HF_HOME, where missing or altered files are fetched from the pinned commit (one bounded GET each, the
Hub client's retries and timeout; the base URL is HALLUBENCH_REFERENCES_ENDPOINT, as HF_ENDPOINT is the Hub's).
Every file is checked against its pin before it is used: a file whose bytes differ is refused, never read, and a
fetched one is written only once its hash holds. With HF_HUB_OFFLINE set nothing connects.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from hallubench.errors import ConfigError, ReferenceFilesError

ENDPOINT_ENV = "HALLUBENCH_REFERENCES_ENDPOINT"
DEFAULT_ENDPOINT = "https://raw.githubusercontent.com"
TIMEOUT = 30.0  # seconds for one GET (connect and whole body); the largest file is about 8 MB
FETCH_HINT = "`hallubench reproduce --fetch-only` (with network) or `--references DIR` (a folder laid out like it)"


@dataclass(frozen=True)
class Pin:
    """One reference file: its name in the reference folder, where upstream keeps it, and its bytes' sha256."""

    local: str
    repo: str
    commit: str
    path: str
    sha256: str
    size: int
    convert: str | None = None  # "python-literal-to-json": upstream keeps it as a Python literal, read with ast
    upstream_sha256: str | None = None
    upstream_size: int | None = None

    def url(self, endpoint: str) -> str:
        return f"{endpoint.rstrip('/')}/{self.repo}/{self.commit}/{self.path}"


@functools.cache
def pins() -> dict[str, Pin]:
    """Reference file name -> its pin, from the package's sources.json."""
    sources = json.loads(resources.files(__package__).joinpath("sources.json").read_text(encoding="utf-8"))
    return {local: Pin(local=local, repo=source["repo"], commit=source["commit"], **entry)
            for source in sources["sources"] for local, entry in source["files"].items()}


def cache_folder() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HOME) / "hallubench" / "references"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _python_literal_to_json(source: bytes, pin: Pin) -> bytes:
    """The one assignment of a Python file (`metrics = {...}`) as JSON, read with ast.literal_eval: no code runs."""
    try:
        (assignment,) = [node for node in ast.parse(source).body if isinstance(node, ast.Assign)]
        value = ast.literal_eval(assignment.value)
    except (SyntaxError, ValueError) as err:
        raise ReferenceFilesError(f"{pin.path} of {pin.repo} is not one Python literal ({err})") from None
    return json.dumps(value, indent=1).encode()


class References:
    """A reference folder: `path(name)` is the checked file, fetched first when the folder is the cache."""

    def __init__(self, folder: Path, *, cache: bool, endpoint: str | None = None) -> None:
        from huggingface_hub import constants

        self.folder, self.cache = Path(folder), cache
        self.fetch = cache and not constants.HF_HUB_OFFLINE
        self.endpoint = endpoint or os.environ.get(ENDPOINT_ENV) or DEFAULT_ENDPOINT
        self._checked: set[str] = set()

    def __repr__(self) -> str:
        return f"References({str(self.folder)!r})"

    def path(self, name: str) -> Path:
        self.ensure([name])
        return self.folder / name

    def read_json(self, name: str) -> Any:
        return json.loads(self.path(name).read_text(encoding="utf-8"))

    def missing(self, names: Iterable[str]) -> list[str]:
        """The names whose file is absent or differs from its pin (altered files included)."""
        return [name for name in names if name not in self._checked and not self._holds(name)]

    def ensure(self, names: Iterable[str], progress: Any = None) -> None:
        """Every named file present and equal to its pin, fetching the others into the cache; otherwise one
        ReferenceFilesError naming them and what to do. `progress(name)` is called after each file."""
        names = list(names)
        unknown = [name for name in names if name not in pins()]
        if unknown:
            raise ValueError(f"no pin for reference file(s) {', '.join(unknown)} in reproduce/sources.json")
        missing = self.missing(names)
        if missing and not self.fetch:
            raise ReferenceFilesError(self._absent(missing))
        for name in names:
            if name in missing:
                self._download(pins()[name])
            self._checked.add(name)
            if progress is not None:
                progress(name)

    def _holds(self, name: str) -> bool:
        pin, file = pins()[name], self.folder / name
        if file.is_symlink() or not file.is_file():
            return False
        if file.stat().st_size != pin.size:
            return self._differs(pin, f"{pin.size} bytes expected, {file.stat().st_size} found")
        digest = _sha256(file.read_bytes())
        return digest == pin.sha256 or self._differs(pin, f"sha256 {digest[:12]}…, pinned {pin.sha256[:12]}…")

    def _differs(self, pin: Pin, why: str) -> bool:
        if self.cache:  # the cache's own copy: fetched again over it
            return False
        raise ReferenceFilesError(f"{self.folder / pin.local} is not the authors' file ({why}): it should be "
                                  f"{pin.path} of {pin.repo} at {pin.commit[:7]}; refusing it")

    def _absent(self, missing: list[str]) -> str:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        if self.cache:
            return (f"{len(missing)} reference file(s) are not in {self.folder} ({shown}) and HF_HUB_OFFLINE is set, "
                    f"so none is fetched; get them with {FETCH_HINT}")
        return f"{len(missing)} reference file(s) are missing from {self.folder} ({shown}); get them with {FETCH_HINT}"

    def _download(self, pin: Pin) -> None:
        from huggingface_hub.utils import http_backoff

        url = pin.url(self.endpoint)
        expected_sha, expected_size = pin.upstream_sha256 or pin.sha256, pin.upstream_size or pin.size
        try:
            response = http_backoff("GET", url, max_retries=2, base_wait_time=0.5, max_wait_time=2,
                                    timeout=TIMEOUT, follow_redirects=True)
        except Exception as err:  # refused, timed out, no route, offline mode: every one a failed fetch
            raise ReferenceFilesError(f"could not fetch {pin.local} from {url} ({type(err).__name__}); "
                                      f"check the network, or get the files with {FETCH_HINT}") from None
        data = response.content
        if response.status_code != 200:
            raise ReferenceFilesError(f"fetching {pin.local} from {url} answered HTTP {response.status_code}; "
                                      f"set {ENDPOINT_ENV} to a mirror, or use --references DIR")
        if len(data) != expected_size or _sha256(data) != expected_sha:
            raise ReferenceFilesError(f"{url} is not the pinned file ({len(data)} bytes, sha256 "
                                      f"{_sha256(data)[:12]}…; pinned {expected_size} bytes, {expected_sha[:12]}…); "
                                      "refusing it, nothing written")
        if pin.convert == "python-literal-to-json":
            data = _python_literal_to_json(data, pin)
            if _sha256(data) != pin.sha256:
                raise ReferenceFilesError(f"{pin.local}: converting {url} gives other bytes than pinned; refusing it")
        self._write(pin.local, data)

    def _write(self, name: str, data: bytes) -> None:
        # Not hallubench.writes.write_bytes_atomically: that one redacts text files, which would change the authors'
        # bytes after their hash was checked; these are written exactly as pinned.
        target = self.folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, target)
        except OSError as err:
            Path(temporary).unlink(missing_ok=True)
            raise ReferenceFilesError(f"could not write {target} ({err.strerror or err})") from None


def references(folder: Path | str | None = None) -> References:
    """The folder the user gave (checked, never fetched into), else the cache (fetched into unless offline)."""
    if folder is not None:
        if not Path(folder).is_dir():
            raise ConfigError(f"--references {folder}: no such folder; give a folder laid out like the reference data "
                              "(sac3/, crosscheck_wikibio/, ...), or leave it out to fetch the files")
        return References(Path(folder), cache=False)
    return References(cache_folder(), cache=True)
