"""Upload a ranking folder to a Hub dataset repo in one commit, through publish/hub.py (token from the argument,
HF_TOKEN or login; only ever in the Authorization header; masked in errors).

The folder is read through ranking/report.py's `reading_ranking` (holding its lock, harness/folder_lock.py), so a
`rank` writing it, or one killed half-way, refuses the push, a `rank` starting meanwhile is refused, and files that
are not those of one ranking are not pushed. A ranking of runs made on the embedded synthetic mini benchmarks
(crosscheck.json `mini_data`) is refused unless `allow_mini_data`; then its card is tagged so, and its
leaderboard (the card's text) says MINI DATA in its title and first line."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from hallubench import confined
from hallubench.confined import Folder
from hallubench.errors import PublishError
from hallubench.publish.hub import DatasetRepo
from hallubench.ranking.board import mini_runs
from hallubench.ranking.report import FILES, reading_ranking
from hallubench.writes import redacted_bytes

# The tables as `datasets` configs, so `load_dataset(repo, "documents")` reads the pushed ranking. Each is also
# pushed as parquet, which the configs name: `datasets` reads every config of a repo with one builder, inferred
# from the files' most common format, so a JSON-lines table beside CSV ones was parsed as CSV.
CONFIGS = {"leaderboard": "leaderboard.csv", "documents": "documents.csv", "sentences": "sentences.jsonl"}
CROSSCHECK_JSON = "crosscheck.json"


def card_header(mini: bool) -> str:
    """The card's YAML front matter: tags (a mini ranking's marked) and the tables' configs."""
    meta = {
        "tags": ["hallubench", "crosscheck", "hallucination"] + (["hallubench-mini-data"] if mini else []),
        "configs": [{"config_name": name, **({"default": True} if name == "leaderboard" else {}),
                     "data_files": [{"split": "train", "path": f"data/{name}.parquet"}]} for name in CONFIGS],
    }
    return "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n"


def _mini_data(folder: Path, data: bytes) -> dict[str, Any]:
    try:
        return json.loads(data).get("mini_data") or {}
    except (ValueError, AttributeError) as err:
        raise PublishError(f"{folder / CROSSCHECK_JSON}: {err}; make the ranking again with `hallubench rank`") from None


def _parquet(name: str, data: bytes) -> bytes:
    """The table `name` (read through the door) as parquet, made from its bytes: what is pushed is what was read,
    redacted first (parquet is binary: the upload's own redaction of text files does not reach inside it)."""
    source = io.BytesIO(redacted_bytes(name, data))
    table = pd.read_json(source, lines=True, precise_float=True) if name.endswith(".jsonl") else pd.read_csv(source)
    out = io.BytesIO()
    table.to_parquet(out, index=False)
    return out.getvalue()


def push_ranking(folder: Path, repo_id: str, *, token: str | None = None, private: bool | None = None,
                 endpoint: str | None = None, allow_mini_data: bool = False) -> tuple[str, str]:
    """Commit the ranking files plus a README.md card (YAML `configs:` for the tables, the leaderboard and its
    chart); (repo url, commit url). `allow_mini_data` pushes a ranking of mini-benchmark runs (refused otherwise)."""
    with reading_ranking(Path(folder), "push-to-hub"):
        return _push(Path(folder), repo_id, token=token, private=private, endpoint=endpoint,
                     allow_mini_data=allow_mini_data)


def _push(folder: Path, repo_id: str, *, token: str | None, private: bool | None, endpoint: str | None,
          allow_mini_data: bool) -> tuple[str, str]:
    door = Folder(folder)
    missing = [name for name in FILES if not door.is_file(name)]
    if missing:
        raise PublishError(f"{folder} is not a ranking folder (no {', '.join(missing)}); make it with "
                           "`hallubench rank` or `hallubench crosscheck`")
    files = {name: door.read_bytes(name, confined.RECORDS) for name in FILES}  # the only bytes pushed: read once
    mini = _mini_data(folder, files[CROSSCHECK_JSON])
    if mini and not allow_mini_data:
        raise PublishError(
            f"{folder} ranks runs made on the embedded synthetic mini benchmarks ({mini_runs(mini)}), so it measures nothing "
            "about the models. Rank runs on the real benchmarks (`hallubench build`, then --data-dir), or pass "
            "--allow-mini-data to push it anyway, marked as mini data (ranking again reuses the cached judgments)")
    hub = DatasetRepo(repo_id, token=token, private=private, endpoint=endpoint)
    files.update({f"data/{name}.parquet": _parquet(source, files[source]) for name, source in CONFIGS.items()})
    card = card_header(bool(mini)) + files["leaderboard.md"].decode("utf-8") + "\n![leaderboard](leaderboard.png)\n"
    files["README.md"] = card.encode("utf-8")
    with hub.errors(f"publishing ranking {folder} to dataset repo {repo_id}"):
        url = hub.create()
        commit = hub.commit(files, "hallubench CrossCheck ranking")
    return url, commit.commit_url
