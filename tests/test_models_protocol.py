"""Typed chat parts, generation settings and the adapter registry."""
import numpy as np
import pytest

from hallubench.models import (
    MODELS,
    AudioPart,
    ChatModel,
    GenerationSettings,
    Message,
    TextPart,
    VideoPart,
    get_model,
)


def test_video_part_rejects_wrong_layouts():
    VideoPart(np.zeros((2, 4, 4, 3), np.uint8), fps=1.0)
    for frames in (np.zeros((4, 4, 3), np.uint8), np.zeros((2, 3, 4, 4), np.uint8),
                   np.zeros((2, 4, 4, 3), np.float32), np.zeros((0, 4, 4, 3), np.uint8)):
        with pytest.raises(ValueError, match="VideoPart.frames"):
            VideoPart(frames, fps=1.0)
    with pytest.raises(ValueError, match="fps"):
        VideoPart(np.zeros((2, 4, 4, 3), np.uint8), fps=0)


def test_audio_part_is_mono_float32():
    part = AudioPart(np.zeros(10, np.float64), sr=16000)
    assert part.samples.dtype == np.float32
    with pytest.raises(ValueError, match="1-D mono"):
        AudioPart(np.zeros((2, 10), np.float32), sr=16000)
    with pytest.raises(ValueError, match="sr"):
        AudioPart(np.zeros(10, np.float32), sr=0)


def test_message_checks_role_and_parts():
    with pytest.raises(ValueError, match="role"):
        Message("robot", [TextPart("hi")])
    with pytest.raises(TypeError, match="TextPart"):
        Message("user", ["plain string"])


def test_generation_settings_defaults_and_validation():
    settings = GenerationSettings()
    assert (settings.max_new_tokens, settings.temperature, settings.top_p, settings.n, settings.seed) == \
        (256, 0.0, 1.0, 1, None)
    assert not settings.do_sample and GenerationSettings(temperature=0.5).do_sample
    assert GenerationSettings(temperature=None).model_default and GenerationSettings(temperature=None).do_sample
    for bad in ({"n": 0}, {"max_new_tokens": 0}, {"temperature": -1}, {"top_p": 0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            GenerationSettings(**bad)


def test_registry_has_exact_names_and_lists_them_on_error():
    assert {"hf", "openai"} <= set(MODELS)
    with pytest.raises(ValueError, match=f"unknown model adapter 'no_such_adapter'; valid model adapters: {', '.join(sorted(MODELS))}"):
        get_model("no_such_adapter")


def test_openai_adapter_satisfies_the_protocol(monkeypatch):
    monkeypatch.setenv("HB_PROTOCOL_KEY", "x")
    model = get_model("openai", model="m", base_url="http://127.0.0.1:9/v1", api_key_env="HB_PROTOCOL_KEY")
    assert isinstance(model, ChatModel)
