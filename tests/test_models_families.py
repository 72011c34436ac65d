"""The hf adapter's generic path and its family table (models/families.py): each family with a tiny checkpoint
answers on every modality it lists; a model_type the table does not name loads through transformers' auto
mappings; the table's quirks (frames as images, pixel budget, template options, a refused family) take effect;
`--model-args` reach from_pretrained, and an unknown or misplaced one is refused before any weights load;
`hallubench models` lists the table and the adapters' arguments."""
import dataclasses
import json
import os
import re
from types import SimpleNamespace

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest
import transformers
from PIL import Image

from hallubench.cli.main import main
from hallubench.errors import ConfigError
from hallubench.models import AudioPart, GenerationSettings, ImagePart, Message, TextPart, VideoPart, get_model
from hallubench.models import model_config
from hallubench.models.configs import HFArgs
from hallubench.models.families import Family, auto_class_for, families, family_of, needs_newer_transformers
from hallubench.models.hf import HFChatModel
from hallubench.registry import MODEL_FAMILIES
from hallubench.testing.tiny_checkpoints import TINY_KINDS

GREEDY = GenerationSettings(max_new_tokens=4)
TESTED = [family for family in families() if family.tiny]
SMALL = {"min_pixels": 56 * 56, "max_pixels": 112 * 112}  # keeps the Omni processor's frames at a few patches


def _frames(count: int, seed: int = 0, size: int = 56) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (count, size, size, 3), dtype=np.uint8)


def _part(kind: str, seed: int = 0):
    if kind == "image":
        return ImagePart(Image.fromarray(_frames(1, seed)[0]))
    if kind == "video":
        return VideoPart(_frames(4, seed), fps=2.0)
    tone = 0.3 * np.sin(2 * np.pi * (440 + 100 * seed) * np.arange(16000) / 16000)
    return AudioPart(tone.astype(np.float32), 16000)


def _ask(*parts, question: str = "Is there a dog?"):
    return [Message("user", [*parts, TextPart(question)])]


def test_the_table_lists_at_least_15_families_each_with_its_documentation():
    listed = families()
    assert len(listed) >= 15
    model_types = [t for family in listed for t in family.model_types]
    assert len(model_types) == len(set(model_types))  # one family per model_type
    for family in listed:
        assert family.docs.startswith("https://huggingface.co/docs/transformers/")
        assert family_of(family.model_types[0]) is family
        assert family.tiny is None or family.tiny in TINY_KINDS
    # the six model_types the adapter took before the table, each with its tiny checkpoint
    for model_type in ("qwen2_vl", "qwen2_5_vl", "llava_onevision", "qwen2_5_omni", "qwen2_5_omni_thinker",
                       "qwen2_audio"):
        assert family_of(model_type).tiny


# The families issue 10 names (one of each group), by model_type.
NAMED = (("qwen2_vl",), ("qwen2_5_vl",), ("qwen3_vl",), ("qwen2_5_omni",), ("qwen3_omni_moe_thinker",),
         ("qwen2_audio",), ("llava_onevision",), ("llava_next_video",), ("video_llava", "video_llama_3"),
         ("internvl",), ("smolvlm", "idefics3"), ("gemma3",), ("gemma3n",), ("phi4_multimodal",),
         ("voxtral", "granite_speech", "audioflamingo3"), ("llama",), ("mistral",), ("qwen2", "qwen3"))


def test_every_family_has_a_tiny_checkpoint_or_says_why_not():
    for family in families():
        assert family.tiny or len(family.untested or family.unsupported or "") > 20, family.name
    for group in NAMED:  # each named family that has no tiny test says why
        assert all(family_of(t).tiny or family_of(t).untested or family_of(t).unsupported for t in group), group
        assert any(family_of(t).tiny for t in group), f"none of {group} is tested"
    with pytest.raises(ValueError, match="give either its tiny checkpoint kind or why it is untested"):
        Family("X", ("x",), (), "https://x")
    with pytest.raises(ValueError, match="give either its tiny checkpoint kind or why it is untested"):
        Family("X", ("x",), (), "https://x", tiny="llama", untested="no reason")


@pytest.mark.parametrize("family", TESTED, ids=[family.tiny for family in TESTED])
def test_each_tested_family_answers_on_every_modality_it_lists(family, tiny_checkpoint):
    options = SMALL if family.pixel_budget else {}
    model = get_model("hf", model=str(tiny_checkpoint(family.tiny)), dtype="float32", **options)
    assert model.family is family and model.accepts == frozenset(family.modalities)
    conversations = [_ask(_part(kind), question="Describe it.") for kind in family.modalities]
    conversations.append(_ask())  # text alone
    outputs = model.generate(conversations, GREEDY)
    assert len(outputs) == len(conversations) and all(isinstance(out[0], str) for out in outputs)
    assert outputs == [model.generate([conversation], GREEDY)[0] for conversation in conversations]


@pytest.mark.parametrize("family", [family for family in TESTED if "image" in family.modalities],
                         ids=lambda family: family.tiny)
def test_a_batch_gives_each_prompt_its_own_images(family, tiny_checkpoint):
    """Prompts with 0, 1 and 2 images in one call get the tokens transformers' own chat-template path gives each
    alone (a flat image list made LLaVA-OneVision read a two-image prompt as two one-image ones, and Gemma 3 and
    SmolVLM refuse a batch), and the answers each gets alone."""
    options = SMALL if family.pixel_budget else {}
    model = get_model("hf", model=str(tiny_checkpoint(family.tiny)), dtype="float32", **options)
    images = [_part("image", seed) for seed in (1, 2, 3)]
    conversations = [_ask(), _ask(images[0]), _ask(images[1], images[2])]
    batch = model.prepare(conversations)
    for row, conversation in enumerate(conversations):
        content = [{"type": "image", "image": part.image} if isinstance(part, ImagePart) else
                   {"type": "text", "text": part.text} for part in conversation[0].content]
        alone = model.processor.apply_chat_template([{"role": "user", "content": content}], tokenize=True,
                                                    return_dict=True, add_generation_prompt=True, return_tensors="pt",
                                                    **model.processor_kwargs)["input_ids"][0]
        assert batch["input_ids"][row][batch["attention_mask"][row].bool()].tolist() == alone.tolist(), row
    assert model.generate(conversations, GREEDY) == [model.generate([c], GREEDY)[0] for c in conversations]


def test_a_model_type_the_table_does_not_list_loads_through_the_auto_mappings(tiny_checkpoint, monkeypatch):
    monkeypatch.delitem(MODEL_FAMILIES, "llava")
    model = HFChatModel(str(tiny_checkpoint("llava")), dtype="float32")
    assert model.family is None and type(model.model).__name__ == "LlavaForConditionalGeneration"
    assert model.accepts == {"image"} and not model.text_only
    assert len(model.generate([_ask(_part("image"))], GREEDY)[0]) == 1


def test_remote_code_checkpoints_load_with_the_auto_class_they_declare():
    declared = SimpleNamespace(model_type="not_in_transformers", auto_map={"AutoConfig": "configuration.C",
                                                                            "AutoModelForCausalLM": "modeling.M"})
    assert auto_class_for(declared) == "AutoModelForCausalLM"
    assert auto_class_for(SimpleNamespace(model_type="not_in_transformers")) is None
    # the multimodal mappings come before the causal-LM one, which also lists gemma3 and phi4_multimodal
    assert auto_class_for(SimpleNamespace(model_type="gemma3")) == "AutoModelForMultimodalLM"
    assert auto_class_for(SimpleNamespace(model_type="qwen2_5_omni")) == "Qwen2_5OmniThinkerForConditionalGeneration"


def test_a_refused_family_says_why_before_any_weights_load(tmp_path):
    transformers.VoxtralConfig().save_pretrained(tmp_path)  # a config and no weights: loading them would fail
    with pytest.raises(ValueError, match=r"Voxtral \(voxtral\) is not supported by the hf adapter: .*--model openai"):
        HFChatModel(str(tmp_path))


def test_a_family_that_needs_a_newer_transformers_says_so_before_any_weights_load(tmp_path, monkeypatch):
    transformers.LlavaConfig().save_pretrained(tmp_path)  # a config and no weights: loading them would fail
    family = dataclasses.replace(family_of("llava"), min_transformers="99.0")
    for model_type in family.model_types:
        monkeypatch.setitem(MODEL_FAMILIES, model_type, family)
    with pytest.raises(ValueError, match=rf"LLaVA / LLaVA-NeXT needs transformers>=99.0 \(installed: "
                                         rf"{re.escape(transformers.__version__)}\); pip install -U"):
        HFChatModel(str(tmp_path))
    monkeypatch.setitem(MODEL_FAMILIES, "llava", dataclasses.replace(family, min_transformers=transformers.__version__))
    assert needs_newer_transformers(MODEL_FAMILIES["llava"]) is None


def test_frames_as_images_give_the_processor_exactly_those_images(tiny_checkpoint, monkeypatch):
    path = str(tiny_checkpoint("llava"))
    assert "video" not in HFChatModel(path, dtype="float32").accepts  # no video processor
    monkeypatch.setitem(MODEL_FAMILIES, "llava", dataclasses.replace(family_of("llava"), modalities=("image", "video"),
                                                                      video="images"))
    model = HFChatModel(path, dtype="float32")
    assert model.accepts == {"image", "video"}
    frames = _frames(3, seed=5)
    as_video = model.prepare([_ask(VideoPart(frames, fps=1.0))])
    as_images = model.prepare([_ask(*(ImagePart(Image.fromarray(frame)) for frame in frames))])
    assert as_video["input_ids"].tolist() == as_images["input_ids"].tolist()
    assert as_video["pixel_values"].shape[0] == 3
    assert (as_video["pixel_values"] == as_images["pixel_values"]).all()


def test_min_and_max_pixels_set_the_pixel_budget_of_families_that_take_one(tiny_checkpoint):
    path = str(tiny_checkpoint("qwen2_vl"))
    image = _ask(ImagePart(Image.fromarray(_frames(1, size=112)[0])))
    patches = {}
    for max_pixels in (None, 56 * 56):
        model = HFChatModel(path, dtype="float32", max_pixels=max_pixels)
        t, h, w = model.prepare([image])["image_grid_thw"][0].tolist()
        patches[max_pixels] = t * h * w
    assert patches == {None: 64, 56 * 56: 16}  # 112 px / 14 px patches, then 56 px
    assert model.fingerprint != HFChatModel(path, dtype="float32").fingerprint
    with pytest.raises(ValueError, match="min_pixels/max_pixels and processor_kwargs images_kwargs.size both"):
        HFChatModel(path, processor_kwargs={"images_kwargs": {"size": {"longest_edge": 1}}}, max_pixels=56 * 56)


def test_family_options_on_another_family_are_refused_before_any_weights_load(tiny_checkpoint, monkeypatch):
    def no_loading(*args, **kwargs):
        raise AssertionError("weights were loaded")

    monkeypatch.setattr("hallubench.models.hf.load_model", no_loading)
    with pytest.raises(ValueError, match=r"min_pixels=3136 is taken by Qwen2-VL, Qwen2\.5-VL, .* only; .* is llava"):
        HFChatModel(str(tiny_checkpoint("llava")), min_pixels=56 * 56)
    with pytest.raises(ValueError, match=r"use_audio_in_video=True is taken by Qwen2\.5-Omni \(thinker\)"):
        HFChatModel(str(tiny_checkpoint("qwen2_audio")), use_audio_in_video=True)


@pytest.fixture
def from_pretrained_calls(monkeypatch):
    """Every config, processor and model from_pretrained call (its class and keyword arguments), still done."""
    calls = []

    def spy(owner, name):
        original = getattr(owner, name).__func__

        def record(cls, *args, **kwargs):
            calls.append((cls.__name__, kwargs))
            return original(cls, *args, **kwargs)

        monkeypatch.setattr(owner, name, classmethod(record))

    spy(transformers.AutoConfig, "from_pretrained")
    spy(transformers.AutoProcessor, "from_pretrained")
    spy(transformers.AutoTokenizer, "from_pretrained")
    spy(transformers.PreTrainedModel, "from_pretrained")
    return calls


def test_an_unknown_model_argument_is_refused_naming_the_allowed_ones_before_anything_loads(
        tiny_checkpoint, from_pretrained_calls, tmp_path, capsys):
    path = str(tiny_checkpoint("llama"))
    with pytest.raises(ConfigError, match=r"unknown key\(s\) max_pixel \(did you mean 'max_pixels'.*\); allowed: "
                                          r"attn_implementation, batch_size, cache_implementation, device, device_map, "
                                          r"dtype, max_pixels, min_pixels, model, pretrained, processor_kwargs, "
                                          r"revision, trust_remote_code, use_audio_in_video"):
        model_config("hf", {"model": path, "max_pixel": 10})
    assert main(["run", "--model", "hf", "--model-args", f"pretrained={path},audio_in_video=true", "--tasks", "cmm",
                 "--data-dir", str(tmp_path), "--output-dir", str(tmp_path / "run")]) == 2
    assert "unknown key(s) audio_in_video (did you mean 'use_audio_in_video'?); allowed:" in capsys.readouterr().err
    for bad, message in (({"min_pixels": -1}, "min_pixels must be >= 1; got -1"),
                         ({"min_pixels": 200, "max_pixels": 100}, r"min_pixels \(200\) is above max_pixels \(100\)"),
                         ({"trust_remote_code": "yes"}, "trust_remote_code must be true or false"),
                         ({"cache_implementation": "statik"}, "cache_implementation must be one of static, ")):
        with pytest.raises(ConfigError, match=message):
            model_config("hf", {"model": path, **bad})
    assert from_pretrained_calls == []


def test_model_arguments_reach_from_pretrained(tiny_checkpoint, from_pretrained_calls):
    model = get_model("hf", **model_config("hf", {"model": str(tiny_checkpoint("llama")), "dtype": "float32",
                                                  "device_map": "cpu", "trust_remote_code": True,
                                                  "attn_implementation": "eager"}))
    assert model.text_only and model.device == "cpu" and model.attn_implementation == "eager"
    loaded = {name: kwargs for name, kwargs in from_pretrained_calls}
    assert set(loaded) == {"AutoConfig", "AutoTokenizer", "LlamaForCausalLM"}
    assert all(kwargs["trust_remote_code"] is True and kwargs["revision"] is None for kwargs in loaded.values())
    assert loaded["LlamaForCausalLM"]["device_map"] == "cpu"
    assert loaded["LlamaForCausalLM"]["attn_implementation"] == "eager"


def _text_lm_copy(source, out, template, bos="<|endoftext|>"):
    """The tiny Llama with a tokenizer that adds `bos` itself (as Llama's does) and the given chat template."""
    from tokenizers.processors import TemplateProcessing

    tokenizer = transformers.AutoTokenizer.from_pretrained(source)
    tokenizer.bos_token = bos
    tokenizer.backend_tokenizer.post_processor = TemplateProcessing(
        single=f"{bos} $A", special_tokens=[(bos, tokenizer.convert_tokens_to_ids(bos))])
    tokenizer.chat_template = template
    transformers.AutoModelForCausalLM.from_pretrained(source).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return str(out)


def test_a_templated_prompt_keeps_the_templates_special_tokens_only(tiny_checkpoint, tmp_path):
    source = tiny_checkpoint("llama")
    templated = _text_lm_copy(source, tmp_path / "templated",
                              "{{ bos_token }}{% for m in messages %}{{ m['content'] }}\n{% endfor %}")
    bare = _text_lm_copy(source, tmp_path / "bare", None)
    for path in (templated, bare):
        model = HFChatModel(path, dtype="float32")
        ids = model.prepare([_ask()])["input_ids"][0].tolist()
        assert ids.count(model.tokenizer.bos_token_id) == 1 and ids[0] == model.tokenizer.bos_token_id


def test_a_familys_template_options_reach_its_chat_template(tiny_checkpoint, tmp_path):
    """Qwen3's table entry asks for the non-thinking mode (enable_thinking=False)."""
    source = tiny_checkpoint("llama")
    tokenizer = transformers.AutoTokenizer.from_pretrained(source)
    tokenizer.chat_template = ("{% for m in messages %}{{ m['content'] }}{% endfor %}"
                               "{% if enable_thinking is defined and not enable_thinking %} NO_THINK{% endif %}")
    config = transformers.Qwen3Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=16)
    transformers.Qwen3ForCausalLM(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    model = HFChatModel(str(tmp_path), dtype="float32")
    assert model.family.name == "Qwen3 (text)"
    assert model.tokenizer.decode(model.prepare([_ask()])["input_ids"][0]).endswith("NO_THINK")


def test_hallubench_models_lists_the_families_and_each_adapters_arguments(capsys):
    assert main(["models", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [family["name"] for family in listing["families"]] == [family.name for family in families()]
    omni = next(family for family in listing["families"] if "qwen2_5_omni" in family["model_types"])
    assert omni["modalities"] == ["image", "video", "audio"] and "use_audio_in_video" in omni["arguments"]
    assert omni["tested_with_tiny"] == "qwen2_5_omni" and omni["docs"].endswith("qwen2_5_omni")
    hf = {field["name"]: field for field in listing["adapters"]["hf"]}
    assert list(hf) == HFArgs.keys() and hf["model"]["required"] and hf["dtype"]["default"] == "auto"
    assert hf["min_pixels"]["type"] == "int | None" and "base_url" in {f["name"] for f in listing["adapters"]["openai"]}

    assert main(["models"]) == 0
    table = capsys.readouterr().out
    for family in families():
        row = next(line for line in table.splitlines() if line.startswith(family.name + "  "))
        tested = "REFUSED" if family.unsupported else "tiny" if family.tiny else "untested"
        assert f"  {tested}  " in row and ", ".join(family.model_types) in row
    assert "REFUSED" in table
    assert main(["models", "hf"]) == 0  # an adapter's keys with their types: its detail
    assert re.search(r"^  use_audio_in_video +bool", capsys.readouterr().out, re.M)


def test_a_processor_without_a_template_uses_its_tokenizers_else_is_refused(tiny_checkpoint, monkeypatch):
    """Phi-4-multimodal's processor loses its template on loading in transformers 5.23; its tokenizer keeps it."""
    path = str(tiny_checkpoint("llava"))
    expected = HFChatModel(path, dtype="float32")
    original = transformers.AutoProcessor.from_pretrained.__func__
    dropped = []

    def drop_template(cls, *args, **kwargs):  # what Phi4MultimodalProcessor's loading does
        processor = original(cls, *args, **kwargs)
        processor.chat_template = None
        for part in dropped:
            getattr(processor, part).chat_template = None
        return processor

    monkeypatch.setattr(transformers.AutoProcessor, "from_pretrained", classmethod(drop_template))
    model = HFChatModel(path, dtype="float32")
    assert model.processor.chat_template == expected.processor.chat_template is not None
    conversation = [_ask(_part("image"))]
    assert model.prepare(conversation)["input_ids"].tolist() == expected.prepare(conversation)["input_ids"].tolist()
    dropped.append("tokenizer")
    with pytest.raises(ValueError, match="neither its processor nor its tokenizer has a chat template"):
        HFChatModel(path)


def test_a_family_that_cannot_mix_media_refuses_a_prompt_mixing_them(tiny_checkpoint):
    model = get_model("hf", model=str(tiny_checkpoint("smolvlm")), dtype="float32")
    with pytest.raises(ValueError, match=r"\(SmolVLM\) cannot take image and video in one prompt"):
        model.prepare([_ask(_part("image"), _part("video"))])
    assert len(model.generate([_ask(_part("image")), _ask(_part("video"))], GenerationSettings(max_new_tokens=2))) == 2


def test_a_cache_implementation_reaches_generate_and_a_static_cache_answers_as_the_default(tiny_checkpoint,
                                                                                         monkeypatch):
    from transformers.generation.configuration_utils import ALL_CACHE_IMPLEMENTATIONS

    from hallubench.models.configs import CACHE_IMPLEMENTATIONS

    assert CACHE_IMPLEMENTATIONS == tuple(ALL_CACHE_IMPLEMENTATIONS)  # our copy follows transformers'
    path = str(tiny_checkpoint("qwen2_vl"))
    default = get_model("hf", model=path, dtype="float32")
    static = get_model("hf", **model_config("hf", {"model": path, "dtype": "float32", "cache_implementation": "static"}))
    assert static.fingerprint != default.fingerprint
    calls = []
    generate = static.model.generate
    monkeypatch.setattr(static.model, "generate", lambda **kwargs: calls.append(kwargs) or generate(**kwargs))
    prompts = [_ask(_part("image")), _ask(_part("video", 1), question="What happens?")]
    greedy = GenerationSettings(max_new_tokens=4)
    assert static.generate(prompts, greedy) == default.generate(prompts, greedy)
    assert calls and all(call["cache_implementation"] == "static" for call in calls)
