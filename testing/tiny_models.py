"""Tiny random transformers checkpoints with real processors, built offline.

Untrained (random weights): they exercise the real processor, chat template and `generate` path in
tests and in the offline demo; their text is noise, and the demo says so.

`make_tiny_model(kind, out_dir)` writes a folder that `hallubench.models.get_model("hf", model=folder)`
(or `AutoProcessor.from_pretrained`) loads like a Hub checkpoint: config + random weights (1 layer,
hidden size 32), a byte-level BPE tokenizer trained on a few sentences with the Qwen special tokens,
the real image/video processors and WhisperFeatureExtractor, and a Qwen-style chat template.
Nothing touches the Hub. Building one takes a few seconds; cache it per session in a fixture.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    LlamaConfig,
    LlamaForCausalLM,
    LlavaConfig,
    LlavaForConditionalGeneration,
    LlavaOnevisionConfig,
    LlavaOnevisionForConditionalGeneration,
    LlavaOnevisionImageProcessor,
    LlavaOnevisionProcessor,
    LlavaOnevisionVideoProcessor,
    LlavaProcessor,
    PreTrainedTokenizerFast,
    Qwen2_5OmniProcessor,
    Qwen2_5OmniThinkerConfig,
    Qwen2_5OmniThinkerForConditionalGeneration,
    Qwen2_5_VLConfig,
    Qwen2_5_VLForConditionalGeneration,
    Qwen2_5_VLProcessor,
    Qwen2AudioConfig,
    Qwen2AudioForConditionalGeneration,
    Qwen2AudioProcessor,
    Qwen2VLConfig,
    Qwen2VLForConditionalGeneration,
    Qwen2VLImageProcessor,
    Qwen2VLProcessor,
    Qwen2VLVideoProcessor,
    SiglipImageProcessor,
    WhisperFeatureExtractor,
)

KINDS = ("qwen2_5_omni", "qwen2_vl", "qwen2_audio")
# Further kinds the hf adapter supports, built on request (not in every test's parametrization).
EXTRA_KINDS = ("qwen2_5_vl", "llava_onevision")
# Families the adapter loads through transformers' auto mappings alone (models/families.py names no class
# for them): an image-only one and a text-only causal LM.
GENERIC_KINDS = ("llava", "llama")

_CORPUS = [
    "Is there a dog barking in the video? Answer with yes or no.",
    "Yes, a dog is barking. No, there is no car. The sound is a bell ringing.",
    "Describe what you see and hear in this clip in one sentence.",
    "A red square moves left while a tone plays at 440 Hz.",
    "You are a helpful assistant.",
]
# Qwen2-VL family names; the Omni family uses <|IMAGE|>/<|VIDEO|> and vision_bos/eos instead.
VL_TOKENS = {"image_token": "<|image_pad|>", "video_token": "<|video_pad|>",
             "vision_start_token": "<|vision_start|>", "vision_end_token": "<|vision_end|>"}
_OMNI_TOKENS = {"image_token": "<|IMAGE|>", "video_token": "<|VIDEO|>", "audio_token": "<|AUDIO|>",
                "vision_bos_token": "<|vision_bos|>", "vision_eos_token": "<|vision_eos|>",
                "audio_bos_token": "<|audio_bos|>", "audio_eos_token": "<|audio_eos|>"}
_AUDIO_TOKENS = {"audio_token": "<|AUDIO|>", "audio_bos_token": "<|audio_bos|>", "audio_eos_token": "<|audio_eos|>"}

# Same structure as the released Qwen templates: a default system turn, one placeholder per media part.
_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}IMAGE_PLACEHOLDER"
    "{% elif content['type'] == 'video' %}VIDEO_PLACEHOLDER"
    "{% elif content['type'] == 'audio' %}AUDIO_PLACEHOLDER"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def qwen_chat_template(image: str, video: str, audio: str) -> str:
    return (_TEMPLATE.replace("IMAGE_PLACEHOLDER", image).replace("VIDEO_PLACEHOLDER", video)
            .replace("AUDIO_PLACEHOLDER", audio))


def train_tokenizer(named_tokens: dict[str, str], chat_tokens: tuple[str, ...] = ("<|endoftext|>", "<|im_start|>",
                    "<|im_end|>"), eos_token: str = "<|im_end|>", pad_token: str = "<|endoftext|>",
                    **token_roles: str) -> PreTrainedTokenizerFast:
    """Byte-level BPE over a few sentences, plus chat and media special tokens (Qwen's chat tokens unless given);
    `token_roles` names further roles such as bos_token."""
    specials = [*chat_tokens, *named_tokens.values()]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=specials, show_progress=False,  # it prints blank
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())       # lines to stdout
    bpe.train_from_iterator(_CORPUS, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token=eos_token, pad_token=pad_token,
                                  extra_special_tokens=named_tokens, **token_roles)
    return tok


def tiny_text_config(tok: PreTrainedTokenizerFast, **extra) -> dict:
    return dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=2048,
                eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=None, **extra)


# head_dim 16 -> 8 rotary frequencies split over (time, height, width).
MROPE = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}
# Small min/max pixels keep tiny clips at a few patches; the processors still run their real resize.
_VISION_SIZE = {"shortest_edge": 56 * 56, "longest_edge": 112 * 112}


def _vision_processors():
    return (Qwen2VLImageProcessor(size=_VISION_SIZE), Qwen2VLVideoProcessor(size=_VISION_SIZE))


def _build_qwen_vl(out: Path, config_cls, model_cls, processor_cls, vision_config: dict,
                   generation: dict | None = None) -> None:
    """Qwen2-VL and Qwen2.5-VL share tokens, processors and template; only the vision tower differs."""
    tok = train_tokenizer(VL_TOKENS)
    ids = {k: tok.convert_tokens_to_ids(v) for k, v in VL_TOKENS.items()}
    config = config_cls(
        text_config=tiny_text_config(tok, rope_parameters=MROPE), vision_config=vision_config,
        image_token_id=ids["image_token"], video_token_id=ids["video_token"],
        vision_start_token_id=ids["vision_start_token"], vision_end_token_id=ids["vision_end_token"])
    image_proc, video_proc = _vision_processors()
    processor = processor_cls(image_processor=image_proc, tokenizer=tok, video_processor=video_proc,
                              chat_template=qwen_chat_template("<|vision_start|><|image_pad|><|vision_end|>",
                                                               "<|vision_start|><|video_pad|><|vision_end|>", ""))
    model = model_cls(config)
    for key, value in (generation or {}).items():
        setattr(model.generation_config, key, value)
    save_checkpoint(model, processor, out)


def _build_qwen2_vl(out: Path) -> None:
    _build_qwen_vl(out, Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLProcessor,
                   dict(depth=1, embed_dim=32, hidden_size=32, num_heads=2, mlp_ratio=2))


def _build_qwen2_5_vl(out: Path) -> None:
    _build_qwen_vl(out, Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2_5_VLProcessor,
                   dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=32,
                        fullatt_block_indexes=[0]),
                   # The released Qwen2.5-VL generation_config.json samples with these near-greedy defaults.
                   generation=dict(do_sample=True, top_k=1, top_p=0.001, temperature=1e-6))


def _build_qwen2_5_omni(out: Path) -> None:
    tok = train_tokenizer(_OMNI_TOKENS)
    ids = {k: tok.convert_tokens_to_ids(v) for k, v in _OMNI_TOKENS.items()}
    config = Qwen2_5OmniThinkerConfig(
        text_config=tiny_text_config(tok, rope_parameters=MROPE),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=32,
                           fullatt_block_indexes=[0]),
        audio_config=dict(num_mel_bins=128, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=64,
                          d_model=32, output_dim=32),
        image_token_index=ids["image_token"], video_token_index=ids["video_token"],
        audio_token_index=ids["audio_token"], audio_start_token_id=ids["audio_bos_token"],
        audio_end_token_id=ids["audio_eos_token"], vision_start_token_id=ids["vision_bos_token"],
        user_token_id=tok.convert_tokens_to_ids("<|im_start|>"))
    image_proc, video_proc = _vision_processors()
    processor = Qwen2_5OmniProcessor(
        image_processor=image_proc, video_processor=video_proc,
        feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tok,
        chat_template=qwen_chat_template("<|vision_bos|><|IMAGE|><|vision_eos|>",
                                         "<|vision_bos|><|VIDEO|><|vision_eos|>",
                                         "<|audio_bos|><|AUDIO|><|audio_eos|>"))
    save_checkpoint(Qwen2_5OmniThinkerForConditionalGeneration(config), processor, out)


def _build_qwen2_audio(out: Path) -> None:
    tok = train_tokenizer(_AUDIO_TOKENS)
    config = Qwen2AudioConfig(
        text_config=dict(model_type="qwen2", **tiny_text_config(tok)),
        audio_config=dict(num_mel_bins=128, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=64,
                          d_model=32),
        audio_token_index=tok.convert_tokens_to_ids("<|AUDIO|>"))
    processor = Qwen2AudioProcessor(
        feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tok,
        chat_template=qwen_chat_template("", "", "Audio: <|audio_bos|><|AUDIO|><|audio_eos|>\n"))
    save_checkpoint(Qwen2AudioForConditionalGeneration(config), processor, out)


def _build_llava_onevision(out: Path) -> None:
    tokens = {"image_token": "<image>", "video_token": "<video>"}
    tok = train_tokenizer(tokens)
    # 28 px SigLIP with 14 px patches: 4 tokens per image tile, 1 per video frame after 2x2 pooling.
    pinpoints = [[28, 28], [28, 56], [56, 28], [56, 56]]
    config = LlavaOnevisionConfig(
        text_config=dict(model_type="qwen2", **tiny_text_config(tok)),
        vision_config=dict(model_type="siglip_vision_model", hidden_size=32, intermediate_size=64,
                           num_hidden_layers=1, num_attention_heads=2, image_size=28, patch_size=14),
        image_token_index=tok.convert_tokens_to_ids("<image>"), video_token_index=tok.convert_tokens_to_ids("<video>"),
        image_grid_pinpoints=pinpoints)
    processor = LlavaOnevisionProcessor(
        image_processor=LlavaOnevisionImageProcessor(size={"height": 28, "width": 28}, image_grid_pinpoints=pinpoints),
        video_processor=LlavaOnevisionVideoProcessor(size={"height": 28, "width": 28}),
        tokenizer=tok, num_image_tokens=4, vision_feature_select_strategy="full",
        chat_template=qwen_chat_template("<image>", "<video>", ""))
    save_checkpoint(LlavaOnevisionForConditionalGeneration(config), processor, out)


def _build_llava(out: Path) -> None:
    tok = train_tokenizer({"image_token": "<image>"})
    # 28 px SigLIP (no CLS token) with 14 px patches: 4 tokens per image.
    config = LlavaConfig(
        text_config=dict(model_type="llama", **tiny_text_config(tok)),
        vision_config=dict(model_type="siglip_vision_model", hidden_size=32, intermediate_size=64,
                           num_hidden_layers=1, num_attention_heads=2, image_size=28, patch_size=14),
        image_token_index=tok.convert_tokens_to_ids("<image>"), vision_feature_select_strategy="full")
    processor = LlavaProcessor(
        image_processor=SiglipImageProcessor(size={"height": 28, "width": 28}), tokenizer=tok, patch_size=14,
        num_additional_image_tokens=0, vision_feature_select_strategy="full",
        chat_template=qwen_chat_template("<image>", "", ""))
    save_checkpoint(LlavaForConditionalGeneration(config), processor, out)


def _build_llama(out: Path) -> None:
    tok = train_tokenizer({})
    tok.chat_template = qwen_chat_template("", "", "")
    save_checkpoint(LlamaForCausalLM(LlamaConfig(**tiny_text_config(tok))), tok, out)


_BUILDERS = {"qwen2_5_omni": _build_qwen2_5_omni, "qwen2_vl": _build_qwen2_vl, "qwen2_audio": _build_qwen2_audio,
             "qwen2_5_vl": _build_qwen2_5_vl, "llava_onevision": _build_llava_onevision, "llava": _build_llava,
             "llama": _build_llama}


def save_checkpoint(model, processor, out: Path) -> None:
    tokenizer = getattr(processor, "tokenizer", processor)  # a text LM's "processor" is its tokenizer
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    processor.save_pretrained(out)


def make_tiny_model(kind: str, out_dir: str | Path, seed: int = 0) -> Path:
    """Write a tiny random `kind` checkpoint (KINDS, EXTRA_KINDS or GENERIC_KINDS) under out_dir/kind and return that folder.

    `seed` sets the torch seed of the random weights: same kind, different seeds = different models."""
    if kind not in _BUILDERS:
        raise ValueError(f"unknown tiny model kind {kind!r}; choose one of {', '.join(_BUILDERS)}")
    out = Path(out_dir) / kind
    torch.manual_seed(seed)
    _BUILDERS[kind](out)
    return out


def make_full_omni_checkpoint(thinker_dir: str | Path, out_dir: str | Path) -> Path:
    """Repackage a tiny thinker as a full Qwen2.5-Omni checkpoint (model_type "qwen2_5_omni", weights
    under "thinker.") the way the released Qwen/Qwen2.5-Omni-* folders are laid out, minus talker weights."""
    from safetensors.torch import load_file, save_file
    from transformers import AutoConfig, Qwen2_5OmniConfig

    thinker_dir, out = Path(thinker_dir), Path(out_dir) / "qwen2_5_omni_full"
    shutil.copytree(thinker_dir, out, ignore=shutil.ignore_patterns("*.safetensors", "config.json"))
    thinker = AutoConfig.from_pretrained(thinker_dir)
    Qwen2_5OmniConfig(thinker_config=thinker.to_dict(), enable_audio_output=False).save_pretrained(out)
    weights = load_file(thinker_dir / "model.safetensors")
    save_file({f"thinker.{k}": v for k, v in weights.items()}, out / "model.safetensors", metadata={"format": "pt"})
    return out
