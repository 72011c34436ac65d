"""A tiny random MNLI-style classifier (BERT, word-piece vocabulary of a few words) built offline."""
from pathlib import Path

import torch
from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"the a cat dog sat on mat is red blue paris in france big .".split()]
MNLI_LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}


def tiny_classifier(id2label: dict[int, str]) -> BertForSequenceClassification:
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=512, id2label=id2label, label2id={v: k for k, v in id2label.items()},
    )
    return BertForSequenceClassification(config).eval()


def tiny_tokenizer() -> BertTokenizer:
    return BertTokenizer(vocab={w: i for i, w in enumerate(VOCAB)})


def make_tiny_nli(folder: Path) -> Path:
    """Save a tiny entailment/neutral/contradiction classifier and its tokenizer into `folder`."""
    tiny_classifier(MNLI_LABELS).save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    return folder
