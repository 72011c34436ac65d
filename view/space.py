"""Upload a built site as a static Hugging Face Space (card YAML `sdk: static`) in one commit, through the project's
one Hub path (publish/hub.py: the token from the argument, HF_TOKEN or the login, masked in any error)."""
from __future__ import annotations

from pathlib import Path

import yaml

from hallubench import confined
from hallubench.confined import Folder
from hallubench.errors import PublishError
from hallubench.publish.hub import DatasetRepo

CARD = "README.md"


def space_card(title: str, mini: bool) -> str:
    """The Space's README.md: the YAML that makes it a static Space serving index.html, and what it shows."""
    meta = {"title": title[:60], "emoji": "🔎", "colorFrom": "blue", "colorTo": "yellow", "sdk": "static",
            "app_file": "index.html", "pinned": False,
            "tags": ["hallubench", "hallucination", "leaderboard"] + (["hallubench-mini-data"] if mini else [])}
    mark = ("\n**MINI DATA**: these results were made on the embedded synthetic mini benchmarks; they check the pipeline "
            "and measure nothing about the models.\n") if mini else ""
    return ("---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n\n"
            f"# {title}\n\nMade with hallubench: a CrossCheck leaderboard per board of the ranking (intervals, sign "
            "tests, CSV and JSON downloads), a models x benchmarks grid of the runs (each score with its 95 % interval "
            "and the data's marks), the papers' published tables on a page of their own, and every model's sentences "
            f"coloured by their CrossCheck score next to the item's media and human reference.\n{mark}")


def push_site(site: Path, space_id: str, *, mini: bool, allow_mini_data: bool = False, token: str | None = None,
              private: bool | None = None, endpoint: str | None = None) -> tuple[str, str]:
    """Commit every file of the site `site` plus its card to the static Space `space_id` (created if missing);
    (Space url, commit url). A site of mini-data runs or ranking is refused unless `allow_mini_data`."""
    site, door = Path(site), Folder(site)
    if not door.is_file("index.html"):
        raise PublishError(f"{site} holds no index.html: build the site first (`hallubench view RUN_DIR... --out {site}`)")
    if mini and not allow_mini_data:
        raise PublishError(f"{site} shows runs made on the embedded synthetic mini benchmarks, so it measures nothing "
                           "about the models; run on the real benchmarks, or pass --allow-mini-data to push it anyway, "
                           "marked as mini data")
    # Only bytes read through the door are uploaded: a link out of the site, or a FIFO in it, refuses the push.
    files = {name: door.read_bytes(name, confined.MEDIA) for name in door.files() if Path(name).name != CARD}
    files[CARD] = space_card("hallubench leaderboard", mini).encode("utf-8")
    hub = DatasetRepo(space_id, token=token, private=private, endpoint=endpoint)
    with hub.errors(f"publishing site {site} to Space {space_id}"):
        url = hub.api.create_repo(space_id, repo_type="space", space_sdk="static", private=private, exist_ok=True)
        commit = hub.commit(files, "hallubench leaderboard site", repo_id=space_id, repo_type="space")
    return str(url), commit.commit_url
