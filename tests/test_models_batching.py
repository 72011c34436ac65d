"""One batch may mix prompts with different numbers of images (the judges and multi-step tasks do): the adapter
passes each prompt's images as its own list, which Gemma 3 and Idefics3 processors count per prompt."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest
from PIL import Image
from hallubench.models import GenerationSettings, ImagePart, Message, TextPart, get_model
from hallubench.testing.tiny_zoo import make_tiny_zoo_model


def _image(seed):
    return ImagePart(Image.fromarray(np.random.default_rng(seed).integers(0, 256, (64, 64, 3), dtype=np.uint8)))


@pytest.mark.parametrize("family", ["gemma3", "idefics3"])
def test_a_batch_mixing_image_counts_answers_as_each_prompt_alone(family, tmp_path):
    model = get_model("hf", model=str(make_tiny_zoo_model(family, tmp_path)), dtype="float32", batch_size=4)
    prompts = [[Message("user", [_image(0), TextPart("Describe it.")])],
               [Message("user", [TextPart("Say yes or no.")])],
               [Message("user", [_image(1), _image(2), TextPart("Compare them.")])]]
    greedy = GenerationSettings(max_new_tokens=4)
    assert model.generate(prompts, greedy) == [model.generate([p], greedy)[0] for p in prompts]
