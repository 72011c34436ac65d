"""Official releases and built datasets from the Hugging Face Hub, through `huggingface_hub.snapshot_download`.

`hallubench build <benchmark>` without --source downloads the benchmark's official Hub release (its builder's HUB_RELEASE);
`--source hub:<repo_id>[@revision]` names another repo or revision. The snapshot goes to the huggingface_hub
cache (HF_HOME, HF_ENDPOINT and HF_TOKEN apply as everywhere), so a second build reuses it; the resolved
commit is recorded in the built dataset's card. Offline or refused, the error says what to download and where.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from hallubench.builders.base import ReleaseBuilder
from hallubench.config import HUB_REPO_ID as REPO_ID
from hallubench.errors import BuildError

HUB_PREFIX = "hub:"


@dataclass(frozen=True)
class Snapshot:
    """A Hub repo downloaded at one commit: where it is on disk, which repo and the commit it resolved to."""

    path: Path
    repo_id: str
    commit: str


def parse_repo(text: str) -> tuple[str, str | None] | None:
    """(repo_id, revision) from "hub:org/name[@revision]" or "org/name[@revision]"; None if it is not one."""
    repo, _, revision = text.removeprefix(HUB_PREFIX).partition("@")
    if not REPO_ID.fullmatch(repo) or ".." in repo or (revision == "" and "@" in text):
        return None
    return repo, revision or None


def download(repo_id: str, revision: str | None, what: str, manual: str, files: tuple[str, ...] | None = None,
             mirrors: tuple[str, ...] = ()) -> Snapshot:
    """snapshot_download of the dataset repo (only `files`, as allow_patterns, when given), or where no such repo
    exists, of each of `mirrors` in turn (the same release moved elsewhere); BuildError saying what to download and
    where on failure.

    `what` names the content for messages; `manual` says what to do with a copy made by hand.
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (GatedRepoError, HfHubHTTPError, LocalEntryNotFoundError,
                                        RepositoryNotFoundError, RevisionNotFoundError)

    at = f"@{revision}" if revision else ""
    tried = (repo_id, *mirrors)
    for repo_id in tried:
        by_hand = (f"Download it yourself (`hf download {repo_id} --repo-type dataset"
                   f"{f' --revision {revision}' if revision else ''} --local-dir DIR`, or from "
                   f"https://huggingface.co/datasets/{repo_id}) and {manual}.")
        try:
            path = Path(snapshot_download(repo_id, repo_type="dataset", revision=revision,
                                          allow_patterns=list(files) if files else None))
            return Snapshot(path, repo_id, path.name)
        except GatedRepoError as err:
            raise BuildError(f"{what}: the Hub repo {repo_id} is gated: accept its terms at "
                             f"https://huggingface.co/datasets/{repo_id} and log in (`hf auth login` or HF_TOKEN). "
                             f"{by_hand} ({_first_line(err)})") from None
        except RevisionNotFoundError:
            raise BuildError(f"{what}: the Hub repo {repo_id} has no revision {revision!r}. {by_hand}") from None
        except RepositoryNotFoundError:
            if repo_id != tried[-1]:
                continue
            raise BuildError(f"{what}: no Hub dataset repo {' or '.join(tried)} (or it is private: log in with "
                             f"`hf auth login`). {by_hand}") from None
        except (LocalEntryNotFoundError, HfHubHTTPError, OSError) as err:
            raise BuildError(f"{what}: could not download {repo_id}{at} from the Hub ({_first_line(err)}). "
                             f"{by_hand}") from None
    raise AssertionError("unreachable: the last repo tried returns or raises")


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def fetch_release(builder_cls: type[ReleaseBuilder], source: str | None) -> Snapshot:
    """The official release of a benchmark from the Hub: its builder's HUB_RELEASE, or `source` ("hub:org/name[@rev]").
    Either one of the release's known copies (HUB_RELEASE and HUB_MIRRORS) is looked for in the others too when its
    repo is gone; only the files the builder reads (HUB_FILES) are downloaded."""
    benchmark = builder_cls.NAME
    if source is None:
        if builder_cls.HUB_RELEASE is None:
            raise BuildError(f"{benchmark} has no official release on the Hub; download {builder_cls.ELSEWHERE} and "
                             f"pass its folder as --source.")
        repo: tuple[str, str | None] | None = (builder_cls.HUB_RELEASE, None)
    else:
        repo = parse_repo(source)
        if repo is None:
            raise BuildError(f"--source {source}: expected {HUB_PREFIX}<org>/<name>[@revision]")
    copies = (builder_cls.HUB_RELEASE, *builder_cls.HUB_MIRRORS)
    mirrors = tuple(copy for copy in copies if copy != repo[0]) if repo[0] in copies else ()
    return download(*repo, what=f"the {benchmark} release",
                    manual=f"pass that folder as --source (`hallubench build {benchmark} --source DIR --output-dir ...`)",
                    files=builder_cls.HUB_FILES, mirrors=mirrors)
