"""Inputs in the weights' dtype: a bf16 model gets its media features in bf16 (Audio Flamingo 3's audio tower
does not cast them and fails on float32 features, as seen on an H100), while 1-D floats that feed the rotary
positions (seconds per temporal grid) stay float32."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import torch
from hallubench.models import AudioPart, GenerationSettings, Message, TextPart, VideoPart, get_model
from hallubench.testing.tiny_models import make_tiny_model
from hallubench.testing.tiny_zoo import make_tiny_zoo_model

AUDIO = AudioPart(np.sin(np.linspace(0, 880 * np.pi, 16000)).astype(np.float32), sr=16000)


def test_bf16_audio_model_takes_its_features_in_bf16(tmp_path):
    model = get_model("hf", model=str(make_tiny_zoo_model("audioflamingo3", tmp_path)), dtype="bfloat16")
    conversation = [Message("user", [AUDIO, TextPart("What do you hear?")])]
    features = [v for v in model.prepare([conversation]).values() if torch.is_floating_point(v)]
    assert features and all(v.dtype == torch.bfloat16 for v in features)
    assert len(model.generate([conversation], GenerationSettings(max_new_tokens=3))[0]) == 1


def test_rotary_seconds_per_grid_stay_float32_in_a_bf16_model(tmp_path):
    model = get_model("hf", model=str(make_tiny_model("qwen2_5_vl", tmp_path)), dtype="bfloat16")
    clip = VideoPart(np.random.default_rng(0).integers(0, 256, (4, 56, 56, 3), dtype=np.uint8), fps=3.0)
    inputs = model.prepare([[Message("user", [clip, TextPart("Describe it.")])]])
    assert inputs["pixel_values_videos"].dtype == torch.bfloat16
    assert inputs["second_per_grid_ts"].dtype == torch.float32
    assert inputs["second_per_grid_ts"].tolist() == [torch.tensor(2 / 3.0).item()]  # float32, not bf16 (0.66796875)
