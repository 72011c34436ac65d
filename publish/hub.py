"""The one way hallubench writes to the Hub: a token resolved once (argument, HF_TOKEN or the login) that
only ever goes into HfApi's Authorization header and is masked in any error, a dataset repo created if
missing, each upload one commit, and a pull request opened once: publishing again commits to the open one."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, get_token
from huggingface_hub.community import Discussion

from hallubench.errors import PublishError
from hallubench.publish.checks import check_repo_id
from hallubench.redact import redact
from hallubench.writes import redacted_bytes


def resolve_token(token: str | None) -> str:
    """The given token, else HF_TOKEN, else the huggingface_hub login; PublishError when there is none."""
    token = token or get_token()
    if not token:
        raise PublishError("no Hugging Face token: pass --token, set HF_TOKEN or log in with `hf auth login`")
    return token


class DatasetRepo:
    """A Hub dataset repo to publish into (and, through `commit(repo_id=...)`, a model repo's PR)."""

    def __init__(self, repo_id: str, *, token: str | None = None, private: bool | None = None,
                 endpoint: str | None = None):
        self.repo_id, self.private = check_repo_id(repo_id, "--repo"), private
        self.token = resolve_token(token)
        self.api = HfApi(endpoint=endpoint, token=self.token, library_name="hallubench")

    @contextmanager
    def errors(self, what: str) -> Iterator[None]:
        """Hub and network errors as PublishError saying `what` failed, the token masked should one echo it."""
        try:
            yield
        except (OSError, httpx2.HTTPError, ValueError) as err:
            raise PublishError(f"{what}: {str(err).replace(self.token, '***')}") from None

    def create(self) -> str:
        """Create the dataset repo unless it exists (a new one's visibility: `private`, else the Hub default); its url."""
        return str(self.api.create_repo(self.repo_id, repo_type="dataset", private=self.private, exist_ok=True))

    def commit(self, files: dict[str, bytes], message: str, *, repo_id: str | None = None, repo_type: str = "dataset",
               delete: list[str] = (), **options: Any):
        """One commit adding `files` (path in repo -> bytes) to this repo, or to `repo_id` of `repo_type`, and
        removing the paths in `delete`."""
        operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=redacted_bytes(path, data))  # no credential
                      for path, data in files.items()]
        operations += [CommitOperationDelete(path_in_repo=path) for path in delete]
        return self.api.create_commit(repo_id or self.repo_id, operations, repo_type=repo_type, commit_message=redact(message),
                                      **options)

    def files(self, repo_id: str | None = None, repo_type: str = "dataset", revision: str | None = None) -> list[str]:
        """The files of this repo (or `repo_id`) at `revision`; empty when the repo does not exist yet."""
        from huggingface_hub.errors import RepositoryNotFoundError

        try:
            return self.api.list_repo_files(repo_id or self.repo_id, repo_type=repo_type, revision=revision)
        except RepositoryNotFoundError:
            return []

    def open_pull_request(self, repo_id: str, title: str, repo_type: str = "model") -> Discussion | None:
        """The open pull request titled `title` that this token's user opened on `repo_id`, or None."""
        me = self.api.whoami()["name"]
        return next((pr for pr in self.api.get_repo_discussions(repo_id, author=me, repo_type=repo_type,
                                                               discussion_type="pull_request", discussion_status="open")
                     if pr.title == title), None)
