"""transformers adapter: Qwen2.5-Omni (thinker), Qwen2-VL / Qwen2.5-VL / LLaVA-OneVision, Qwen2-Audio, and
any text-only causal LM (AutoModelForCausalLM: the LLM judge's models).

The model class is picked from `config.model_type`; prompts go through the processor's own chat
template (`tokenize=False`), then one `processor(text=, images=, videos=, audio=)` call per batch. A text
model without a chat template gets its messages' text as a bare prompt (as the papers' judges were run).

Media hand-off:
- video: the caller's frames are passed as arrays with `do_sample_frames=False` (the processor only
  resizes; it never re-samples) plus a `VideoMetadata(fps=part.fps, frames_indices=0..T-1)` per clip.
  The seconds-per-temporal-patch used by the time-aligned rotary positions (`second_per_grid_ts` for
  Qwen2.5-VL, `video_second_per_grid` for Qwen2.5-Omni) is set from each clip's own fps.
- audio: resampled to the feature extractor's rate when it differs, passed as `audio=`.
- an AudioPart is its own placeholder, except with `audio_in_video=True` (Qwen2.5-Omni only): an
  AudioPart right after a VideoPart is that video's soundtrack, passed as
  `load_audio_from_video=True, audio_from_video_indices=[...]` so the processor interleaves 2-second
  video/audio chunks, and `generate(use_audio_in_video=True)` builds the matching TMRoPE positions.
"""
from __future__ import annotations

import hashlib
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hallubench.registry import MODEL_FAMILIES, register_family

from .prefix_scoring import first_token_probs
from .protocol import (
    DTYPES,
    AudioPart,
    Conversation,
    GenerationError,
    GenerationSettings,
    ImagePart,
    TextPart,
    VideoPart,
    check_seeds,
    collect,
)

VISION_TEXT_TYPES = ("qwen2_vl", "qwen2_5_vl", "llava_onevision")
OMNI_TYPES = ("qwen2_5_omni", "qwen2_5_omni_thinker")
AUDIO_TYPES = ("qwen2_audio",)
# Which processor attribute handles each media kind; a processor without it cannot take that kind.
SUB_PROCESSORS = {"image": "image_processor", "video": "video_processor", "audio": "feature_extractor"}
PART_KINDS = {ImagePart: "image", VideoPart: "video", AudioPart: "audio"}


ATTENTION = ("sdpa", "flash_attention_2", "eager")


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


@register_family(*OMNI_TYPES)
def _omni(path: str, config: Any, **kwargs: Any) -> torch.nn.Module:
    import transformers as tf

    # Text out only: load the thinker; a full Omni checkpoint's "thinker." weights are remapped by transformers.
    thinker_config = config.thinker_config if config.model_type == "qwen2_5_omni" else config
    return tf.Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(path, config=thinker_config, **kwargs)


@register_family(*VISION_TEXT_TYPES)
def _vision_text(path: str, config: Any, **kwargs: Any) -> torch.nn.Module:
    import transformers as tf

    return tf.AutoModelForImageTextToText.from_pretrained(path, config=config, **kwargs)


@register_family(*AUDIO_TYPES)
def _audio(path: str, config: Any, **kwargs: Any) -> torch.nn.Module:
    import transformers as tf

    return tf.Qwen2AudioForConditionalGeneration.from_pretrained(path, config=config, **kwargs)


def _load_model(path: str, config: Any, revision: str | None, dtype: Any, device: str,
                attn_implementation: str | None = None) -> torch.nn.Module:
    import transformers as tf

    # device "auto": device_map="auto" spreads a model larger than one GPU over all of them (accelerate).
    kwargs = dict(revision=revision, dtype=dtype, device_map=device)
    if attn_implementation is not None:
        kwargs["attn_implementation"] = attn_implementation
    if config.model_type in MODEL_FAMILIES:
        return MODEL_FAMILIES[config.model_type](path, config, **kwargs)
    if is_text_model(config):
        return tf.AutoModelForCausalLM.from_pretrained(path, config=config, **kwargs)
    raise ValueError(f"{path}: model_type {config.model_type!r} is not supported by the hf adapter; "
                     f"supported: {', '.join(sorted(MODEL_FAMILIES))} and any text-only causal LM")


def is_text_model(config: Any) -> bool:
    """A text-only causal LM that AutoModelForCausalLM loads (the multimodal families are handled apart)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return config.model_type not in MODEL_FAMILIES and config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES


WEIGHT_SAMPLE_BYTES = 1 << 20


def _weights_id(path: str, config: Any) -> str | None:
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


class HFChatModel:
    """A transformers chat model, loaded by Hub id or local path, batched with left padding."""

    def __init__(self, model: str, revision: str | None = None, dtype: str = "auto", device: str = "cpu",
                 batch_size: int = 4, processor_kwargs: dict[str, Any] | None = None, audio_in_video: bool = False,
                 attn_implementation: str | None = None):
        """`device`: "cpu", "cuda", "cuda:1", ... or "auto" (device_map="auto": the model spread over every GPU).
        `dtype`: "auto" is bfloat16 on CUDA GPUs that support it (else float16), the checkpoint's dtype elsewhere.
        `attn_implementation`: sdpa, flash_attention_2 or eager; default flash_attention_2 on CUDA in 16-bit when
        flash_attn is installed, else transformers' default (sdpa where supported)."""
        from transformers import AutoConfig, AutoProcessor, AutoTokenizer

        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}; got {dtype!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1; got {batch_size}")
        model = str(Path(model).resolve()) if Path(model).is_dir() else model
        config = AutoConfig.from_pretrained(model, revision=revision)
        dtype = resolve_dtype(dtype, device)
        attention = resolve_attention(attn_implementation, dtype, device)
        torch_dtype = dtype if dtype == "auto" else getattr(torch, dtype)
        self.model = _load_model(model, config, revision, torch_dtype, device, attention).eval()
        self.attn_implementation = getattr(self.model.config, "_attn_implementation", attention)
        self.text_only = is_text_model(config)
        # A text model's "processor" is its tokenizer.
        self.processor = (AutoTokenizer if self.text_only else AutoProcessor).from_pretrained(model, revision=revision)
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:  # many base LMs ship none; batching needs one
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model_type = config.model_type
        if audio_in_video and self.model_type not in OMNI_TYPES:
            raise ValueError(f"audio_in_video=True needs a Qwen2.5-Omni model; {model} is {self.model_type}")
        self.audio_in_video = audio_in_video
        self.device = str(self.model.device)
        self.batch_size = batch_size
        self.processor_kwargs = dict(processor_kwargs or {})
        self.name = f"hf:{model}"
        identity = {"model": model, "revision": revision, "dtype": dtype, "weights": _weights_id(model, config),
                    "model_type": self.model_type, "processor_kwargs": self.processor_kwargs,
                    "audio_in_video": audio_in_video}
        if attention not in (None, "sdpa"):  # another kernel than the default sdpa can change outputs slightly
            identity["attn_implementation"] = attention
        self.fingerprint = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:16]
        self.accepts = frozenset(kind for kind, attribute in SUB_PROCESSORS.items()
                                 if getattr(self.processor, attribute, None) is not None)

    def generate(self, conversations: list[Conversation], settings: GenerationSettings,
                 seeds: list[int] | None = None) -> list[list[str]]:
        """`settings.n` texts per conversation.

        Sampling: each conversation's n samples come from ONE `generate` call (`num_return_sequences=n`, the
        processor and media encoding run once) after `torch.manual_seed(its seed)` (`seeds[i]`, else
        `settings.seed`). Batched sampling would draw every row's tokens from the one global torch RNG, making
        a row's samples depend on its batch neighbours; one call per conversation makes its outputs exactly
        those of `generate([conversation], replace(settings, seed=seed))` for any batch size, process count or
        resume. Greedy decoding draws nothing, so it is batched (`batch_size` conversations per call), shortest
        prompts together to cut padding. Every conversation is tried; failures raise GenerationError (lowest
        index) with `partial` set.
        """
        check_seeds(conversations, seeds)
        if not settings.do_sample:
            return self._greedy(conversations, settings)
        seeds = seeds if seeds is not None else [settings.seed] * len(conversations)  # type: ignore[list-item]
        outcomes: list[list[str] | GenerationError] = []
        for index, (conversation, seed) in enumerate(zip(conversations, seeds)):
            try:
                outcomes.append(self._sample(conversation, settings, seed, index))
            except GenerationError as err:
                outcomes.append(err)
        return collect(outcomes)

    def _sample(self, conversation: Conversation, settings: GenerationSettings, seed: int | None,
                index: int) -> list[str]:
        interleaved = self._interleaves(conversation, index)
        if seed is not None:
            torch.manual_seed(seed)
        try:
            return self._generate_batch([conversation], settings, interleaved, copies=settings.n)
        except Exception as err:
            raise GenerationError(f"{self.name}: generation failed for conversation(s) [{index}]: {err}",
                                  index=index) from err

    def _greedy(self, conversations: list[Conversation], settings: GenerationSettings) -> list[list[str]]:
        """One greedy answer per conversation (repeated n times), batched by prompt size."""
        interleaved = [self._interleaves(conv, i) for i, conv in enumerate(conversations)]
        texts: dict[int, str] = {}
        # Audio-in-video prompts get other position ids (a per-call flag), so they are batched apart.
        for flag in (False, True):
            rows = sorted((i for i in range(len(conversations)) if interleaved[i] == flag),
                          key=lambda i: _size(conversations[i]))
            for start in range(0, len(rows), self.batch_size):
                chunk = rows[start:start + self.batch_size]
                try:
                    outputs = self._generate_batch([conversations[i] for i in chunk], settings, flag)
                except Exception as err:
                    failed = sorted(chunk)
                    raise GenerationError(f"{self.name}: generation failed for conversation(s) {failed}: {err}",
                                          index=failed[0]) from err
                texts.update(zip(chunk, outputs))
        return [[texts[i]] * settings.n for i in range(len(conversations))]

    def _interleaves(self, conversation: Conversation, index: int) -> bool:
        """True if this conversation's videos carry their soundtrack (audio_in_video); mixing is an error."""
        if not self.audio_in_video:
            return False
        kinds = {soundtrack is not None for message in conversation
                 for part, soundtrack in _with_soundtracks(message.content, True) if isinstance(part, VideoPart)}
        if len(kinds) > 1:
            raise GenerationError(f"{self.name}: conversation {index} mixes videos with and without a following "
                                  "AudioPart; with audio_in_video=True every video needs its soundtrack or none does",
                                  index=index)
        return kinds == {True}

    def prepare(self, conversations: list[Conversation]) -> dict[str, Any]:
        """Processor inputs (tensors on the model device) for one batch of conversations."""
        texts, images, videos, metadata, fps, audio = [], [], [], [], [], []
        audio_sources: list[int | None] = []  # per audio slot: index of the video it belongs to, or None
        sampling_rate = getattr(getattr(self.processor, "feature_extractor", None), "sampling_rate", None)
        for conversation in conversations:
            messages = []
            for message in conversation:
                content = []
                for part, soundtrack in _with_soundtracks(message.content, self.audio_in_video):
                    self._check_accepts(part)
                    if isinstance(part, TextPart):
                        content.append({"type": "text", "text": part.text})
                    elif isinstance(part, ImagePart):
                        content.append({"type": "image"})
                        images.append(part.image.convert("RGB"))
                    elif isinstance(part, VideoPart):
                        content.append({"type": "video"})
                        videos.append(part.frames)
                        metadata.append(_video_metadata(part))
                        fps.append(part.fps)
                        if soundtrack is not None:
                            audio.append(_resample(soundtrack, sampling_rate))
                            audio_sources.append(len(videos) - 1)
                    elif isinstance(part, AudioPart):
                        content.append({"type": "audio"})
                        audio.append(_resample(part, sampling_rate))
                        audio_sources.append(None)
                messages.append({"role": message.role, "content": content})
            texts.append(self._prompt(messages))
        kwargs: dict[str, Any] = {"text": texts, "padding": True, "return_tensors": "pt", **self.processor_kwargs}
        if images:
            kwargs["images"] = images
        if videos:
            kwargs["videos"] = videos
            kwargs["videos_kwargs"] = {"do_sample_frames": False, "video_metadata": metadata,
                                       **self.processor_kwargs.get("videos_kwargs", {})}
        if audio:
            kwargs["audio"] = audio
            kwargs["sampling_rate"] = sampling_rate
        if any(source is not None for source in audio_sources):
            kwargs.update(_audio_from_video_kwargs(self.processor, audio_sources, kwargs["videos_kwargs"]))
        inputs = self.processor(**kwargs)
        _set_seconds_per_grid(inputs, fps, self.processor)
        return inputs.to(self.model.device)

    def _prompt(self, messages: list[dict[str, Any]]) -> str:
        """The chat-templated prompt; a text model takes string contents, or the bare text without a template."""
        if not self.text_only:
            return self.processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        messages = [{"role": m["role"], "content": "".join(c["text"] for c in m["content"])} for m in messages]
        if self.tokenizer.chat_template is None:
            return "\n\n".join(m["content"] for m in messages)
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def _check_accepts(self, part: Any) -> None:
        """A part the processor has no sub-processor for would be dropped silently: refuse it instead."""
        kind = PART_KINDS.get(type(part))
        if kind and kind not in self.accepts:
            raise ValueError(f"{self.name} ({self.model_type}) takes no {kind} input")

    @torch.inference_mode()
    def _generate_batch(self, conversations: list[Conversation], settings: GenerationSettings,
                        interleaved: bool = False, copies: int = 1) -> list[str]:
        """Decoded new tokens: `copies` sequences per conversation (num_return_sequences), in order."""
        inputs = self.prepare(conversations)
        # Checkpoints ship sampling defaults (Qwen2.5-VL: top_k=1, top_p=0.001); None clears them so decoding
        # is exactly what `settings` says. Other defaults (e.g. repetition_penalty) stay the checkpoint's.
        sampling = {"do_sample": settings.do_sample, "num_beams": 1, "top_k": None,
                    "temperature": settings.temperature if settings.do_sample else None,
                    "top_p": settings.top_p if settings.do_sample else None}
        if interleaved:
            sampling["use_audio_in_video"] = True
        output = self.model.generate(**inputs, max_new_tokens=settings.max_new_tokens,
                                     num_return_sequences=copies, **sampling)
        new_tokens = output[:, inputs["input_ids"].shape[1]:]
        return self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)

    @torch.inference_mode()
    def next_token_probs(self, conversations: list[Conversation], words: list[str]) -> list[list[float]]:
        """Per conversation, the probability that the reply's first token is each word (any casing, with or
        without a leading space: the sum over those single tokens). A text model runs each prefix that
        prompts share once (prefix_scoring.py). A multimodal model: one forward pass per batch of `batch_size`
        prompts, shortest first, through `generate(max_new_tokens=1)`, which builds every family's position ids
        and computes the last position's logits only."""
        ids = [word_token_ids(self.tokenizer, word) for word in words]
        if self.text_only:  # judges' prompts repeat their evidence passage: each shared prefix is run once
            for part in (part for conversation in conversations for m in conversation for part in m.content):
                self._check_accepts(part)
            prompts = [self._prompt(_text_messages(c)) for c in conversations]
            tokens = self.tokenizer(prompts, **self.processor_kwargs)["input_ids"]
            return first_token_probs(self.model, tokens, ids, self.batch_size, self.tokenizer.pad_token_id)
        order = sorted(range(len(conversations)), key=lambda i: _size(conversations[i]))
        probs: dict[int, list[float]] = {}
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            inputs = self.prepare([conversations[i] for i in chunk])
            output = self.model.generate(**inputs, max_new_tokens=1, do_sample=False, num_beams=1, top_k=None,
                                         temperature=None, top_p=None, output_logits=True,
                                         return_dict_in_generate=True)
            first = torch.softmax(output.logits[0].float(), dim=-1)
            for row, i in enumerate(chunk):
                probs[i] = [first[row, word_ids].sum().item() for word_ids in ids]
        return [probs[i] for i in range(len(conversations))]


def _text_messages(conversation: Conversation) -> list[dict[str, Any]]:
    return [{"role": m.role, "content": [{"type": "text", "text": p.text} for p in m.content
                                         if isinstance(p, TextPart)]} for m in conversation]


def word_token_ids(tokenizer: Any, word: str) -> list[int]:
    """The single tokens that spell `word` (lower, Capitalised, UPPER; with and without a leading space)."""
    variants = {form for base in (word.lower(), word.capitalize(), word.upper()) for form in (base, " " + base)}
    ids = sorted({encoded[0] for encoded in (tokenizer.encode(v, add_special_tokens=False) for v in variants)
                  if len(encoded) == 1})
    if not ids:
        raise ValueError(f"no single token of this tokenizer spells {word!r}; the logprob judge needs one "
                         "(use the default generate-and-parse mode)")
    return ids


def _size(conversation: Conversation) -> tuple[int, int]:
    """Sort key standing in for the prompt length: media elements (pixels, audio samples), then text length."""
    media = text = 0
    for message in conversation:
        for part in message.content:
            if isinstance(part, TextPart):
                text += len(part.text)
            elif isinstance(part, VideoPart):
                media += part.frames.size
            elif isinstance(part, ImagePart):
                media += part.image.width * part.image.height * 3
            elif isinstance(part, AudioPart):
                media += part.samples.size
    return media, text


def _audio_from_video_kwargs(processor: Any, audio_sources: list[int | None],
                             videos_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Processor arguments that interleave each video with its soundtrack (audio_sources[i]: the video of audio i).

    transformers 5.23 takes per-audio video indices (`load_audio_from_video`); before it, the Omni processor
    only had `use_audio_in_video`, which pairs audio i with video i for the whole call.
    """
    if "load_audio_from_video" in getattr(getattr(processor, "valid_processor_kwargs", None), "__annotations__", {}):
        return {"load_audio_from_video": True, "audio_from_video_indices": audio_sources}
    if audio_sources != list(range(len(audio_sources))):
        raise GenerationError(f"transformers {version('transformers')} pairs audio i with video i only; this batch "
                              "mixes soundtracks with other audio: upgrade to transformers >= 5.23")
    videos_kwargs["use_audio_in_video"] = True
    return {}


def _with_soundtracks(parts: list, audio_in_video: bool) -> list[tuple[Any, AudioPart | None]]:
    """(part, soundtrack) pairs: with audio_in_video, an AudioPart right after a VideoPart is that video's track."""
    pairs: list[tuple[Any, AudioPart | None]] = []
    for part in parts:
        if audio_in_video and isinstance(part, AudioPart) and pairs and isinstance(pairs[-1][0], VideoPart) \
                and pairs[-1][1] is None:
            pairs[-1] = (pairs[-1][0], part)
        else:
            pairs.append((part, None))
    return pairs


def _video_metadata(part: VideoPart) -> Any:
    from transformers.video_utils import VideoMetadata

    count, height, width = part.frames.shape[:3]
    return VideoMetadata(total_num_frames=count, fps=part.fps, width=width, height=height,
                         duration=count / part.fps, frames_indices=list(range(count)))


def _resample(part: AudioPart, sampling_rate: int) -> np.ndarray:
    if part.sr == sampling_rate:
        return part.samples
    import librosa

    return librosa.resample(part.samples, orig_sr=part.sr, target_sr=sampling_rate).astype(np.float32)


def _set_seconds_per_grid(inputs: Any, fps: list[float], processor: Any) -> None:
    """Time span of one temporal patch per video, from each clip's own fps (Omni assumes one fps per call)."""
    if not fps:
        return
    temporal_patch = getattr(processor.video_processor, "temporal_patch_size", 1)
    for key in ("second_per_grid_ts", "video_second_per_grid"):
        if key in inputs:
            inputs[key] = torch.tensor([temporal_patch / rate for rate in fps], dtype=torch.float32)
