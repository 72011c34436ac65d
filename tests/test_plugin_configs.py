"""Adapter and judge arguments are typed configs: unknown or missing keys are refused, naming the allowed
ones, before anything loads; the configs' keys stay those of the constructors they feed."""
import inspect

import pytest

from hallubench.errors import ConfigError
from hallubench.judges.configs import EmbeddingJudgeArgs, LLMJudgeArgs, NLIJudgeArgs
from hallubench.models import model_config
from hallubench.models.configs import HFArgs, OpenAIArgs
from hallubench.ranking.judging import judge_config


def test_unknown_and_missing_keys_name_the_allowed_ones():
    with pytest.raises(ConfigError, match=r"^X: unknown key\(s\) bogus, colour; allowed: api_key_env, backoff, base_url"):
        OpenAIArgs.from_args({"model": "m", "bogus": 1, "colour": 2}, what="X")
    with pytest.raises(ConfigError, match="^X: missing model$"):
        HFArgs.from_args({"dtype": "float32"}, what="X")
    assert HFArgs.from_args({"model": "m", "batch_size": 2}, what="X").kwargs()["batch_size"] == 2


def test_model_args_are_checked_before_loading_anything(tmp_path, capsys):
    from hallubench.cli.main import main

    with pytest.raises(ConfigError, match=r"^--model-args for --model hf: unknown key\(s\) bogus"):
        model_config("hf", {"model": "/no/such/checkpoint", "bogus": 1})
    # through the CLI: the checkpoint does not exist, so reaching the loader would say "cannot load" instead
    assert main(["run", "--model", "hf", "--model-args", "pretrained=/no/such/checkpoint,bogus=1", "--tasks", "cmm",
                 "--data-dir", str(tmp_path), "--output-dir", str(tmp_path / "run")]) == 2
    assert "unknown key(s) bogus; allowed: attn_implementation" in capsys.readouterr().err


def test_from_yaml_reads_one_mapping_and_names_the_file(tmp_path):
    good, bad, listed = tmp_path / "good.yaml", tmp_path / "bad.yaml", tmp_path / "list.yaml"
    good.write_text("pretrained: some/mnli\nbatch_size: 8\n")
    bad.write_text("pretrained: some/mnli\nlabels: 3\n")
    listed.write_text("- pretrained\n")
    assert NLIJudgeArgs.from_yaml(good) == NLIJudgeArgs(pretrained="some/mnli", batch_size=8)
    with pytest.raises(ConfigError, match=rf"^{bad}: unknown key\(s\) labels; allowed: batch_size"):
        NLIJudgeArgs.from_yaml(bad)
    with pytest.raises(ConfigError, match=rf"^{listed}: expected a mapping"):
        NLIJudgeArgs.from_yaml(listed)


def test_llm_judge_checks_its_own_keys_and_passes_the_rest_to_the_adapter_config():
    config = judge_config("llm", {"pretrained": "/no/ckpt", "mode": "logprob", "dtype": "float32", "batch_size": 4})
    assert config == LLMJudgeArgs(mode="logprob", batch_size=4,
                                  model_args=HFArgs(model="/no/ckpt", dtype="float32", batch_size=4).kwargs())
    with pytest.raises(ConfigError, match=r"--judge llm \(besides adapter, batch_size, mode: the hf adapter.s\): "
                                          r"unknown key\(s\) temperature; allowed: .*dtype"):
        judge_config("llm", {"pretrained": "/no/ckpt", "temperature": 0.5})
    with pytest.raises(ConfigError, match="mode='sample': choose one of generate, logprob"):
        judge_config("llm", {"pretrained": "/no/ckpt", "mode": "sample"})
    with pytest.raises(ConfigError, match="unknown model adapter 'vllm'"):
        judge_config("llm", {"pretrained": "/no/ckpt", "adapter": "vllm"})


@pytest.mark.parametrize("config, constructor, hooks", [
    (HFArgs, "hallubench.models.hf:HFChatModel", set()),
    (OpenAIArgs, "hallubench.models.openai_compat:OpenAIChatModel", {"transport", "sleep"}),
    (EmbeddingJudgeArgs, "hallubench.judges.embedding:EmbeddingJudge", set()),
])
def test_config_keys_are_the_constructor_arguments(config, constructor, hooks):
    import importlib

    module, name = constructor.split(":")
    parameters = set(inspect.signature(getattr(importlib.import_module(module), name)).parameters) - {"self"}
    assert set(config.keys()) == parameters - hooks


def test_nli_config_keys_are_from_pretrained_and_the_judge_arguments():
    from hallubench.judges.nli import NLIJudge

    judge = set(inspect.signature(NLIJudge).parameters) - {"model", "tokenizer", "name"}
    assert set(NLIJudgeArgs.keys()) == judge | {"pretrained", "device"}
