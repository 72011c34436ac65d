"""The transformers adapter on tiny random checkpoints of every supported family, built offline.

Each test runs the real processor, chat template and `generate`; the checkpoints are random, so tests
check structure (counts, determinism, batching, token counts), never the wording.
"""
import dataclasses
import math
import os
import shutil
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported: everything here is local

import numpy as np
import pytest
import torch
from PIL import Image

from hallubench.models import (
    AudioPart,
    ChatModel,
    GenerationError,
    GenerationSettings,
    ImagePart,
    Message,
    TextPart,
    VideoPart,
    get_model,
)
from hallubench.models.hf import HFChatModel
from hallubench.registry import MODEL_FAMILIES
from hallubench.testing.tiny_models import EXTRA_KINDS, KINDS, make_full_omni_checkpoint, make_tiny_model

GREEDY = GenerationSettings(max_new_tokens=6)
# Qwen2.5-Omni's processor upsizes video frames to >= 128 merged tokens each by default; small frames keep
# the tiny tests fast and exercise `processor_kwargs` overriding processor defaults.
SMALL_VIDEO = {"videos_kwargs": {"size": {"shortest_edge": 56 * 56, "longest_edge": 112 * 112}}}


@pytest.fixture(scope="session")
def tiny_dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_models")
    return {kind: make_tiny_model(kind, root) for kind in KINDS}


@pytest.fixture(scope="module")
def loaded(tiny_dirs):
    cache: dict[str, HFChatModel] = {}

    def load(kind: str) -> HFChatModel:
        if kind not in cache:
            options = {"processor_kwargs": SMALL_VIDEO} if kind == "qwen2_5_omni" else {}
            cache[kind] = get_model("hf", model=str(tiny_dirs[kind]), dtype="float32", **options)
        return cache[kind]

    return load


def _frames(count: int, seed: int = 0, size: int = 56) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (count, size, size, 3), dtype=np.uint8)


def _tone(seconds: float, sr: int = 16000) -> np.ndarray:
    return (0.3 * np.sin(2 * np.pi * 440 * np.arange(int(seconds * sr)) / sr)).astype(np.float32)


def _conversation(kind: str, question: str, frames: int = 4, audio_seconds: float = 1.0, fps: float = 2.0):
    parts = []
    if kind in ("qwen2_5_omni", "qwen2_vl"):
        parts.append(VideoPart(_frames(frames, seed=frames), fps))
    if kind in ("qwen2_5_omni", "qwen2_audio"):
        parts.append(AudioPart(_tone(audio_seconds), 16000))
    return [Message("user", [*parts, TextPart(question)])]


def _pair(kind: str):
    """Two conversations of different prompt lengths (and media sizes), so batching must left-pad."""
    return [_conversation(kind, "Is there a dog?", frames=4, audio_seconds=1.0),
            _conversation(kind, "Describe what you see and hear in this clip in one sentence.", frames=6,
                          audio_seconds=2.0)]


@pytest.mark.parametrize("kind", KINDS)
def test_returns_n_outputs_per_conversation(loaded, kind):
    model = loaded(kind)
    outputs = model.generate(_pair(kind), GenerationSettings(max_new_tokens=4, temperature=1.0, n=3, seed=0))
    assert [len(out) for out in outputs] == [3, 3]
    assert all(isinstance(text, str) for out in outputs for text in out)
    greedy = model.generate(_pair(kind), GenerationSettings(max_new_tokens=4, n=2))
    assert [len(out) for out in greedy] == [2, 2] and all(out[0] == out[1] for out in greedy)


@pytest.mark.parametrize("kind", KINDS)
def test_greedy_is_deterministic_and_batch_equals_singles(loaded, kind):
    model = loaded(kind)
    conversations = _pair(kind)
    batched = model.generate(conversations, GREEDY)
    assert batched == model.generate(conversations, GREEDY)
    singles = [model.generate([conv], GREEDY)[0] for conv in conversations]
    assert batched == singles
    # Only new tokens are decoded: the prompt text never comes back.
    assert all("Is there a dog?" not in text for text in batched[0])


@pytest.mark.parametrize("kind", KINDS)
def test_seeded_sampling_is_reproducible(loaded, kind):
    model = loaded(kind)
    conv = [_conversation(kind, "Is there a dog?")]

    def sample(seed):
        return model.generate(conv, GenerationSettings(max_new_tokens=8, temperature=1.5, n=4, seed=seed))

    first = sample(7)
    assert first == sample(7)
    assert first != sample(8)
    assert len(set(first[0])) > 1  # the n samples are drawn independently


@pytest.mark.parametrize("kind", ["qwen2_5_omni", "qwen2_vl"])
def test_per_conversation_seeds_give_the_outputs_of_one_call_per_conversation(loaded, kind):
    model = loaded(kind)
    conversations = [*_pair(kind), _conversation(kind, "Is there a dog?")]  # the first again, another seed
    settings = GenerationSettings(max_new_tokens=8, temperature=1.5, n=3)
    seeds = [3, 4, 5]
    batched = model.generate(conversations, settings, seeds=seeds)
    singles = [model.generate([conv], dataclasses.replace(settings, seed=seed))[0]
               for conv, seed in zip(conversations, seeds)]
    assert batched == singles and batched[0] != batched[2]
    assert model.generate(conversations[::-1], settings, seeds=seeds[::-1]) == batched[::-1]
    with pytest.raises(ValueError, match="one seed per conversation"):
        model.generate(conversations, settings, seeds=seeds[:2])


def test_seeded_call_tries_every_conversation_and_reports_partial_outputs(loaded):
    model = loaded("qwen2_vl")
    ok = _conversation("qwen2_vl", "Is there a dog?")
    bad = [Message("user", [AudioPart(_tone(0.5), 16000), TextPart("Hear this?")])]
    settings = GenerationSettings(max_new_tokens=4, temperature=1.0, n=2)
    with pytest.raises(GenerationError, match=r"conversation\(s\) \[1\].*takes no audio") as info:
        model.generate([ok, bad, ok], settings, seeds=[1, 2, 3])
    alone = [model.generate([ok], dataclasses.replace(settings, seed=seed))[0] for seed in (1, 3)]
    assert info.value.index == 1 and info.value.partial == [alone[0], None, alone[1]]


def _count(inputs, token_id: int) -> int:
    return int((inputs["input_ids"] == token_id).sum())


@pytest.mark.parametrize("frames", [4, 6])
def test_qwen2_vl_processor_keeps_our_frames(loaded, frames):
    model = loaded("qwen2_vl")
    inputs = model.prepare([_conversation("qwen2_vl", "Is there a dog?", frames=frames)])
    t, h, w = inputs["video_grid_thw"][0].tolist()
    assert t == math.ceil(frames / model.processor.video_processor.temporal_patch_size)
    assert _count(inputs, model.model.config.video_token_id) == t * h * w // 4
    assert inputs["pixel_values_videos"].shape[0] == t * h * w


def test_video_frames_reach_the_model(loaded):
    """Different pixels, same prompt -> different next-token logits: the frames are not dropped."""
    model = loaded("qwen2_vl")
    logits = []
    for seed in (1, 2):
        conv = [Message("user", [VideoPart(_frames(4, seed=seed), 2.0), TextPart("Is there a dog?")])]
        with torch.no_grad():
            logits.append(model.model(**model.prepare([conv])).logits[0, -1])
    assert not torch.allclose(logits[0], logits[1])


def test_omni_video_fps_and_audio_lengths(loaded):
    model = loaded("qwen2_5_omni")
    config = model.model.config
    conv = [Message("user", [VideoPart(_frames(8), fps=4.0), AudioPart(_tone(1.5, sr=8000), sr=8000),
                             TextPart("Is there a dog?")])]
    inputs = model.prepare([conv])
    t, h, w = inputs["video_grid_thw"][0].tolist()
    assert t == 4  # 8 frames / temporal patch 2, not re-sampled at the processor's default 2 fps
    assert (h, w) == (4, 4)  # 56 px frames kept at 56 px by the processor_kwargs size override
    assert _count(inputs, config.video_token_index) == t * h * w // 4
    # Each temporal patch spans 2 frames at 4 fps = 0.5 s (feeds the time-aligned rotary positions).
    assert inputs["video_second_per_grid"].tolist() == [0.5]
    # 1.5 s at 8 kHz is resampled to 16 kHz: 150 mel frames (10 ms hop) -> 38 audio tokens after the 4x downsampling.
    assert int(inputs["feature_attention_mask"].sum()) == 150
    assert _count(inputs, config.audio_token_index) == ((150 - 1) // 2 + 1 - 2) // 2 + 1


def test_qwen2_audio_feature_length(loaded):
    model = loaded("qwen2_audio")
    inputs = model.prepare([_conversation("qwen2_audio", "What is that sound?", audio_seconds=2.0)])
    assert int(inputs["feature_attention_mask"].sum()) == 200
    assert _count(inputs, model.model.config.audio_token_index) == ((200 - 1) // 2 + 1 - 2) // 2 + 1


def test_full_omni_checkpoint_loads_the_thinker(loaded, tiny_dirs, tmp_path):
    full = make_full_omni_checkpoint(tiny_dirs["qwen2_5_omni"], tmp_path)
    model = HFChatModel(str(full), dtype="float32", processor_kwargs=SMALL_VIDEO)
    assert model.model_type == "qwen2_5_omni" and type(model.model).__name__.endswith("ThinkerForConditionalGeneration")
    conv = [_conversation("qwen2_5_omni", "Is there a dog?")]
    assert model.generate(conv, GREEDY) == loaded("qwen2_5_omni").generate(conv, GREEDY)


def test_dtype_option_and_fingerprint(tiny_dirs, loaded):
    path = str(tiny_dirs["qwen2_audio"])
    half = HFChatModel(path, dtype="bfloat16")
    assert isinstance(half, ChatModel) and half.name.startswith("hf:")
    assert next(half.model.parameters()).dtype == torch.bfloat16
    assert loaded("qwen2_audio").fingerprint == HFChatModel(path, dtype="float32").fingerprint
    assert half.fingerprint != loaded("qwen2_audio").fingerprint
    assert loaded("qwen2_audio").fingerprint != loaded("qwen2_vl").fingerprint
    with pytest.raises(ValueError, match="dtype must be one of"):
        HFChatModel(path, dtype="float8")


def test_fingerprint_follows_the_checkpoint_generation_config(tiny_dirs, tmp_path):
    copy = shutil.copytree(tiny_dirs["qwen2_audio"], tmp_path / "copy")
    before = HFChatModel(str(copy), dtype="float32").fingerprint
    config = (copy / "generation_config.json").read_text().replace("{", '{"repetition_penalty": 1.05,', 1)
    (copy / "generation_config.json").write_text(config)
    assert HFChatModel(str(copy), dtype="float32").fingerprint != before


def test_fingerprint_follows_weights_retrained_in_place(tmp_path):
    first = make_tiny_model("qwen2_audio", tmp_path / "a", seed=1)
    before = HFChatModel(str(first), dtype="float32").fingerprint
    retrained = make_tiny_model("qwen2_audio", tmp_path / "b", seed=2)
    for weights in retrained.glob("*.safetensors"):  # same names and sizes, other values
        assert weights.stat().st_size == (first / weights.name).stat().st_size
        shutil.copyfile(weights, first / weights.name)
    assert HFChatModel(str(first), dtype="float32").fingerprint != before


def test_unsupported_model_type_names_the_choices(tmp_path):
    from transformers import CLIPConfig

    CLIPConfig().save_pretrained(tmp_path)  # neither a supported multimodal family nor a causal LM
    supported = ", ".join(sorted(MODEL_FAMILIES)) + " and any text-only causal LM"
    with pytest.raises(ValueError, match="clip.*supported: " + supported):
        HFChatModel(str(tmp_path))


def test_failed_batch_raises_generation_error_naming_conversations(loaded):
    model = loaded("qwen2_vl")
    ok = _conversation("qwen2_vl", "Is there a dog?")
    bad = [Message("user", [AudioPart(_tone(0.5), 16000), TextPart("Hear this?")])]
    with pytest.raises(GenerationError, match=r"conversation\(s\) \[0, 1\].*takes no audio") as info:
        model.generate([ok, bad], GREEDY)
    assert info.value.index == 0
    video = [Message("user", [VideoPart(_frames(2), 1.0), TextPart("See this?")])]
    with pytest.raises(GenerationError, match="takes no video input"):
        loaded("qwen2_audio").generate([video], GREEDY)


@pytest.fixture(scope="module")
def omni_av(tiny_dirs):
    return HFChatModel(str(tiny_dirs["qwen2_5_omni"]), dtype="float32", use_audio_in_video=True,
                       processor_kwargs=SMALL_VIDEO)


def test_omni_audio_in_video_interleaves_the_soundtrack(omni_av):
    config = omni_av.model.config
    conv = _conversation("qwen2_5_omni", "Is there a dog?", frames=8, audio_seconds=4.0, fps=2.0)
    ids = omni_av.prepare([conv])["input_ids"][0].tolist()
    bos = ids.index(config.vision_start_token_id)
    assert ids[bos + 1] == config.audio_start_token_id  # <|vision_bos|><|audio_bos|> video/audio chunks ...
    span = ids[bos + 2:ids.index(config.audio_end_token_id)]
    kinds = "".join("v" if t == config.video_token_index else "a" for t in span)
    assert set(kinds) == {"v", "a"} and kinds.count("a") == ((400 - 1) // 2 + 1 - 2) // 2 + 1
    # 4 temporal patches of 1 s each, 2-s chunks: video then audio of chunk 1, then of chunk 2.
    assert kinds.index("a") < kinds.rindex("v")
    assert ids.count(config.audio_start_token_id) == 1  # no separate audio placeholder


def test_omni_audio_in_video_batches_apart_from_plain_videos(omni_av, loaded):
    paired = _conversation("qwen2_5_omni", "Is there a dog?", frames=4, audio_seconds=2.0)
    silent = [Message("user", [VideoPart(_frames(4), 2.0), TextPart("Is there a dog?")])]
    batched = omni_av.generate([paired, silent, paired], GREEDY)
    assert batched == [omni_av.generate([c], GREEDY)[0] for c in (paired, silent, paired)]
    # The silent video is answered exactly as by the adapter without use_audio_in_video.
    assert batched[1] == loaded("qwen2_5_omni").generate([silent], GREEDY)[0]
    mixed = [Message("user", [VideoPart(_frames(4), 2.0), AudioPart(_tone(1.0), 16000),
                              VideoPart(_frames(4, seed=3), 2.0), TextPart("Same?")])]
    with pytest.raises(GenerationError, match="conversation 1 mixes videos"):
        omni_av.generate([paired, mixed], GREEDY)
    with pytest.raises(ValueError, match=r"use_audio_in_video=True is taken by Qwen2\.5-Omni \(thinker\), Qwen3-Omni \(thinker\) only"):
        HFChatModel(str(omni_av.name.removeprefix("hf:")).replace("qwen2_5_omni", "qwen2_vl"), use_audio_in_video=True)


@pytest.fixture(scope="module")
def extra_models(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny_extra")
    return {kind: HFChatModel(str(make_tiny_model(kind, root)), dtype="float32") for kind in EXTRA_KINDS}


@pytest.mark.parametrize("kind", EXTRA_KINDS)
def test_other_vision_families_batch_images_videos_and_text(extra_models, kind):
    model = extra_models[kind]
    video = [Message("user", [VideoPart(_frames(6), fps=3.0), TextPart("Is there a dog?")])]
    image = [Message("user", [ImagePart(Image.new("RGB", (40, 30), "red")), TextPart("What colour?")])]
    text = [Message("user", [TextPart("Describe what you see and hear in this clip in one sentence.")])]
    batched = model.generate([video, image, text], GREEDY)
    assert batched == [model.generate([c], GREEDY)[0] for c in (video, image, text)]
    inputs = model.prepare([video])
    if kind == "qwen2_5_vl":
        assert inputs["video_grid_thw"][0, 0].item() == 3  # 6 frames / temporal patch 2
        assert inputs["second_per_grid_ts"].tolist() == pytest.approx([2 / 3.0])  # from the clip's own fps
    else:
        assert inputs["pixel_values_videos"].shape[1] == 6  # all 6 frames, none re-sampled


def test_checkpoint_sampling_defaults_do_not_override_settings(extra_models):
    """The tiny Qwen2.5-VL ships top_k=1/top_p=0.001 like the release; our settings still sample freely."""
    model = extra_models["qwen2_5_vl"]
    assert model.model.generation_config.top_k == 1
    conv = [Message("user", [TextPart("Is there a dog?")])]
    samples = model.generate([conv], GenerationSettings(max_new_tokens=8, temperature=1.5, n=4, seed=0))[0]
    assert len(set(samples)) > 1
    assert model.generate([conv], GREEDY) == model.generate([conv], GREEDY)
    # temperature=None: the checkpoint's own defaults decide, and its top_k=1 leaves one possible answer
    defaults = model.generate([conv], GenerationSettings(max_new_tokens=8, temperature=None, n=4, seed=0))[0]
    assert len(defaults) == 4 and len(set(defaults)) == 1


@pytest.mark.parametrize("kind, kinds", [
    ("qwen2_5_omni", {"image", "video", "audio"}), ("qwen2_vl", {"image", "video"}), ("qwen2_audio", {"audio"}),
])
def test_accepts_names_the_media_the_processor_can_take(loaded, kind, kinds):
    model = loaded(kind)
    assert model.accepts == kinds
    refused = {"image", "video", "audio"} - kinds
    parts = {"image": ImagePart(Image.new("RGB", (56, 56))), "video": VideoPart(_frames(2), fps=1.0),
             "audio": AudioPart(np.zeros(1600, dtype=np.float32), sr=16000)}
    for kind_refused in refused:
        conversation = [Message("user", [parts[kind_refused], TextPart("hi")])]
        with pytest.raises(GenerationError, match=f"takes no {kind_refused} input"):
            model.generate([conversation], GREEDY)
