"""More tiny random checkpoints with real processors, one per model family transformers ships, built offline.

`make_tiny_zoo_model(family, out_dir)` writes a folder that plain transformers loads like a Hub checkpoint
(`AutoProcessor`/`AutoTokenizer`, `AutoConfig`, the family's Auto model class): random weights (1 layer,
hidden size 32, small vision/audio towers), a byte-level BPE tokenizer with the family's special tokens
(`tiny_models.train_tokenizer`), the family's real image/video processors and feature extractors set to
small sizes, and a chat template in the family's style that takes the content types it accepts (Voxtral:
mistral_common's tokenizer renders the chat itself). `ZOO_SPECS[family]` says which Auto class loads it, which
media it takes and which extra packages it needs. Built seeded, so the same family and seed give the same
weights. See tiny_models.py for the five kinds the hf adapter has today.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from hallubench.testing.tiny_models import (
    MROPE,
    VL_TOKENS,
    qwen_chat_template,
    save_checkpoint,
    tiny_text_config,
    train_tokenizer,
)


@dataclass(frozen=True)
class ZooSpec:
    """How a tiny family is loaded and driven: the Auto class name, the media its processor takes (one placeholder
    per part in the chat template), and packages beyond hallubench's own that its processor or model imports."""

    auto_class: str
    media: tuple[str, ...]  # of "image", "video", "audio"; () for a text-only LM
    build: Callable[[Path], None]
    requires: tuple[str, ...] = ()
    # The processor takes media only inside the conversation (apply_chat_template with {"type": "audio",
    # "base64": ...} parts, tokenize=True), not as processor(audio=...) arrays: Voxtral.
    media_in_conversation: bool = False


def _template(media: dict[str, str], turns: dict[str, tuple[str, str]], generation: str, start: str = "") -> str:
    """A chat template: `start`, then each message as turns[role] = (opening, closing) around its content,
    where media parts become their placeholder text; `generation` opens the assistant turn."""
    media_branches = "".join(f"{{% elif part['type'] == {json.dumps(kind)} %}}{text}"
                             for kind, text in media.items())
    return (
        f"{{% set turns = {json.dumps(turns)} %}}{start}"
        "{% for message in messages %}{{ turns[message['role']][0] }}"
        "{% if message['content'] is string %}{{ message['content'] }}"
        "{% else %}{% for part in message['content'] %}"
        "{% if part['type'] == 'text' %}{{ part['text'] }}" + media_branches + "{% endif %}"
        "{% endfor %}{% endif %}{{ turns[message['role']][1] }}{% endfor %}"
        "{% if add_generation_prompt %}" + generation + "{% endif %}"
    )


# --- text-only causal LMs -------------------------------------------------------------------------------------

def _build_text_lm(out: Path, model_type: str, template: str, chat_tokens: tuple[str, ...] = ("<|endoftext|>",
                   "<|im_start|>", "<|im_end|>"), eos: str = "<|im_end|>", pad: str = "<|endoftext|>",
                   bos: str | None = None, **config) -> None:
    from transformers import AutoConfig, AutoModelForCausalLM

    tok = train_tokenizer({}, chat_tokens=chat_tokens, eos_token=eos, pad_token=pad,
                          **({"bos_token": bos} if bos else {}))
    tok.chat_template = template
    settings = {**tiny_text_config(tok, **config), "bos_token_id": tok.bos_token_id}
    save_checkpoint(AutoModelForCausalLM.from_config(AutoConfig.for_model(model_type, **settings)), tok, out)


def _build_llama3(out: Path) -> None:
    # Llama 3 instruct turn markup; the released template also adds a dated system turn, left out here.
    turns = {role: (f"<|start_header_id|>{role}<|end_header_id|>\n\n", "<|eot_id|>")
             for role in ("system", "user", "assistant")}
    template = _template({}, turns, "<|start_header_id|>assistant<|end_header_id|>\n\n", start="{{ bos_token }}")
    _build_text_lm(out, "llama", template, ("<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                                            "<|end_header_id|>", "<|eot_id|>"),
                   eos="<|eot_id|>", pad="<|end_of_text|>", bos="<|begin_of_text|>")


def _build_mistral(out: Path) -> None:
    # Mistral instruct markup: [INST] user [/INST] answer</s>, no generation prefix. The released v0.3 template puts
    # a system message inside the last [INST]; here it simply comes first.
    turns = {"system": ("", "\n\n"), "user": ("[INST] ", " [/INST]"), "assistant": ("", "</s>")}
    _build_text_lm(out, "mistral", _template({}, turns, "", start="{{ bos_token }}"),
                   ("<unk>", "<s>", "</s>", "[INST]", "[/INST]"), eos="</s>", pad="<unk>", bos="<s>",
                   sliding_window=None)


def _build_qwen2(out: Path) -> None:
    _build_text_lm(out, "qwen2", qwen_chat_template("", "", ""))


def _build_qwen3(out: Path) -> None:
    _build_text_lm(out, "qwen3", qwen_chat_template("", "", ""), head_dim=16)


# --- vision-language ------------------------------------------------------------------------------------------

def _build_qwen3_vl(out: Path) -> None:
    from transformers import (Qwen2VLImageProcessor, Qwen3VLConfig, Qwen3VLForConditionalGeneration,
                              Qwen3VLProcessor, Qwen3VLVideoProcessor)

    tok = train_tokenizer(VL_TOKENS)
    ids = {k: tok.convert_tokens_to_ids(v) for k, v in VL_TOKENS.items()}
    config = Qwen3VLConfig(
        text_config=tiny_text_config(tok, head_dim=16, rope_parameters={**MROPE, "mrope_interleaved": True}),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=32,
                           num_position_embeddings=16, deepstack_visual_indexes=[0]),
        image_token_id=ids["image_token"], video_token_id=ids["video_token"],
        vision_start_token_id=ids["vision_start_token"], vision_end_token_id=ids["vision_end_token"])
    # 16 px patches merged 2x2: a 64x64 image is 4 tokens.
    size = {"shortest_edge": 32 * 32, "longest_edge": 64 * 64}
    processor = Qwen3VLProcessor(
        image_processor=Qwen2VLImageProcessor(size=size, patch_size=16, image_mean=[0.5] * 3, image_std=[0.5] * 3),
        video_processor=Qwen3VLVideoProcessor(size={"shortest_edge": 32 * 32, "longest_edge": 4 * 64 * 64},
                                              cap_pixels_per_frame=True),
        tokenizer=tok, chat_template=qwen_chat_template("<|vision_start|><|image_pad|><|vision_end|>",
                                                        "<|vision_start|><|video_pad|><|vision_end|>", ""))
    save_checkpoint(Qwen3VLForConditionalGeneration(config), processor, out)


# Qwen3-Omni's own names for the media tokens (the processor reads them from the tokenizer).
_QWEN3_OMNI_TOKENS = {"image_token": "<|image_pad|>", "video_token": "<|video_pad|>", "audio_token": "<|audio_pad|>",
                      "vision_bos_token": "<|vision_start|>", "vision_eos_token": "<|vision_end|>",
                      "audio_bos_token": "<|audio_start|>", "audio_eos_token": "<|audio_end|>"}


def _build_qwen3_omni(out: Path) -> None:
    """The Qwen3-Omni thinker alone (text out), as hallubench uses the Omni models; MoE with 4 tiny experts."""
    from transformers import (Qwen2VLImageProcessor, Qwen2VLVideoProcessor, Qwen3OmniMoeProcessor,
                              Qwen3OmniMoeThinkerConfig, Qwen3OmniMoeThinkerForConditionalGeneration,
                              WhisperFeatureExtractor)

    tok = train_tokenizer(_QWEN3_OMNI_TOKENS)
    ids = {k: tok.convert_tokens_to_ids(v) for k, v in _QWEN3_OMNI_TOKENS.items()}
    config = Qwen3OmniMoeThinkerConfig(
        text_config=tiny_text_config(tok, head_dim=16, rope_parameters={**MROPE, "mrope_interleaved": True},
                                     num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=32,
                           num_position_embeddings=16, deepstack_visual_indexes=[0]),
        audio_config=dict(num_mel_bins=128, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=64,
                          d_model=32, output_dim=32, downsample_hidden_size=8),
        image_token_id=ids["image_token"], video_token_id=ids["video_token"], audio_token_id=ids["audio_token"],
        audio_start_token_id=ids["audio_bos_token"], vision_start_token_id=ids["vision_bos_token"],
        user_token_id=tok.convert_tokens_to_ids("<|im_start|>"))
    size = {"shortest_edge": 32 * 32, "longest_edge": 64 * 64}
    processor = Qwen3OmniMoeProcessor(
        image_processor=Qwen2VLImageProcessor(size=size, patch_size=16, image_mean=[0.5] * 3, image_std=[0.5] * 3),
        video_processor=Qwen2VLVideoProcessor(size=size, patch_size=16, image_mean=[0.5] * 3, image_std=[0.5] * 3,
                                              cap_pixels_per_frame=True),
        feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tok,
        chat_template=qwen_chat_template("<|vision_start|><|image_pad|><|vision_end|>",
                                         "<|vision_start|><|video_pad|><|vision_end|>",
                                         "<|audio_start|><|audio_pad|><|audio_end|>"))
    save_checkpoint(Qwen3OmniMoeThinkerForConditionalGeneration(config), processor, out)


# Vicuna-style markup of the LLaVA-NeXT-Video and Video-LLaVA releases: "USER: <video>\n... ASSISTANT:".
_VICUNA = {"system": ("", " "), "user": ("USER: ", " "), "assistant": ("ASSISTANT: ", "</s>")}
_LLAMA_TOKENS = dict(chat_tokens=("<unk>", "<s>", "</s>"), eos_token="</s>", pad_token="<unk>", bos_token="<s>")
# 28 px CLIP with 14 px patches: 4 patch tokens per image (+ CLS, dropped by the "default" feature strategy).
_CLIP = dict(model_type="clip_vision_model", hidden_size=32, intermediate_size=64, num_hidden_layers=1,
             num_attention_heads=2, image_size=28, patch_size=14, projection_dim=32)
_SQUARE_28 = dict(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28})


def _llava_tokenizer():
    tok = train_tokenizer({"image_token": "<image>", "video_token": "<video>"}, **_LLAMA_TOKENS)
    ids = dict(image_token_index=tok.convert_tokens_to_ids("<image>"),
               video_token_index=tok.convert_tokens_to_ids("<video>"))
    return tok, ids


def _build_llava_next_video(out: Path) -> None:
    from transformers import (LlavaNextImageProcessor, LlavaNextVideoConfig, LlavaNextVideoForConditionalGeneration,
                              LlavaNextVideoProcessor, LlavaNextVideoVideoProcessor)

    tok, ids = _llava_tokenizer()
    pinpoints = [[28, 28], [28, 56], [56, 28], [56, 56]]
    config = LlavaNextVideoConfig(text_config=dict(model_type="llama", **tiny_text_config(tok)), vision_config=_CLIP,
                                  image_grid_pinpoints=pinpoints, vision_feature_layer=-1, **ids)
    processor = LlavaNextVideoProcessor(
        image_processor=LlavaNextImageProcessor(image_grid_pinpoints=pinpoints, **_SQUARE_28),
        video_processor=LlavaNextVideoVideoProcessor(**_SQUARE_28), tokenizer=tok, patch_size=14,
        vision_feature_select_strategy="default", num_additional_image_tokens=1,
        chat_template=_template({"image": "<image>\n", "video": "<video>\n"}, _VICUNA, "ASSISTANT:"))
    save_checkpoint(LlavaNextVideoForConditionalGeneration(config), processor, out)


def _build_video_llava(out: Path) -> None:
    from transformers import (VideoLlavaConfig, VideoLlavaForConditionalGeneration, VideoLlavaImageProcessor,
                              VideoLlavaProcessor, VideoLlavaVideoProcessor)

    tok, ids = _llava_tokenizer()
    config = VideoLlavaConfig(text_config=dict(model_type="llama", **tiny_text_config(tok)), vision_config=_CLIP,
                              vision_feature_layer=-1, **ids)
    processor = VideoLlavaProcessor(
        image_processor=VideoLlavaImageProcessor(**_SQUARE_28), video_processor=VideoLlavaVideoProcessor(**_SQUARE_28),
        tokenizer=tok, patch_size=14, vision_feature_select_strategy="default", num_additional_image_tokens=1,
        chat_template=_template({"image": "<image>\n", "video": "<video>\n"}, _VICUNA, "ASSISTANT:"))
    save_checkpoint(VideoLlavaForConditionalGeneration(config), processor, out)


def _build_video_llama_3(out: Path) -> None:
    from transformers import (VideoLlama3Config, VideoLlama3ForConditionalGeneration, VideoLlama3ImageProcessor,
                              VideoLlama3Processor, VideoLlama3VideoProcessor)

    tokens = {"image_token": "<|image_pad|>", "video_token": "<|video_pad|>"}
    tok = train_tokenizer(tokens)
    config = VideoLlama3Config(
        text_config=dict(model_type="qwen2", **tiny_text_config(tok)),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           patch_size=14),
        image_token_id=tok.convert_tokens_to_ids(tokens["image_token"]),
        video_token_id=tok.convert_tokens_to_ids(tokens["video_token"]))
    # 14 px patches merged 2x2 (images) / video token compression on: a few tokens per frame.
    processor = VideoLlama3Processor(
        image_processor=VideoLlama3ImageProcessor(min_pixels=28 * 28, max_pixels=56 * 56),
        video_processor=VideoLlama3VideoProcessor(min_pixels=28 * 28, max_pixels=4 * 56 * 56),
        tokenizer=tok, chat_template=qwen_chat_template("<|image_pad|>", "<|video_pad|>", ""))
    save_checkpoint(VideoLlama3ForConditionalGeneration(config), processor, out)


def _build_internvl(out: Path) -> None:
    from transformers import (GotOcr2ImageProcessor, InternVLConfig, InternVLForConditionalGeneration,
                              InternVLProcessor, InternVLVideoProcessor)

    tokens = {"start_image_token": "<img>", "end_image_token": "</img>", "context_image_token": "<IMG_CONTEXT>",
              "video_token": "<video>"}
    tok = train_tokenizer(tokens)
    # 28 px tiles of 14 px patches, pixel-shuffled by 0.5: one <IMG_CONTEXT> per tile or frame.
    config = InternVLConfig(
        text_config=dict(model_type="qwen2", **tiny_text_config(tok)),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           image_size=28, patch_size=14),
        image_token_id=tok.convert_tokens_to_ids("<IMG_CONTEXT>"), image_seq_length=1)
    square = {"height": 28, "width": 28}
    processor = InternVLProcessor(
        image_processor=GotOcr2ImageProcessor(size=square, crop_to_patches=True, max_patches=4),
        video_processor=InternVLVideoProcessor(size=square), tokenizer=tok, image_seq_length=1,
        chat_template=qwen_chat_template("<IMG_CONTEXT>\n", "<video>\n", ""))
    save_checkpoint(InternVLForConditionalGeneration(config), processor, out)


# Idefics3 / SmolVLM markup: "<|im_start|>User:<image>...<end_of_utterance>\nAssistant:".
_IDEFICS_TURNS = {role: (f"{role.capitalize()}:", "<end_of_utterance>\n") for role in ("system", "user", "assistant")}
_IDEFICS_TOKENS = {"image_token": "<image>", "fake_image_token": "<fake_token_around_image>",
                   "global_image_token": "<global-img>", "end_of_utterance_token": "<end_of_utterance>"}


def _idefics_parts(model_type: str, media: dict[str, str]):
    """Tokenizer, config and template shared by Idefics3 and SmolVLM (SigLIP tower, pixel shuffle, Llama text).

    28 px tiles of 14 px patches shuffled by 2: one <image> token per tile (image_seq_len 1)."""
    from transformers import AutoConfig

    tokens = {**_IDEFICS_TOKENS, **({"video_token": "<video>"} if "video" in media else {})}
    tok = train_tokenizer(tokens, chat_tokens=("<|endoftext|>", "<|im_start|>"),
                          eos_token="<end_of_utterance>", pad_token="<|endoftext|>")
    config = AutoConfig.for_model(
        model_type, text_config=dict(model_type="llama", **tiny_text_config(tok)),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           image_size=28, patch_size=14),
        image_token_id=tok.convert_tokens_to_ids("<image>"), scale_factor=2)
    return tok, config, _template(media, _IDEFICS_TURNS, "Assistant:", start="<|im_start|>")


def _build_idefics3(out: Path) -> None:
    from transformers import Idefics3ForConditionalGeneration, Idefics3ImageProcessor, Idefics3Processor

    tok, config, template = _idefics_parts("idefics3", {"image": "<image>"})
    processor = Idefics3Processor(
        image_processor=Idefics3ImageProcessor(size={"longest_edge": 56}, max_image_size={"longest_edge": 28}),
        tokenizer=tok, image_seq_len=1, chat_template=template)
    save_checkpoint(Idefics3ForConditionalGeneration(config), processor, out)


def _build_smolvlm(out: Path) -> None:
    from transformers import (SmolVLMForConditionalGeneration, SmolVLMImageProcessor, SmolVLMProcessor,
                              SmolVLMVideoProcessor)

    tok, config, template = _idefics_parts("smolvlm", {"image": "<image>", "video": "<video>"})
    processor = SmolVLMProcessor(
        image_processor=SmolVLMImageProcessor(size={"longest_edge": 56}, max_image_size={"longest_edge": 28}),
        video_processor=SmolVLMVideoProcessor(size={"longest_edge": 28}, max_image_size={"longest_edge": 28}),
        tokenizer=tok, image_seq_len=1, chat_template=template)
    save_checkpoint(SmolVLMForConditionalGeneration(config), processor, out)


# Gemma markup: "<bos><start_of_turn>user\n...<end_of_turn>\n<start_of_turn>model\n" (the released templates fold a
# system message into the first user turn; here it is a turn of its own).
_GEMMA_TURNS = {role: (f"<start_of_turn>{name}\n", "<end_of_turn>\n")
                for role, name in (("system", "system"), ("user", "user"), ("assistant", "model"))}
_GEMMA_CHAT = dict(chat_tokens=("<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"),
                   eos_token="<end_of_turn>", pad_token="<pad>", bos_token="<bos>")
_SIGLIP = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, image_size=28,
               patch_size=14)


def _build_gemma3(out: Path) -> None:
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3ImageProcessor, Gemma3Processor

    tokens = {"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>", "image_token": "<image_soft_token>"}
    tok = train_tokenizer(tokens, **_GEMMA_CHAT)
    ids = {k: tok.convert_tokens_to_ids(v) for k, v in tokens.items()}
    # 28 px SigLIP, 2x2 patches average-pooled to one soft token per image.
    config = Gemma3Config(
        text_config=tiny_text_config(tok, head_dim=16, query_pre_attn_scalar=16, sliding_window=64),
        vision_config=dict(model_type="siglip_vision_model", **_SIGLIP), mm_tokens_per_image=1,
        boi_token_index=ids["boi_token"], eoi_token_index=ids["eoi_token"], image_token_index=ids["image_token"])
    processor = Gemma3Processor(
        image_processor=Gemma3ImageProcessor(size={"height": 28, "width": 28}), tokenizer=tok, image_seq_length=1,
        chat_template=_template({"image": "<start_of_image>"}, _GEMMA_TURNS, "<start_of_turn>model\n",
                                start="{{ bos_token }}"))
    model = Gemma3ForConditionalGeneration(config)
    # The projector's input weight starts at zero (as in training from scratch), which would cut the image off.
    torch.nn.init.normal_(model.model.multi_modal_projector.mm_input_projection_weight, std=0.02)
    save_checkpoint(model, processor, out)


def _build_gemma3n(out: Path) -> None:
    """Gemma 3n with its real towers shrunk: timm's MobileNetV5 at 1/16 channels (timm fixes its fusion adapter's
    2048 outputs) pooled to 2x2 soft tokens, and a one-layer USM conformer for audio. Needs timm, as the release."""
    from transformers import (Gemma3nAudioFeatureExtractor, Gemma3nConfig, Gemma3nForConditionalGeneration,
                              Gemma3nProcessor, SiglipImageProcessor)

    tokens = {"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>", "image_token": "<image_soft_token>",
              "boa_token": "<start_of_audio>", "eoa_token": "<end_of_audio>", "audio_token": "<audio_soft_token>"}
    tok = train_tokenizer(tokens, **_GEMMA_CHAT)
    ids = {k.replace("_token", "_token_id"): tok.convert_tokens_to_ids(v) for k, v in tokens.items()}
    # As in the release, the vocabulary is text, then 8 vision and 8 audio "hard" token ids with their own embedding
    # tables; the model pads audio features with the last id.
    text_vocab = len(tok)
    text = tiny_text_config(tok, head_dim=16, sliding_window=64, layer_types=["full_attention"],
                            num_kv_shared_layers=0, hidden_size_per_layer_input=8, laurel_rank=4, altup_num_inputs=2,
                            vocab_size_per_layer_input=text_vocab)
    text["vocab_size"] = text_vocab + 16
    config = Gemma3nConfig(
        text_config=text,
        vision_config=dict(model_args={"channel_multiplier": 0.0625, "msfa_output_resolution": 2},
                           vocab_offset=text_vocab, vocab_size=8),
        audio_config=dict(hidden_size=32, conf_num_hidden_layers=1, conf_num_attention_heads=2,
                          sscp_conv_channel_size=[8, 8], vocab_offset=text_vocab + 8, vocab_size=8),
        vision_soft_tokens_per_image=4, **ids)
    processor = Gemma3nProcessor(
        feature_extractor=Gemma3nAudioFeatureExtractor(),
        image_processor=SiglipImageProcessor(size={"height": 64, "width": 64}, image_mean=[0.0] * 3,
                                             image_std=[1.0] * 3),
        tokenizer=tok, image_seq_length=4, audio_seq_length=config.audio_soft_tokens_per_image,
        chat_template=_template({"image": "<image_soft_token>", "audio": "<audio_soft_token>"}, _GEMMA_TURNS,
                                "<start_of_turn>model\n", start="{{ bos_token }}"))
    save_checkpoint(Gemma3nForConditionalGeneration(config), processor, out)


def _build_phi4_multimodal(out: Path) -> None:
    """Phi-4-multimodal without its LoRA adapters. The image processor fixes the 448 px crop geometry (it counts
    256 + 16 global tokens), so the one-layer vision tower still sees 448 px crops."""
    from transformers import (Phi4MultimodalConfig, Phi4MultimodalFeatureExtractor, Phi4MultimodalForCausalLM,
                              Phi4MultimodalImageProcessor, Phi4MultimodalProcessor)

    tokens = {"image_token": "<|image|>", "audio_token": "<|audio|>"}
    tok = train_tokenizer(tokens, chat_tokens=("<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"),
                          eos_token="<|end|>", pad_token="<|endoftext|>")
    ids = {k: tok.convert_tokens_to_ids(v) for k, v in tokens.items()}
    config = Phi4MultimodalConfig(
        **tiny_text_config(tok),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           feature_layer=-1, image_token_id=ids["image_token"]),
        audio_config=dict(hidden_size=32, intermediate_size=64, num_blocks=1, num_attention_heads=2,
                          ext_pw_out_channel=32, depthwise_separable_out_channel=32, nemo_conv_channels=8,
                          audio_token_id=ids["audio_token"]))
    turns = {role: (f"<|{role}|>", "<|end|>") for role in ("system", "user", "assistant")}
    processor = Phi4MultimodalProcessor(
        image_processor=Phi4MultimodalImageProcessor(dynamic_hd=4), audio_processor=Phi4MultimodalFeatureExtractor(),
        tokenizer=tok, chat_template=_template({"image": "<|image|>", "audio": "<|audio|>"}, turns, "<|assistant|>"))
    save_checkpoint(Phi4MultimodalForCausalLM(config), processor, out)


# Granite 3.x markup: "<|start_of_role|>user<|end_of_role|>...<|end_of_text|>\n".
_GRANITE_TURNS = {role: (f"<|start_of_role|>{role}<|end_of_role|>", "<|end_of_text|>\n")
                  for role in ("system", "user", "assistant")}


def _build_granite_speech(out: Path) -> None:
    """Granite Speech without its LoRA adapter (has_lora_adapter=False). Its feature extractor needs torchaudio."""
    from transformers import (GraniteSpeechConfig, GraniteSpeechFeatureExtractor,
                              GraniteSpeechForConditionalGeneration, GraniteSpeechProcessor)

    tok = train_tokenizer({"audio_token": "<|audio|>"},
                          chat_tokens=("<|end_of_text|>", "<|start_of_role|>", "<|end_of_role|>", "<|pad|>"),
                          eos_token="<|end_of_text|>", pad_token="<|pad|>")
    config = GraniteSpeechConfig(
        text_config=dict(model_type="granite", **tiny_text_config(tok)),
        encoder_config=dict(input_dim=160, num_layers=1, hidden_dim=32, feedforward_mult=2, num_heads=2,
                            output_dim=8, context_size=20, max_pos_emb=32),
        projector_config=dict(model_type="blip_2_qformer", hidden_size=32, num_hidden_layers=1,
                              num_attention_heads=2, intermediate_size=64, encoder_hidden_size=32,
                              cross_attention_frequency=1),
        audio_token_index=tok.convert_tokens_to_ids("<|audio|>"), has_lora_adapter=False)
    processor = GraniteSpeechProcessor(
        audio_processor=GraniteSpeechFeatureExtractor(), tokenizer=tok,
        chat_template=_template({"audio": "<|audio|>"}, _GRANITE_TURNS, "<|start_of_role|>assistant<|end_of_role|>"))
    save_checkpoint(GraniteSpeechForConditionalGeneration(config), processor, out)


def _build_audioflamingo3(out: Path) -> None:
    from transformers import (AudioFlamingo3Config, AudioFlamingo3ForConditionalGeneration, AudioFlamingo3Processor,
                              WhisperFeatureExtractor)

    tok = train_tokenizer({"audio_token": "<sound>"})
    config = AudioFlamingo3Config(
        text_config=dict(model_type="qwen2", **tiny_text_config(tok)),
        audio_config=dict(num_mel_bins=128, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                          hidden_size=32),
        audio_token_id=tok.convert_tokens_to_ids("<sound>"))
    processor = AudioFlamingo3Processor(feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tok,
                                        chat_template=qwen_chat_template("", "", "<sound>"))
    save_checkpoint(AudioFlamingo3ForConditionalGeneration(config), processor, out)


# Mistral's control tokens at their tekken ranks (Voxtral's processor hard-codes [AUDIO] = 24).
_TEKKEN_CONTROL = {**dict(enumerate(["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]",
                                     "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]",
                                     "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]",
                                     "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]"])),
                   24: "[AUDIO]", 25: "[BEGIN_AUDIO]", 32: "[ARGS]", 33: "[CALL_ID]", 34: "[TRANSCRIBE]"}


def _write_tekken(path: Path, num_special: int = 40) -> None:
    """A mistral_common tekken tokenizer file: the 256 bytes as the whole vocabulary, Mistral's control tokens, and
    Voxtral's audio settings (30 s chunks at 12.5 tokens per second)."""
    import base64

    special = [{"rank": i, "token_str": _TEKKEN_CONTROL.get(i, f"<SPECIAL_{i}>"), "is_control": True}
               for i in range(num_special)]
    vocab = [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": None} for i in range(256)]
    pattern = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    path.write_text(json.dumps({
        "config": {"pattern": pattern, "num_vocab_tokens": 256, "default_vocab_size": 256 + num_special,
                   "default_num_special_tokens": num_special, "version": "v7"},
        "vocab": vocab, "special_tokens": special,
        "audio": {"sampling_rate": 16000, "frame_rate": 12.5, "chunk_length_s": 30.0,
                  "audio_encoding_config": {"num_mel_bins": 128, "hop_length": 160, "window_size": 400}}}))


def _build_voxtral(out: Path) -> None:
    """Voxtral with a byte-level tekken tokenizer. Its tokenizer is mistral_common's (MistralCommonBackend), which
    also renders the chat (no jinja template) and loads the audio of the conversation."""
    from transformers import VoxtralConfig, VoxtralForConditionalGeneration, VoxtralProcessor, WhisperFeatureExtractor
    from transformers.tokenization_mistral_common import MistralCommonBackend

    out.mkdir(parents=True, exist_ok=True)
    _write_tekken(out / "tekken.json")
    tok = MistralCommonBackend(tokenizer_path=str(out / "tekken.json"))
    config = VoxtralConfig(
        text_config=dict(model_type="llama", vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                         max_position_embeddings=2048, bos_token_id=1, eos_token_id=2, pad_token_id=11),
        # The projector stacks 4 encoder frames: intermediate_size must be 4 x hidden_size.
        audio_config=dict(hidden_size=32, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
                          num_mel_bins=128),
        audio_token_id=24)
    save_checkpoint(VoxtralForConditionalGeneration(config),
                    VoxtralProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tok), out)


ZOO_SPECS: dict[str, ZooSpec] = {
    "qwen3_vl": ZooSpec("AutoModelForImageTextToText", ("image", "video"), _build_qwen3_vl),
    "qwen3_omni": ZooSpec("AutoModelForMultimodalLM", ("image", "video", "audio"), _build_qwen3_omni),
    "llava_next_video": ZooSpec("AutoModelForImageTextToText", ("image", "video"), _build_llava_next_video),
    "video_llava": ZooSpec("AutoModelForImageTextToText", ("image", "video"), _build_video_llava),
    "video_llama_3": ZooSpec("AutoModelForImageTextToText", ("image", "video"), _build_video_llama_3),
    "internvl": ZooSpec("AutoModelForImageTextToText", ("image", "video"), _build_internvl),
    "idefics3": ZooSpec("AutoModelForImageTextToText", ("image",), _build_idefics3),
    "smolvlm": ZooSpec("AutoModelForImageTextToText", ("image", "video"), _build_smolvlm, ("num2words",)),
    "gemma3": ZooSpec("AutoModelForImageTextToText", ("image",), _build_gemma3),
    "gemma3n": ZooSpec("AutoModelForImageTextToText", ("image", "audio"), _build_gemma3n, ("timm",)),
    "phi4_multimodal": ZooSpec("AutoModelForCausalLM", ("image", "audio"), _build_phi4_multimodal),
    "granite_speech": ZooSpec("AutoModelForMultimodalLM", ("audio",), _build_granite_speech, ("torchaudio",)),
    "audioflamingo3": ZooSpec("AutoModelForSeq2SeqLM", ("audio",), _build_audioflamingo3),
    "voxtral": ZooSpec("AutoModelForMultimodalLM", ("audio",), _build_voxtral, ("mistral_common",),
                       media_in_conversation=True),
    "llama3": ZooSpec("AutoModelForCausalLM", (), _build_llama3),
    "mistral": ZooSpec("AutoModelForCausalLM", (), _build_mistral),
    "qwen2": ZooSpec("AutoModelForCausalLM", (), _build_qwen2),
    "qwen3": ZooSpec("AutoModelForCausalLM", (), _build_qwen3),
}
ZOO_FAMILIES = tuple(ZOO_SPECS)


def make_tiny_zoo_model(family: str, out_dir: str | Path, seed: int = 0) -> Path:
    """Write a tiny random checkpoint of `family` (one of ZOO_FAMILIES) under out_dir/family; return the folder.

    `seed` sets the torch seed of the random weights: same family and seed, same weights."""
    if family not in ZOO_SPECS:
        raise ValueError(f"unknown tiny zoo family {family!r}; choose one of {', '.join(ZOO_FAMILIES)}")
    out = Path(out_dir) / family
    torch.manual_seed(seed)
    ZOO_SPECS[family].build(out)
    return out
