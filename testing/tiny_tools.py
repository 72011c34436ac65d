"""Tiny random checkpoints of the tool models (models/vision_tools.py), built offline for tests: a Grounding DINO
(Swin backbone, BERT text encoder, hidden size 32) and a TrOCR-style VisionEncoderDecoder OCR model (ViT encoder,
TrOCR decoder), each with its real processor and a WordPiece tokenizer over a few words. Their findings are noise."""
from __future__ import annotations

from pathlib import Path

import torch
from transformers import (BertConfig, BertTokenizer, GroundingDinoConfig, GroundingDinoForObjectDetection,
                          GroundingDinoImageProcessor, GroundingDinoProcessor, SwinConfig, TrOCRConfig, TrOCRProcessor,
                          ViTConfig, ViTImageProcessor, VisionEncoderDecoderConfig, VisionEncoderDecoderModel)

_WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "a", "the", "man", "dog", "cat", "car", "square", "circle",
          "word", "number", "stop", "hello", "world"]


def _tokenizer(out: Path) -> BertTokenizer:
    out.mkdir(parents=True, exist_ok=True)
    (out / "vocab.txt").write_text("\n".join(_WORDS) + "\n", encoding="utf-8")
    return BertTokenizer(str(out / "vocab.txt"))


def make_tiny_grounding_dino(out: str | Path, seed: int = 0) -> Path:
    out = Path(out)
    tokenizer = _tokenizer(out)
    backbone = SwinConfig(embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1], window_size=4, image_size=64,
                          out_features=["stage2", "stage3", "stage4"])
    text = BertConfig(vocab_size=len(_WORDS), hidden_size=32, num_hidden_layers=1, num_attention_heads=1,
                      intermediate_size=32, max_position_embeddings=64)
    # the smallest that builds: GroupNorm(32, d_model), two heads (the text enhancer uses half), two decoder layers
    config = GroundingDinoConfig(backbone_config=backbone, text_config=text, d_model=32, encoder_layers=1,
                                 decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
                                 encoder_ffn_dim=32, decoder_ffn_dim=32, num_queries=10, encoder_n_points=1,
                                 decoder_n_points=1, max_text_len=32, use_timm_backbone=False)
    torch.manual_seed(seed)
    GroundingDinoForObjectDetection(config).save_pretrained(out)
    images = GroundingDinoImageProcessor(size={"shortest_edge": 128, "longest_edge": 128})
    GroundingDinoProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(out)
    return out


def make_tiny_trocr(out: str | Path, seed: int = 0) -> Path:
    out = Path(out)
    tokenizer = _tokenizer(out)
    encoder = ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, image_size=32,
                        patch_size=8)
    decoder = TrOCRConfig(vocab_size=len(_WORDS), d_model=32, decoder_layers=1, decoder_attention_heads=2,
                          decoder_ffn_dim=32, max_position_embeddings=64)
    config = VisionEncoderDecoderConfig.from_encoder_decoder_configs(encoder, decoder)
    config.decoder_start_token_id, config.pad_token_id = tokenizer.cls_token_id, tokenizer.pad_token_id
    config.eos_token_id = tokenizer.sep_token_id
    torch.manual_seed(seed)
    model = VisionEncoderDecoderModel(config=config)
    model.generation_config.decoder_start_token_id = tokenizer.cls_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.sep_token_id
    model.save_pretrained(out)
    images = ViTImageProcessor(size={"height": 32, "width": 32})
    TrOCRProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(out)
    return out
