"""GPU settings of the hf adapter, decided without a GPU: dtype auto -> bf16 where supported, flash-attention
when installed, device_map="auto", and the lm-eval style --device / --dtype flags reaching the adapter."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest
import torch

from hallubench import models
from hallubench.cli.main import main
from hallubench.harness.options import RunOptions
from hallubench.errors import ConfigError
from hallubench.harness import hub_model, preflight
from hallubench.harness.runner import load_model
from hallubench.models.hf import HFChatModel, resolve_attention, resolve_dtype
from hallubench.testing.tiny_models import make_tiny_model


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(make_tiny_model("qwen2_vl", tmp_path_factory.mktemp("gpu_settings")))


def test_dtype_auto_is_bf16_on_gpus_that_support_it(monkeypatch):
    assert resolve_dtype("auto", "cpu") == "auto"  # the checkpoint's own dtype on CPU
    assert resolve_dtype("float32", "cuda") == "float32"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert resolve_dtype("auto", "cuda") == resolve_dtype("auto", "cuda:1") == "bfloat16"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)  # e.g. a V100
    assert resolve_dtype("auto", "cuda") == "float16"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_dtype("auto", "auto") == "float16"


def test_flash_attention_when_installed_on_cuda_in_16_bit(monkeypatch):
    import transformers.utils

    monkeypatch.setattr(transformers.utils, "is_flash_attn_2_available", lambda: True)
    assert resolve_attention(None, "bfloat16", "cuda") == "flash_attention_2"
    assert resolve_attention(None, "float32", "cuda") is None  # flash-attention takes 16-bit only
    assert resolve_attention(None, "bfloat16", "cpu") is None  # transformers' default: sdpa
    monkeypatch.setattr(transformers.utils, "is_flash_attn_2_available", lambda: False)
    assert resolve_attention(None, "bfloat16", "cuda") is None
    assert resolve_attention("eager", "float32", "cpu") == "eager"
    with pytest.raises(ValueError, match="attn_implementation must be one of sdpa, flash_attention_2, eager"):
        resolve_attention("flash3", "bfloat16", "cuda")


def test_adapter_defaults_to_sdpa_takes_device_map_auto_and_other_kernels(tiny):
    default = HFChatModel(tiny, dtype="float32")
    assert default.attn_implementation == "sdpa"
    assert HFChatModel(tiny, dtype="float32", attn_implementation="sdpa").fingerprint == default.fingerprint
    eager = HFChatModel(tiny, dtype="float32", attn_implementation="eager")
    assert eager.attn_implementation == "eager" and eager.fingerprint != default.fingerprint
    spread = HFChatModel(tiny, dtype="float32", device="auto")  # device_map="auto": all on the CPU here
    assert spread.device == "cpu" and spread.fingerprint == default.fingerprint


class CapturingModel:
    """Test double: records the keyword arguments the runner builds the adapter with (a stand-in for hf, with its
    config: what the runner gives an adapter is read from it)."""

    seen: dict = {}
    config = models.HFArgs

    def __new__(cls, **kwargs):
        CapturingModel.seen = kwargs
        raise ValueError("captured")


def test_device_and_dtype_flags_reach_the_hf_adapter(monkeypatch):
    monkeypatch.setitem(models.MODELS, "hf", CapturingModel)
    monkeypatch.setattr(preflight, "check_device", lambda device, flag: None)  # cuda:1 on a machine without it
    monkeypatch.setattr(hub_model, "check_hub_model", lambda *args: None)  # org/m stands for a Hub id in the cache
    options = RunOptions(model="hf", model_args={"pretrained": "org/m"}, device="cuda:1", dtype="bfloat16")
    with pytest.raises(ConfigError, match="captured"):
        load_model(options, "cuda:0")
    given = ("model", "device", "batch_size", "dtype")
    assert {k: CapturingModel.seen[k] for k in given} == {"model": "org/m", "device": "cuda:1", "batch_size": 1,
                                                           "dtype": "bfloat16"}
    with pytest.raises(ConfigError):  # --model-args win over the flags; no flags: the accelerate device
        load_model(RunOptions(model="hf", model_args={"pretrained": "org/m", "dtype": "float32"}), "cuda:0")
    assert {k: CapturingModel.seen[k] for k in given} == {"model": "org/m", "device": "cuda:0", "batch_size": 1,
                                                           "dtype": "float32"}
    with pytest.raises(ConfigError, match="--dtype: 'float8' is not one of auto, bfloat16, float16, float32"):
        RunOptions(dtype="float8")


def test_device_and_dtype_are_run_flags(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = capsys.readouterr().out
    assert "--device" in help_text and "--dtype {auto,bfloat16,float16,float32}" in help_text
