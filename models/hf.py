"""transformers adapter: any checkpoint whose processor (or, for a text-only causal LM, tokenizer) has a chat
template, loaded with the Auto class its model_type maps to; the per-family differences are data in
models/families.py (`hallubench models` lists them).

Prompts go through the processor's own chat template (`tokenize=False`), then one
`processor(text=, images=, videos=, audio=)` call per batch, images as one list per prompt (what transformers'
own chat-template path passes). A family whose processor cannot mix media kinds in one call (`batch_by_media`:
SmolVLM, Audio Flamingo 3) gets batches of one kind. A text model without a chat template gets its
messages' text as a bare prompt (as the papers' judges were run).

Media hand-off:
- video: the caller's frames are passed as arrays with `do_sample_frames=False` (the processor only
  resizes; it never re-samples) plus a `VideoMetadata(fps=part.fps, frames_indices=0..T-1)` per clip; a family
  whose table entry says `video="images"` gets the frames as a run of images instead. Where the family names
  its seconds-per-temporal-patch input (`second_per_grid_ts` for Qwen2.5-VL, `video_second_per_grid` for the
  Omni thinkers), it is set from each clip's own fps.
- audio: resampled to the audio processor's rate when it differs, passed as `audio=`.
- an AudioPart is its own placeholder, except with `use_audio_in_video=True` (families with `audio_in_video`):
  an AudioPart right after a VideoPart is that video's soundtrack, passed as
  `load_audio_from_video=True, audio_from_video_indices=[...]` so the processor interleaves 2-second
  video/audio chunks, and `generate(use_audio_in_video=True)` builds the matching TMRoPE positions.
"""
from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

import torch
from PIL import Image

from .configs import AUTO, AUTO_BATCH_OFF_CUDA, AUTO_MAX_BATCH
from .families import families_taking
from .hf_inputs import (
    PART_KINDS,
    accepted_media,
    audio_from_video_kwargs,
    media_kinds,
    prompt_size,
    resample,
    set_seconds_per_grid,
    sub_processor,
    video_metadata,
    with_pixel_budget,
    with_soundtracks,
)
from .hf_loading import (
    PROMPT_BUCKET,
    STATIC_CACHES,
    is_text_only,
    load_model,
    resolve_attention,
    resolve_auto_class,
    resolve_cache,
    resolve_dtype,
    weights_id,
)
from .inputs_ahead import InputsAhead
from .kl_guided import KLGuidedLogitsProcessor
from .prefix_scoring import first_token_probs
from .processor_copies import ProcessorCopies
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
from .seeded_sampling import row_seeds, seeded_sampling

__all__ = ["HFChatModel", "resolve_attention", "resolve_dtype", "word_token_ids"]

log = logging.getLogger("hallubench")  # notes: the command line shows them on stderr


class HFChatModel:
    """A transformers chat model, loaded by Hub id or local path, batched with left padding."""

    def __init__(self, model: str, revision: str | None = None, dtype: str = "auto", device: str = "cpu",
                 batch_size: int = 4, processor_kwargs: dict[str, Any] | None = None,
                 use_audio_in_video: bool = False, attn_implementation: str | None = None,
                 device_map: str | dict[str, Any] | None = None, trust_remote_code: bool = False,
                 min_pixels: int | None = None, max_pixels: int | None = None,
                 cache_implementation: str | None = None):
        """`device`: "cpu", "cuda", "cuda:1", ... or "auto" (device_map="auto": the model spread over every GPU);
        `device_map` (accelerate's: "auto", "balanced", "sequential" or a mapping) wins over it.
        `dtype`: "auto" is bfloat16 on CUDA GPUs that support it (else float16), the checkpoint's dtype elsewhere.
        `attn_implementation`: sdpa, flash_attention_2 or eager; default flash_attention_2 on CUDA in 16-bit when
        flash_attn is installed, else transformers' default (sdpa where supported).
        `cache_implementation` goes to `generate` ("static": compiled decoding on a GPU).
        `processor_kwargs` go to every processor call; `min_pixels`/`max_pixels` set the image and video pixel
        budget of the families whose processors take one. Family-specific options on another family, and a
        checkpoint no transformers class loads, are refused before any weights load."""
        from transformers import AutoConfig, AutoProcessor, AutoTokenizer

        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}; got {dtype!r}")
        if batch_size != AUTO and batch_size < 1:
            raise ValueError(f"batch_size must be >= 1 or auto; got {batch_size}")
        model = str(Path(model).resolve()) if Path(model).is_dir() else model
        hub = dict(revision=revision, trust_remote_code=trust_remote_code)
        config = AutoConfig.from_pretrained(model, **hub)
        self.model_type = config.model_type
        self.family, auto_class = resolve_auto_class(model, config)
        self._check_family_options(model, use_audio_in_video=use_audio_in_video, min_pixels=min_pixels,
                                   max_pixels=max_pixels)
        self.text_only = is_text_only(self.family, auto_class)
        # A text model's "processor" is its tokenizer.
        self.processor = (AutoTokenizer if self.text_only else AutoProcessor).from_pretrained(model, **hub)
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        if not self.text_only and getattr(self.processor, "chat_template", None) is None:
            # Some processors drop the template on loading (Phi-4-multimodal in transformers 5.23); the tokenizer's
            # is the checkpoint's own.
            if self.tokenizer.chat_template is None:
                raise ValueError(f"{model}: neither its processor nor its tokenizer has a chat template; the hf "
                                 "adapter builds every prompt with it")
            self.processor.chat_template = self.tokenizer.chat_template
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:  # many base LMs ship none; batching needs one
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.processor_kwargs = with_pixel_budget(self.processor, dict(processor_kwargs or {}), min_pixels, max_pixels)
        self._processors = ProcessorCopies(self.processor)  # each processor call borrows one: see processor_copies.py
        dtype = resolve_dtype(dtype, device)
        attention = resolve_attention(attn_implementation, dtype, device)
        # device "auto": device_map="auto" spreads a model larger than one GPU over all of them (accelerate).
        loading = dict(hub, dtype=dtype if dtype == "auto" else getattr(torch, dtype),
                       device_map=device if device_map is None else device_map)
        if attention is not None:
            loading["attn_implementation"] = attention
        self.model = load_model(model, config, self.family, auto_class, **loading).eval()
        self.attn_implementation = getattr(self.model.config, "_attn_implementation", attention)
        self.use_audio_in_video = use_audio_in_video
        self.generate_kwargs = dict(self.family.generate_kwargs) if self.family else {}
        self.device = str(self.model.device)
        self.cache_implementation = resolve_cache(cache_implementation, self.model, self.family, self.device,
                                                  spread=device == "auto" or device_map is not None)
        self.cache_chosen = cache_implementation is None and self.cache_implementation is not None
        if self.cache_implementation is not None:  # "static": transformers compiles the decoding step on a GPU
            self.generate_kwargs["cache_implementation"] = self.cache_implementation
        self._ahead = InputsAhead()
        self.prefill: dict[str, int] = {}  # next_token_probs' prompt tokens against those forwarded (prefix_scoring)
        self.name = f"hf:{model}"
        # auto: on CUDA from AUTO_MAX_BATCH, halved on out-of-memory (_fitting_batch); elsewhere no out-of-memory error
        # is raised to probe (the OS swaps or kills), so a fixed size.
        self.fitting = batch_size == AUTO and torch.device(self.device).type == "cuda"
        self.batch_size = AUTO_MAX_BATCH if self.fitting else AUTO_BATCH_OFF_CUDA if batch_size == AUTO else batch_size
        if batch_size == AUTO and not self.fitting:
            log.warning(f"hallubench: batch_size auto on {self.device}: {self.batch_size} (the largest batch that "
                        "fits is found on CUDA only; give a number to change it)")
        identity = {"model": model, "revision": revision, "dtype": dtype, "weights": weights_id(model, config),
                    "model_type": self.model_type, "processor_kwargs": self.processor_kwargs,
                    "audio_in_video": use_audio_in_video,  # the key's name before the option was renamed: same ids
                    "sampler": "per-row-gumbel"}  # samples drawn before it came from the global RNG
        if attention not in (None, "sdpa"):  # another kernel than the default sdpa can change outputs slightly
            identity["attn_implementation"] = attention
        if self.cache_implementation not in (None, "dynamic"):  # so can compiled decoding or a quantized cache
            identity["cache_implementation"] = self.cache_implementation
        self.fingerprint = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:16]
        self.accepts = frozenset() if self.text_only else accepted_media(self.processor, self.family)

    def _check_family_options(self, model: str, **options: Any) -> None:
        """ValueError for a family-specific option set on a checkpoint whose family does not take it."""
        taken = self.family.arguments if self.family else ()
        for option, value in options.items():
            if value not in (None, False) and option not in taken:
                raise ValueError(f"{option}={value} is taken by {', '.join(families_taking(option))} only; "
                                 f"{model} is {self.model_type}")

    def generate(self, conversations: list[Conversation], settings: GenerationSettings,
                 seeds: list[int] | None = None) -> list[list[str]]:
        """`settings.n` texts per conversation, `batch_size` conversations per `generate` call, shortest prompts
        together to cut padding.

        Sampling: a conversation's n samples are rows of one call (`num_return_sequences=n`, the processor and
        media encoding run once), drawn with per-row seeded Gumbel noise (models/seeded_sampling.py) from its
        seed (`seeds[i]`, else `settings.seed`, else one drawn from torch's global RNG). A row's draws depend
        on its own seed only, so a conversation's samples are exactly those of
        `generate([conversation], replace(settings, seed=seed))` whatever shares its batch, for any batch size,
        process count or resume. With `temperature=None` (the checkpoint's own sampling, whose warpers are its
        business) each conversation gets its own call after `torch.manual_seed(seed)` instead.

        Every conversation is tried: a sampled batch that fails is tried again one conversation at a time (the
        same samples, by the above), and failures raise GenerationError (lowest index) with `partial` set; a
        failed greedy batch raises naming its conversations.
        """
        check_seeds(conversations, seeds)
        if settings.model_default and settings.do_sample:
            seeds = seeds if seeds is not None else [settings.seed] * len(conversations)  # type: ignore[list-item]
            return collect([self._sample_alone(conversation, settings, seed, index)
                            for index, (conversation, seed) in enumerate(zip(conversations, seeds))])
        if settings.do_sample:
            given = seeds if seeds is not None else [settings.seed] * len(conversations)
            seeds = [int(torch.randint(2**62, ())) if seed is None else seed for seed in given]
        else:
            seeds = None  # greedy draws nothing
        interleaved = [self._interleaves(conv, i) for i, conv in enumerate(conversations)]
        outcomes: dict[int, list[str] | GenerationError] = {}
        # Audio-in-video prompts get other position ids (a per-call flag), so they are batched apart.
        while len(outcomes) < len(conversations):  # batches made again after each: auto may have made them smaller
            chunk = self._batches(conversations, lambda i: interleaved[i], skip=outcomes)[0]
            try:
                outcomes.update(self._fitting_batch(chunk, conversations, settings, interleaved[chunk[0]], seeds))
            except Exception as err:
                failed = sorted(chunk)
                if seeds is None:
                    raise GenerationError(f"{self.name}: generation failed for conversation(s) {failed}: {err}"
                                          f"{self._cache_hint()}", index=failed[0]) from err
                for i in failed:
                    outcomes[i] = self._sample_alone(conversations[i], settings, seeds[i], i)
        return collect([outcomes[i] for i in range(len(conversations))])

    def _sample_alone(self, conversation: Conversation, settings: GenerationSettings, seed: int | None,
                      index: int) -> list[str] | GenerationError:
        """One conversation's samples in a call of its own, or the GenerationError saying why it failed."""
        try:
            if settings.model_default:
                if seed is not None:
                    torch.manual_seed(seed)
                return self._generate_batch([conversation], settings, self._interleaves(conversation, index))[0]
            return self._generate_batch([conversation], settings, self._interleaves(conversation, index), [seed])[0]
        except Exception as err:
            return GenerationError(f"{self.name}: generation failed for conversation(s) [{index}]: {err}"
                                   f"{self._cache_hint()}", index=index)

    def _cache_hint(self) -> str:
        if not self.cache_chosen:
            return ""
        return (f" (compiled decoding, cache_implementation={self.cache_implementation}, is on by default on CUDA; "
                "--model-args cache_implementation=dynamic turns it off)")

    def _fitting_batch(self, chunk: list[int], conversations: list[Conversation], settings: GenerationSettings,
                       interleaved: bool, seeds: list[int] | None) -> dict[int, list[str]]:
        """The outputs of `chunk` (by conversation index); with batch_size=auto on CUDA, of as much of it as fits:
        on out-of-memory the batch is halved until it fits (accelerate's find_executable_batch_size) and that size
        is kept, so the largest batch that fits is found on the first batch, and lowered again only if a later,
        longer one does not fit."""
        def run(part: list[int]) -> dict[int, list[str]]:
            texts = self._generate_batch([conversations[i] for i in part], settings, interleaved,
                                         None if seeds is None else [seeds[i] for i in part])
            return dict(zip(part, texts))

        if not self.fitting:
            return run(chunk)
        from accelerate.utils import find_executable_batch_size

        size = len(chunk)

        def halve() -> int:
            nonlocal size
            size //= 2
            return size

        @find_executable_batch_size(starting_batch_size=size, reduce_batch_size_fn=halve)
        def fitting(batch_size: int) -> dict[int, list[str]]:
            return run(chunk[:batch_size])

        texts = fitting()
        if len(texts) < len(chunk):
            self.batch_size = len(texts)
            log.warning(f"hallubench: batch_size auto: {len(chunk)} conversations ran out of memory on {self.device}; "
                        f"{self.batch_size} per batch from now on")
        return texts

    def _batches(self, conversations: list[Conversation], group: Callable[[int], Any],
                 skip: Any = ()) -> list[list[int]]:
        """Conversation indices (but those in `skip`) in batches of at most `batch_size`, shortest prompts together;
        conversations with another `group(i)` (and, for a family that cannot mix them, other media kinds) never
        share a batch."""
        apart = self.family is not None and self.family.batch_by_media
        groups: dict[tuple, list[int]] = {}
        for i in sorted((i for i in range(len(conversations)) if i not in skip),
                        key=lambda i: prompt_size(conversations[i])):
            groups.setdefault((group(i), media_kinds(conversations[i]) if apart else None), []).append(i)
        return [rows[start:start + self.batch_size] for rows in groups.values()
                for start in range(0, len(rows), self.batch_size)]

    def _interleaves(self, conversation: Conversation, index: int) -> bool:
        """True if this conversation's videos carry their soundtrack (use_audio_in_video); mixing is an error."""
        if not self.use_audio_in_video:
            return False
        kinds = {soundtrack is not None for message in conversation
                 for part, soundtrack in with_soundtracks(message.content, True) if isinstance(part, VideoPart)}
        if len(kinds) > 1:
            raise GenerationError(f"{self.name}: conversation {index} mixes videos with and without a following "
                                  "AudioPart; with use_audio_in_video=True every video needs its soundtrack or none does",
                                  index=index)
        return kinds == {True}

    def prepare_ahead(self, conversations: list[Conversation]) -> None:
        """Run the processor now for the calls `generate(conversations, ...)` will make (models/inputs_ahead.py):
        the harness calls this on its look-ahead thread while the model works on the batch before."""
        try:
            interleaved = [self._interleaves(conversation, i) for i, conversation in enumerate(conversations)]
        except GenerationError:
            return  # generate raises it, where it is recorded
        for chunk in self._batches(conversations, lambda i: interleaved[i]):
            self._ahead.make([conversations[i] for i in chunk], self._processor_inputs)

    def prepare(self, conversations: list[Conversation]) -> dict[str, Any]:
        """Processor inputs (tensors on the model device, media features in its dtype) for one batch of
        conversations: those `prepare_ahead` made for exactly these conversation objects, else made now."""
        inputs = self._ahead.take(conversations, self._processor_inputs)
        inputs = type(inputs)(dict(inputs)).to(self.model.device)  # a copy: callers may add to their inputs
        # Media features (pixel and audio arrays) in the weights' dtype: some encoders do not cast them (Audio
        # Flamingo 3's audio tower in bf16 fails on float32 features). 1-D floats such as seconds per grid stay
        # in float32: they feed the rotary positions.
        for key, value in inputs.items():
            if torch.is_floating_point(value) and value.dim() > 1:
                inputs[key] = value.to(self.model.dtype)
        return inputs

    def _processor_inputs(self, conversations: list[Conversation]) -> Any:
        """The processor's output (on the CPU) for one batch of conversations, made by a processor no other thread
        is using."""
        with self._processors.lent() as processor:
            return self._inputs_made_by(processor, conversations)

    @contextmanager
    def _tokenizer_lent(self) -> Iterator[Any]:
        """The tokenizer of a processor no other thread is using (`self.tokenizer` is the look-ahead's too)."""
        with self._processors.lent() as processor:
            yield getattr(processor, "tokenizer", processor)

    def _inputs_made_by(self, processor: Any, conversations: list[Conversation]) -> Any:
        texts, images, videos, metadata, fps, audio = [], [], [], [], [], []
        audio_sources: list[int | None] = []  # per audio slot: index of the video it belongs to, or None
        sampling_rate = getattr(sub_processor(processor, "audio"), "sampling_rate", None)
        frames_as_images = self.family is not None and self.family.video == "images"
        for conversation in conversations:
            self._check_media_mix(conversation)
            images.append([])  # one list per prompt: how processors pair images with prompts in a batch
            messages = []
            for message in conversation:
                content = []
                for part, soundtrack in with_soundtracks(message.content, self.use_audio_in_video):
                    self._check_accepts(part)
                    if isinstance(part, TextPart):
                        content.append({"type": "text", "text": part.text})
                    elif isinstance(part, ImagePart):
                        content.append({"type": "image"})
                        images[-1].append(part.image.convert("RGB"))
                    elif isinstance(part, VideoPart) and frames_as_images:
                        content.extend({"type": "image"} for _ in part.frames)
                        images[-1].extend(Image.fromarray(frame) for frame in part.frames)
                    elif isinstance(part, VideoPart):
                        content.append({"type": "video"})
                        videos.append(part.frames)
                        metadata.append(video_metadata(part))
                        fps.append(part.fps)
                        if soundtrack is not None:
                            audio.append(resample(soundtrack, sampling_rate))
                            audio_sources.append(len(videos) - 1)
                    elif isinstance(part, AudioPart):
                        content.append({"type": "audio"})
                        audio.append(resample(part, sampling_rate))
                        audio_sources.append(None)
                messages.append({"role": message.role, "content": content})
            texts.append(self._prompt(messages, processor))
        # Padding is the text's only: a flat padding=True would also reach the feature extractor, whose audio
        # must keep its own (Audio Flamingo 3's encoder takes whole 30-s windows). A rendered chat template
        # already holds the special tokens it wants (Llama's and Gemma's write their own <bos>); letting the
        # tokenizer add them again would double them. A bare prompt gets the tokenizer's own.
        text_kwargs = self._text_kwargs()
        kwargs: dict[str, Any] = {"text": texts, "return_tensors": "pt", **self.processor_kwargs}
        if self.text_only:  # a tokenizer: flat arguments
            kwargs.pop("text_kwargs", None)
            kwargs.update(text_kwargs)
        else:
            kwargs["text_kwargs"] = text_kwargs
        if any(images):
            # Nested per prompt (transformers' batched form): a flat list is split by each prompt's placeholder
            # count by some processors, refused by Gemma 3's and SmolVLM's, and read by LLaVA-OneVision's as one
            # image per prompt (anyres tiles for every image of a multi-image prompt).
            kwargs["images"] = images
        if videos:
            kwargs["videos"] = videos
            kwargs["videos_kwargs"] = {"do_sample_frames": False, "video_metadata": metadata,
                                       **self.processor_kwargs.get("videos_kwargs", {})}
        if audio:
            kwargs["audio"] = audio
            kwargs["sampling_rate"] = sampling_rate
        if any(source is not None for source in audio_sources):
            kwargs.update(audio_from_video_kwargs(processor, audio_sources, kwargs["videos_kwargs"]))
        inputs = processor(**kwargs)
        set_seconds_per_grid(inputs, fps, processor, self.family.seconds_per_grid if self.family else None)
        return inputs

    def _text_kwargs(self) -> dict[str, Any]:
        kwargs = {"padding": True, "add_special_tokens": not self._templated}
        if self.cache_implementation in STATIC_CACHES:  # a compiled decoding step per prompt-length bucket, not per length
            kwargs["pad_to_multiple_of"] = PROMPT_BUCKET
        return {**kwargs, **self.processor_kwargs.get("text_kwargs", {})}

    @property
    def _templated(self) -> bool:
        return not self.text_only or self.tokenizer.chat_template is not None

    def _prompt(self, messages: list[dict[str, Any]], processor: Any = None) -> str:
        """The chat-templated prompt (with the family's template options) rendered by `processor` (default: the
        model's; rendering sets nothing on its tokenizer); a text model takes string contents (many released LM
        templates take no list of parts), or the bare text without a template."""
        renderer = self.processor if processor is None else processor  # a text model's processor is its tokenizer
        template = dict(self.family.template_kwargs) if self.family else {}
        if not self.text_only:
            return renderer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **template)
        messages = [{"role": m["role"], "content": "".join(c["text"] for c in m["content"])} for m in messages]
        if not self._templated:
            return "\n\n".join(m["content"] for m in messages)
        return renderer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **template)

    def _check_media_mix(self, conversation: Conversation) -> None:
        """A family whose processor cannot mix media kinds in one call cannot take them in one prompt either."""
        kinds = media_kinds(conversation)
        if self.family is not None and self.family.batch_by_media and len(kinds) > 1:
            raise ValueError(f"{self.name} ({self.family.name}) cannot take {' and '.join(sorted(kinds))} in one "
                             "prompt: its processor turns them into one input; send them in separate prompts")

    def _check_accepts(self, part: Any) -> None:
        """A part the processor has no sub-processor for would be dropped silently: refuse it instead."""
        kind = PART_KINDS.get(type(part))
        if kind and kind not in self.accepts:
            raise ValueError(f"{self.name} ({self.model_type}) takes no {kind} input")

    @torch.inference_mode()
    def _generate_batch(self, conversations: list[Conversation], settings: GenerationSettings,
                        interleaved: bool = False, seeds: list[int] | None = None,
                        logits_processor: Any = None) -> list[list[str]]:
        """`settings.n` decoded texts per conversation: sampled from per-row seeded noise when `seeds` are given
        (one per conversation), else greedy (one sequence, repeated) or the checkpoint's own sampling. A
        `logits_processor` (transformers') runs after the checkpoint's own at each step, before any sampling."""
        inputs = self.prepare(conversations)
        copies = 1 if seeds is None and not settings.model_default else settings.n
        # Checkpoints ship sampling defaults (Qwen2.5-VL: top_k=1, top_p=0.001); None clears them so decoding
        # is exactly what `settings` says. Other defaults (e.g. repetition_penalty) stay the checkpoint's.
        decoding = {**self.generate_kwargs, "do_sample": False, "num_beams": 1, "top_k": None, "temperature": None,
                    "top_p": None}
        if seeds is not None:  # our processors draw; transformers' warpers off (1.0 is "off" for both)
            decoding.update(do_sample=True, temperature=1.0, top_p=1.0, logits_processor=seeded_sampling(
                settings.temperature, settings.top_p, row_seeds(seeds, copies)))  # type: ignore[arg-type]
        if settings.model_default:  # the checkpoint's generation_config decides
            decoding = dict(self.generate_kwargs)
        if interleaved:
            decoding["use_audio_in_video"] = True
        if logits_processor is not None:
            from transformers import LogitsProcessorList

            decoding["logits_processor"] = LogitsProcessorList([logits_processor,
                                                                *decoding.get("logits_processor", [])])
        output = self.model.generate(**inputs, max_new_tokens=settings.max_new_tokens,
                                     num_return_sequences=copies, **decoding)
        with self._tokenizer_lent() as tokenizer:
            texts = tokenizer.batch_decode(output[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
        rows = [texts[k * copies:(k + 1) * copies] for k in range(len(conversations))]
        return [row * (settings.n // copies) for row in rows]

    @torch.inference_mode()
    def description_log_probs(self, conversation: Conversation, description: str) -> torch.Tensor:
        """log p_j, one row per token j of `description`: the model's next-token distributions over the description
        after `conversation` (its reply to it), from one teacher-forced forward pass."""
        inputs = self.prepare([conversation])
        with self._tokenizer_lent() as tokenizer:
            ids = tokenizer(description, add_special_tokens=False, return_tensors="pt")["input_ids"]
        ids = ids.to(self.model.device)
        if ids.shape[1] == 0:
            return torch.zeros((0, self.model.get_output_embeddings().weight.shape[0]), device=self.model.device)
        length = inputs["input_ids"].shape[1]
        for key in [key for key, value in inputs.items() if torch.is_tensor(value) and value.dim() == 2
                    and tuple(value.shape) == (1, length)]:
            # input_ids take the description, the mask ones, per-token media marks (token types) zeros: text
            extra = ids if key == "input_ids" else torch.ones_like(ids) if key == "attention_mask" else \
                torch.zeros_like(ids)
            inputs[key] = torch.cat([inputs[key], extra.to(inputs[key].dtype)], dim=1)
        logits = self.model(**inputs).logits[0, length - 1:-1]
        return torch.log_softmax(logits.float(), dim=-1)

    def generate_kl_guided(self, conversations: list[Conversation], guides: list[tuple[Conversation, str]],
                           settings: GenerationSettings) -> list[list[str]]:
        """VDGD's decoding (models/kl_guided.py), one conversation at a time, each guided by its description's
        distributions; GenerationError (`collect`) naming the conversations that failed."""
        outcomes: list[list[str] | GenerationError] = []
        for index, (conversation, (described, description)) in enumerate(zip(conversations, guides, strict=True)):
            try:
                guide = KLGuidedLogitsProcessor([self.description_log_probs(described, description)])
                outcomes.append(self._generate_batch([conversation], settings, logits_processor=guide)[0])
            except Exception as err:
                outcomes.append(GenerationError(f"{self.name}: KL-guided decoding failed for conversation {index}: "
                                                f"{err}", index=index))
        return collect(outcomes)

    @torch.inference_mode()
    def next_token_probs(self, conversations: list[Conversation], words: list[str]) -> list[list[float]]:
        """Per conversation, the probability that the reply's first token is each word (any casing, with or
        without a leading space: the sum over those single tokens). A text model runs each prefix that
        prompts share once (prefix_scoring.py). A multimodal model: one forward pass per batch of `batch_size`
        prompts, shortest first, through `generate(max_new_tokens=1)`, which builds every family's position ids
        and computes the last position's logits only."""
        with self._tokenizer_lent() as tokenizer:
            ids = [word_token_ids(tokenizer, word) for word in words]
        if self.text_only:  # judges' prompts repeat their evidence passage: each shared prefix is run once
            for part in (part for conversation in conversations for m in conversation for part in m.content):
                self._check_accepts(part)
            prompts = [self._prompt(_text_messages(c)) for c in conversations]
            unpadded = {key: value for key, value in {**self.processor_kwargs, **self._text_kwargs()}.items()
                        if key not in ("text_kwargs", "padding", "pad_to_multiple_of")}
            with self._tokenizer_lent() as tokenizer:
                tokens = tokenizer(prompts, **unpadded)["input_ids"]
            return first_token_probs(self.model, tokens, ids, self.batch_size, self.tokenizer.pad_token_id,
                                     self.prefill)
        probs: dict[int, list[float]] = {}
        for chunk in self._batches(conversations, lambda i: None):
            inputs = self.prepare([conversations[i] for i in chunk])
            output = self.model.generate(**inputs, **self.generate_kwargs, max_new_tokens=1, do_sample=False, num_beams=1, top_k=None,
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
