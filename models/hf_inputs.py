"""What the hf adapter hands a transformers processor: which media it can take, the processor arguments the
adapter's options become, and the media themselves (frames with their metadata, resampled audio, soundtracks)."""
from __future__ import annotations

from importlib.metadata import version
from typing import Any

import numpy as np
import torch

from .families import Family
from .protocol import AudioPart, GenerationError, ImagePart, TextPart, VideoPart

# The processor attributes that handle each media kind (the audio one is `audio_processor` in Phi-4-multimodal
# and Granite Speech); a processor with none of them cannot take that kind.
SUB_PROCESSORS = {"image": ("image_processor",), "video": ("video_processor",),
                  "audio": ("feature_extractor", "audio_processor")}
PART_KINDS = {ImagePart: "image", VideoPart: "video", AudioPart: "audio"}


def media_kinds(conversation: list) -> frozenset[str]:
    """The media kinds ("image", "video", "audio") a conversation's parts hold."""
    return frozenset(PART_KINDS[type(part)] for message in conversation for part in message.content
                     if type(part) in PART_KINDS)


def sub_processor(processor: Any, kind: str) -> Any:
    return next((part for name in SUB_PROCESSORS[kind] if (part := getattr(processor, name, None)) is not None), None)


def accepted_media(processor: Any, family: Family | None) -> frozenset[str]:
    """The media kinds the processor takes; videos too where the family passes their frames as images."""
    kinds = {kind for kind in SUB_PROCESSORS if sub_processor(processor, kind) is not None}
    if family is not None and family.video == "images" and "image" in kinds:
        kinds.add("video")
    return frozenset(kinds)


def with_pixel_budget(processor: Any, processor_kwargs: dict[str, Any], min_pixels: int | None,
                      max_pixels: int | None) -> dict[str, Any]:
    """`processor_kwargs` with min_pixels/max_pixels as the image and video processors' size (a side not given
    keeps the processor's own); ValueError when processor_kwargs already set that size."""
    if min_pixels is None and max_pixels is None:
        return processor_kwargs
    merged = dict(processor_kwargs)
    for kind in ("image", "video"):
        part = sub_processor(processor, kind)
        if part is None:
            continue
        kwargs = dict(merged.get(f"{kind}s_kwargs", {}))
        if "size" in kwargs:
            raise ValueError(f"min_pixels/max_pixels and processor_kwargs {kind}s_kwargs.size both set the {kind} "
                             "size; give one")
        own = part.size
        kwargs["size"] = {"shortest_edge": min_pixels if min_pixels is not None else own["shortest_edge"],
                          "longest_edge": max_pixels if max_pixels is not None else own["longest_edge"]}
        merged[f"{kind}s_kwargs"] = kwargs
    return merged


def audio_from_video_kwargs(processor: Any, audio_sources: list[int | None],
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


def with_soundtracks(parts: list, use_audio_in_video: bool) -> list[tuple[Any, AudioPart | None]]:
    """(part, soundtrack) pairs: with use_audio_in_video, an AudioPart right after a VideoPart is that video's track."""
    pairs: list[tuple[Any, AudioPart | None]] = []
    for part in parts:
        if use_audio_in_video and isinstance(part, AudioPart) and pairs and isinstance(pairs[-1][0], VideoPart) \
                and pairs[-1][1] is None:
            pairs[-1] = (pairs[-1][0], part)
        else:
            pairs.append((part, None))
    return pairs


def video_metadata(part: VideoPart) -> Any:
    from transformers.video_utils import VideoMetadata

    count, height, width = part.frames.shape[:3]
    return VideoMetadata(total_num_frames=count, fps=part.fps, width=width, height=height,
                         duration=count / part.fps, frames_indices=list(range(count)))


def resample(part: AudioPart, sampling_rate: int) -> np.ndarray:
    if part.sr == sampling_rate:
        return part.samples
    import librosa

    return librosa.resample(part.samples, orig_sr=part.sr, target_sr=sampling_rate).astype(np.float32)


def set_seconds_per_grid(inputs: Any, fps: list[float], processor: Any, key: str | None) -> None:
    """Time span of one temporal patch per video, from each clip's own fps (the processor assumes one per call)."""
    if not fps or key is None or key not in inputs:
        return
    temporal_patch = getattr(processor.video_processor, "temporal_patch_size", 1)
    inputs[key] = torch.tensor([temporal_patch / rate for rate in fps], dtype=torch.float32)


def prompt_size(conversation: list) -> tuple[int, int]:
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
