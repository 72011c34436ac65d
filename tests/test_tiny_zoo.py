"""Every tiny zoo family (testing/tiny_zoo.py) loads with plain transformers and generates from its own media.

Each case renders a conversation with the family's chat template, runs the real processor on random media (Voxtral:
its tokenizer renders the turn and loads base64 audio from it), checks that the processor expanded the media
placeholders, that the media reach the model (other pixels or samples give other logits), and that `generate` adds
exactly the requested tokens. The weights are random: nothing is asserted about the text. Families whose extra
package is missing skip, naming it (Granite Speech: torchaudio, none built for this torch; Voxtral: mistral_common,
which wants numpy < 2.4).
"""
import base64
import hashlib
import io
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported: everything here is local

import numpy as np
import pytest
import soundfile
import torch
import transformers
from PIL import Image
from transformers.video_utils import VideoMetadata

from hallubench.testing.tiny_zoo import ZOO_FAMILIES, ZOO_SPECS, make_tiny_zoo_model

torch.set_num_threads(1)  # tiny models: threads only contend on the shared cores
NEW_TOKENS = 4
FPS = 2.0
# (family, media parts of one user turn); "soundtrack" is audio that belongs to the video before it.
CASES = [(family, (kind,)) for family in ZOO_FAMILIES for kind in ZOO_SPECS[family].media or ("text",)] + [
    ("qwen3_omni", ("video", "soundtrack")),
    ("gemma3n", ("image", "audio")),
    ("phi4_multimodal", ("image", "audio")),
]


@pytest.fixture(scope="module")
def zoo(tiny_checkpoint):
    """family -> (model, processor or tokenizer), loaded once per module (built once per session; a family whose
    extra package is missing skips, naming it)."""
    loaded = {}

    def load(family: str):
        if family not in loaded:
            folder = tiny_checkpoint(family)
            auto_class = getattr(transformers, ZOO_SPECS[family].auto_class)
            loader = transformers.AutoProcessor if ZOO_SPECS[family].media else transformers.AutoTokenizer
            loaded[family] = auto_class.from_pretrained(folder).eval(), loader.from_pretrained(folder)
        return loaded[family]

    return load


def _audio_extractor(processor):
    # Phi-4-multimodal and Granite Speech name it audio_processor, the others feature_extractor.
    return getattr(processor, "audio_processor", None) or processor.feature_extractor


def _render(processor, messages) -> str:
    # transformers 5.23 drops Phi-4-multimodal's processor template on load (its __init__ takes no chat_template);
    # the tokenizer keeps the same template.
    renderer = processor if getattr(processor, "chat_template", None) else processor.tokenizer
    return renderer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def _wav_base64(samples: np.ndarray, rate: int) -> str:
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, rate, format="WAV")
    return base64.b64encode(buffer.getvalue()).decode()


def _inputs(family: str, processor, media: tuple[str, ...], seed: int):
    """(processor inputs, token count of the same turn with unexpanded placeholders) for one user turn with
    `media` parts (random content from `seed`) and a question."""
    rng = np.random.default_rng(seed)
    content, kwargs = [], {}
    for kind in media:
        if kind == "image":
            kwargs.setdefault("images", []).append(Image.fromarray(rng.integers(0, 256, (48, 64, 3), np.uint8)))
        elif kind == "video":
            frames = rng.integers(0, 256, (4, 48, 64, 3), np.uint8)
            kwargs.setdefault("videos", []).append(frames)
            metadata = VideoMetadata(total_num_frames=4, fps=FPS, width=64, height=48, duration=4 / FPS,
                                     frames_indices=[0, 1, 2, 3])
            kwargs["videos_kwargs"] = {"do_sample_frames": False, "video_metadata": [metadata], "fps": FPS}
        elif kind in ("audio", "soundtrack"):
            rate = _audio_extractor(processor).sampling_rate
            kwargs.setdefault("audio", []).append((0.1 * rng.standard_normal(rate)).astype(np.float32))
            kwargs["audio_kwargs"] = {"sampling_rate": rate}
        if kind == "soundtrack":  # no placeholder of its own: the processor interleaves it with the video's
            kwargs.update(load_audio_from_video=True, audio_from_video_indices=[0])
        elif kind != "text":
            content.append({"type": kind})
    question = {"type": "text", "text": "Is there a dog? Answer yes or no."}
    messages = [{"role": "user", "content": [*content, question]}]
    if media == ("text",):  # as a judge is prompted
        messages.insert(0, {"role": "system", "content": "You are a strict judge."})
        prompt = _render(processor, messages)
        inputs = processor([prompt], return_tensors="pt", add_special_tokens=False)
        return inputs, inputs["input_ids"].shape[1]
    if ZOO_SPECS[family].media_in_conversation:  # Voxtral: the tokenizer renders the turn and loads its audio
        parts = [{"type": "audio", "base64": _wav_base64(samples, kwargs["audio_kwargs"]["sampling_rate"])}
                 for samples in kwargs["audio"]]
        inputs = processor.apply_chat_template([{"role": "user", "content": [*parts, question]}])
        bare = processor.apply_chat_template([{"role": "user", "content": [question]}])
        return inputs, bare["input_ids"].shape[1] + len(parts)
    prompt = _render(processor, messages)
    unexpanded = len(processor.tokenizer(prompt, add_special_tokens=False)["input_ids"])
    return processor(text=[prompt], return_tensors="pt", **kwargs), unexpanded


@pytest.mark.parametrize(("family", "media"), CASES, ids=["-".join((f, *m)) for f, m in CASES])
def test_family_generates_from_its_media(zoo, family, media):
    model, processor = zoo(family)
    inputs, unexpanded = _inputs(family, processor, media, seed=0)
    length = inputs["input_ids"].shape[1]
    if media != ("text",):
        assert length > unexpanded, f"{family}: the processor did not expand the media placeholders"
    extra = {"use_audio_in_video": True} if "soundtrack" in media else {}

    with torch.no_grad():
        output = model.generate(**inputs, **extra, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                                do_sample=False, return_dict_in_generate=True, output_logits=True)
        assert output.sequences.shape == (1, length + NEW_TOKENS)
        assert torch.equal(output.sequences[:, :length], inputs["input_ids"])
        if media != ("text",):
            other, _ = _inputs(family, processor, media, seed=1)
            assert other["input_ids"].shape == inputs["input_ids"].shape
            other_logits = model(**other, **extra).logits[0, -1]
            assert not torch.allclose(output.logits[0][0], other_logits), f"{family}: other {media}, same logits"


@pytest.mark.parametrize("family", ["llama3", "qwen3_vl"])
def test_build_is_seeded(tmp_path, family):
    """Same seed: byte-identical folders; another seed: other weights."""
    first = make_tiny_zoo_model(family, tmp_path / "a")
    again = make_tiny_zoo_model(family, tmp_path / "b")
    other = make_tiny_zoo_model(family, tmp_path / "c", seed=1)

    def digests(folder: Path) -> dict[str, str]:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}

    assert digests(first) == digests(again)
    assert digests(first)["model.safetensors"] != digests(other)["model.safetensors"]


def test_unknown_family_names_the_choices(tmp_path):
    with pytest.raises(ValueError, match="qwen3_vl"):
        make_tiny_zoo_model("qwen9", tmp_path)
