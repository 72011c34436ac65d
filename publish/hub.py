"""The one way hallubench writes to the Hub: a token resolved once (argument, HF_TOKEN or the login) that
only ever goes into HfApi's Authorization header and is masked in any error, a dataset repo created if
missing, and each upload one commit."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
from huggingface_hub import CommitOperationAdd, HfApi, get_token

from hallubench.errors import PublishError


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
        self.repo_id, self.private = repo_id, private
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
               **options: Any):
        """One commit adding `files` (path in repo -> bytes) to this repo, or to `repo_id` of `repo_type`."""
        operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=data) for path, data in files.items()]
        return self.api.create_commit(repo_id or self.repo_id, operations, repo_type=repo_type, commit_message=message,
                                      **options)
