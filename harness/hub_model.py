"""A checkpoint named by Hub id, checked before any weights load: in the cache, or the Hub answers within seconds.

Without this, a model id that is not cached on a machine without network hangs in transformers' download path
(huggingface_hub's default timeouts and retries: over 100 s with nothing printed) or fails deep inside it. The
check reads the cache (`snapshot_download(local_files_only=True)`: no network), then, unless HF_HUB_OFFLINE says
there is none, asks the endpoint once with a short timeout. Any HTTP answer (a 404 included: the loader says
what is wrong with the id) means the Hub is reachable; only no answer is refused here."""
from __future__ import annotations

from hallubench.errors import ConfigError

PROBE_TIMEOUT = 5.0  # seconds for the one request to the endpoint (connect and read)


def cached(repo_id: str, revision: str | None) -> bool:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        snapshot_download(repo_id, revision=revision, local_files_only=True)
    except (LocalEntryNotFoundError, OSError, ValueError):
        return False
    return True


def check_hub_model(repo_id: str, revision: str | None, flag: str) -> None:
    """ConfigError naming `repo_id` and what to do when it is not in the Hub cache and the Hub cannot be reached
    (HF_HUB_OFFLINE set, or no answer within PROBE_TIMEOUT)."""
    from huggingface_hub import constants
    from huggingface_hub.utils import get_session

    if cached(repo_id, revision):
        return
    todo = (f"download it where there is network (`hf download {repo_id}`, into the same HF_HOME) or give the "
            "folder of a saved checkpoint as pretrained=")
    if constants.HF_HUB_OFFLINE:
        raise ConfigError(f"{flag}: pretrained={repo_id} is not in the Hub cache ({constants.HF_HUB_CACHE}) and "
                          f"HF_HUB_OFFLINE is set; {todo}")
    url = f"{constants.ENDPOINT}/api/models/{repo_id}"
    try:
        get_session().head(url, timeout=PROBE_TIMEOUT, follow_redirects=True)
    except Exception as err:  # no answer at all (refused, timed out, no route, proxy): any HTTP status is one
        raise ConfigError(f"{flag}: pretrained={repo_id} is not in the Hub cache ({constants.HF_HUB_CACHE}) and the "
                          f"Hub ({constants.ENDPOINT}) did not answer within {PROBE_TIMEOUT:.0f} s "
                          f"({type(err).__name__}); {todo}, or set HF_HUB_OFFLINE=1 on machines without "
                          "network") from None
