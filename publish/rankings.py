"""Upload a ranking folder to a Hub dataset repo in one commit, through publish/hub.py (token from the argument,
HF_TOKEN or login; only ever in the Authorization header; masked in errors).

The folder is read holding its lock (harness/folder_lock.py), so a `rank` writing it refuses the push and a
`rank` starting meanwhile is refused."""
from __future__ import annotations

from pathlib import Path

import yaml

from hallubench.errors import PublishError
from hallubench.harness import folder_lock
from hallubench.publish.hub import DatasetRepo
from hallubench.ranking.report import FILES

# The tables as `datasets` configs, so `load_dataset(repo, "documents")` reads the pushed ranking.
CONFIGS = {"leaderboard": "leaderboard.csv", "documents": "documents.csv", "sentences": "sentences.jsonl"}
CARD_META = {
    "tags": ["hallubench", "crosscheck", "hallucination"],
    "configs": [{"config_name": name, **({"default": True} if name == "leaderboard" else {}),
                 "data_files": [{"split": "train", "path": path}]} for name, path in CONFIGS.items()],
}
CARD_HEADER = "---\n" + yaml.safe_dump(CARD_META, sort_keys=False) + "---\n"


@folder_lock.reads_folder("push-to-hub", "folder", "crosscheck.json")
def push_ranking(folder: Path, repo_id: str, *, token: str | None = None, private: bool | None = None,
                 endpoint: str | None = None) -> tuple[str, str]:
    """Commit the ranking files plus a README.md card (YAML `configs:` for the tables, the leaderboard and its
    chart); (repo url, commit url)."""
    folder = Path(folder)
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise PublishError(f"{folder} is not a ranking folder (no {', '.join(missing)}); make it with "
                           "`hallubench rank` or `hallubench crosscheck`")
    files = {name: (folder / name).read_bytes() for name in FILES}
    card = CARD_HEADER + files["leaderboard.md"].decode("utf-8") + "\n![leaderboard](leaderboard.png)\n"
    files["README.md"] = card.encode("utf-8")
    hub = DatasetRepo(repo_id, token=token, private=private, endpoint=endpoint)
    with hub.errors(f"publishing ranking {folder} to dataset repo {repo_id}"):
        url = hub.create()
        commit = hub.commit(files, "hallubench CrossCheck ranking")
    return url, commit.commit_url
