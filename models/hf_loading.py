"""Loading a transformers checkpoint for the hf adapter: its family and Auto class, dtype and attention kernel,
processor, weights, and an id of the weights for the adapter's fingerprint; and the refusal of pickled code in a
checkpoint's weights, which every other checkpoint load shares (judges, search embedder, vision tools)."""
from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from hallubench.errors import UnsafeCheckpointError
from hallubench.registry import MODEL_FAMILIES

from .families import TEXT_AUTO_CLASS, Family, auto_class_for, family_of, needs_newer_transformers

ATTENTION = ("sdpa", "flash_attention_2", "eager")
STATIC_CACHES = ("static", "offloaded_static")  # fixed-size caches: transformers compiles the decoding step
PROMPT_BUCKET = 64  # prompts left-padded to a multiple of this with a static cache: fewer shapes to compile


def _on_cuda(device: str) -> bool:
    return device.startswith("cuda") or (device == "auto" and torch.cuda.is_available())


def resolve_dtype(dtype: str, device: str) -> str:
    """`auto` on CUDA: bfloat16 where the GPU supports it, else float16; elsewhere the checkpoint's own dtype."""
    if dtype != "auto" or not _on_cuda(device):
        return dtype
    return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"


def resolve_attention(attn_implementation: str | None, dtype: str, device: str) -> str | None:
    """The attention kernel to ask for: the caller's, else flash-attention 2 on CUDA in 16-bit when the
    flash_attn package is installed, else None (transformers' default: sdpa where the model supports it)."""
    if attn_implementation is not None:
        if attn_implementation not in ATTENTION:
            raise ValueError(f"attn_implementation must be one of {', '.join(ATTENTION)}; got {attn_implementation!r}")
        return attn_implementation
    from transformers.utils import is_flash_attn_2_available

    if _on_cuda(device) and dtype in ("bfloat16", "float16") and is_flash_attn_2_available():
        return "flash_attention_2"
    return None


def resolve_cache(requested: str | None, model: torch.nn.Module, family: Family | None, device: str,
                  spread: bool) -> str | None:
    """The cache implementation `generate` gets: the caller's; else "static" (a fixed-size cache, so transformers
    compiles the decoding step: CUDA graphs, about half the decode time of a 7B model, tests/perf/README.md) on one
    CUDA device where transformers can compile the model whole (`_can_compile_fullgraph`) and the family table does
    not record that it fails (`Family.compiled_decoding`, from tests/perf/check_gpu_paths.py); else None
    (transformers' dynamic cache)."""
    if requested is not None:
        return requested
    if spread or not _on_cuda(device) or not getattr(model, "_can_compile_fullgraph", False):
        return None
    return None if family is not None and family.compiled_decoding is False else "static"


def resolve_auto_class(path: str, config: Any) -> tuple[Family | None, str]:
    """The checkpoint's family (None for a model_type the table does not list) and the class to load it with;
    ValueError naming what is supported when transformers has no class for it or the family is refused."""
    family = family_of(config.model_type)
    if family is not None and family.unsupported:
        raise ValueError(f"{path}: {family.name} ({config.model_type}) is not supported by the hf adapter: "
                         f"{family.unsupported}")
    if family is not None and (too_old := needs_newer_transformers(family)):
        raise ValueError(f"{path}: {too_old}")
    auto_class = auto_class_for(config)
    if auto_class is None:
        raise ValueError(f"{path}: model_type {config.model_type!r} is not supported by the hf adapter; supported: "
                         f"{', '.join(sorted(MODEL_FAMILIES))} and any text-only causal LM, or any model_type "
                         "transformers loads with AutoModelForMultimodalLM or AutoModelForImageTextToText "
                         "(`hallubench models` lists the families)")
    return family, auto_class


def is_text_only(family: Family | None, auto_class: str) -> bool:
    """A text-only causal LM: its "processor" is its tokenizer. (Gemma 3 and Phi-4-multimodal are also in the
    causal-LM mapping, but the multimodal mappings come first, so they are not loaded as text models.)"""
    return auto_class == TEXT_AUTO_CLASS and not (family and family.modalities)

PICKLED = (".bin", ".pt", ".pth", ".pkl", ".ckpt")  # weight files torch.load unpickles


@contextmanager
def refusing_pickled_code(path: str | os.PathLike) -> Iterator[None]:
    """Around every load of a user-given checkpoint `path` (the hf adapter's, the NLI and embedding judges', the
    search adapter's embedder, the vision tools'): torch's weights_only load meeting a pickled object that is no
    tensor (code) becomes UnsafeCheckpointError naming the checkpoint and its pickled files, in one line."""
    try:
        yield
    except pickle.UnpicklingError:
        folder = Path(path)
        pickled = sorted(p.name for p in folder.glob("*") if p.suffix in PICKLED) if folder.is_dir() else []
        raise UnsafeCheckpointError(
            f"{path}: its weights{' (' + ', '.join(pickled) + ')' if pickled else ''} are pickled and hold objects "
            "other than tensors, which loading them would run as code; they are refused unread. Use a checkpoint "
            "saved as .safetensors (save_pretrained's default)") from None


def load_model(path: str, config: Any, family: Family | None, auto_class: str, **kwargs: Any) -> torch.nn.Module:
    """`from_pretrained` with the family's class; a family `part` (a full Omni checkpoint's thinker) loads only
    that part, from its sub-config."""
    import transformers as tf

    if family is not None and family.part and getattr(config, family.part, None) is not None:
        config = getattr(config, family.part)
    with refusing_pickled_code(path):
        return getattr(tf, auto_class).from_pretrained(path, config=config, **kwargs)


WEIGHT_SAMPLE_BYTES = 1 << 20


def weights_id(path: str, config: Any) -> str | None:
    """Commit hash of a Hub snapshot, else a digest of a local folder's configs and weight files (size, first
    and last MiB: retraining in place changes them; reading whole multi-GB files at every start would not pay)."""
    commit = getattr(config, "_commit_hash", None)
    if commit:
        return commit
    folder = Path(path)
    if not folder.is_dir():
        return None
    digest = hashlib.sha256((folder / "config.json").read_bytes())
    if (folder / "generation_config.json").is_file():  # decoding defaults such as repetition_penalty
        digest.update((folder / "generation_config.json").read_bytes())
    for weights in sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin")):
        size = weights.stat().st_size
        digest.update(f"{weights.name}:{size}".encode())
        with weights.open("rb") as handle:
            digest.update(handle.read(WEIGHT_SAMPLE_BYTES))
            handle.seek(max(size - WEIGHT_SAMPLE_BYTES, 0))
            digest.update(handle.read(WEIGHT_SAMPLE_BYTES))
    return digest.hexdigest()[:16]
