"""Compiled decoding (a static cache) is the default on one CUDA device where transformers can compile the model
and the family table does not rule it out; its prompts are padded to 64-token buckets, and its answers are the
dynamic cache's."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import dataclasses

import pytest

from hallubench.models import GenerationSettings, Message, TextPart, get_model
from hallubench.models.families import Family
from hallubench.models.hf_loading import PROMPT_BUCKET, resolve_cache
from hallubench.testing.tiny_models import make_tiny_model

FAMILY = Family(name="stand-in", model_types=("x",), modalities=(), docs="", untested="a stand-in")


class Compilable:
    _can_compile_fullgraph = True


class NotCompilable:
    _can_compile_fullgraph = False


@pytest.mark.parametrize("requested,model,family,device,spread,expected", [
    (None, Compilable(), None, "cuda:0", False, "static"),
    (None, Compilable(), FAMILY, "cuda", False, "static"),
    (None, Compilable(), dataclasses.replace(FAMILY, compiled_decoding=False), "cuda:0", False, None),
    (None, NotCompilable(), None, "cuda:0", False, None),
    (None, Compilable(), None, "cpu", False, None),
    (None, Compilable(), None, "cuda:0", True, None),  # device_map spreads it: no single-device graph
    ("dynamic", Compilable(), None, "cuda:0", False, "dynamic"),
    ("static", NotCompilable(), None, "cpu", False, "static"),
])
def test_compiled_decoding_default(requested, model, family, device, spread, expected):
    assert resolve_cache(requested, model, family, device, spread) == expected


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_tiny_model("qwen2_vl", tmp_path_factory.mktemp("tiny"))


def test_static_cache_pads_prompts_to_buckets_and_answers_as_the_dynamic_cache(tiny):
    static = get_model("hf", model=str(tiny), dtype="float32", cache_implementation="static", batch_size=3)
    dynamic = get_model("hf", model=str(tiny), dtype="float32", batch_size=3)
    conversations = [[Message("user", [TextPart("Is there a dog? " * k)])] for k in (1, 3, 9)]
    padded = static.prepare(conversations)["input_ids"]
    assert padded.shape[1] % PROMPT_BUCKET == 0 and dynamic.prepare(conversations)["input_ids"].shape[1] % PROMPT_BUCKET
    greedy = GenerationSettings(max_new_tokens=5)
    assert static.generate(conversations, greedy) == dynamic.generate(conversations, greedy)
    assert static.fingerprint != dynamic.fingerprint  # its outputs may differ in rounding: other sample keys
    sampled = GenerationSettings(max_new_tokens=5, temperature=1.0, n=3)
    assert static.generate(conversations, sampled, seeds=[1, 2, 3]) == dynamic.generate(conversations, sampled,
                                                                                        seeds=[1, 2, 3])
