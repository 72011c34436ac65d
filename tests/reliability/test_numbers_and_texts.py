"""One reader for numbers and texts from outside, watched by walking what takes them, not by listing cases.

Every number field of every registered model, judge and helper config, of GenerationSettings and of the run options,
and every flag of every CLI subcommand whose value is typed, is fed NaN, inf, -inf, 1e309, -1 and 10**400 (and
Hypothesis' floats and integers): each is taken only when finite and in the field's declared range, else refused with
a one-line ConfigError (a usage error for a flag) naming the field or flag, never a traceback. A field or flag added
later is in the walk without being listed. `--config` values are read as the same values on the command line are
(case 14: `api_key_env: None`); YAML is bounded (aliases, depth, size: case 18); a byte that is not UTF-8 is named
with its offset (case 17); an unknown results.json key (case 11) and a pickled checkpoint holding code (case 13) are
named errors."""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shutil
import time
import typing
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from hallubench import models
from hallubench.cli.main import build_parser, main
from hallubench.cli.run import build_options
from hallubench.config import PluginConfig, number_range, read_yaml, takes_number
from hallubench.errors import ConfigError, UnreadableResultsError, did_you_mean
from hallubench.harness.options import RunOptions, parse_kv
from hallubench.harness.results_schema import GroupResult, Results, TaskResult, read_results
from hallubench.judges.configs import ChatJudgeArgs
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import JUDGES, MODELS
from hallubench.testing.tiny_tools import make_tiny_grounding_dino, make_tiny_trocr

HOSTILE = ["nan", "inf", "-inf", "1e309", "-1", str(10 ** 400)]
ONE_LINE = 400  # characters: an error is a line a person reads, whatever value it quotes


def _number(text: str) -> float | int:
    try:
        return int(text)
    except ValueError:
        return float(text)


def fits(value: float | int, hint: typing.Any) -> bool:
    return not (isinstance(value, float) and not math.isfinite(value)) and value in number_range(hint)


def registered_configs() -> list[tuple[str, type[PluginConfig]]]:
    return [(f"{kind} {name}", registry[name].config) for kind, registry in (("model", MODELS), ("judge", JUDGES))
            for name in sorted(registry) if getattr(registry[name], "config", None) is not None]


def number_fields(cls: type) -> list[tuple[str, typing.Any]]:
    hints = typing.get_type_hints(cls, include_extras=True)
    return [(f.name, hints[f.name]) for f in dataclasses.fields(cls) if takes_number(hints[f.name])]


def required_args(cls: type[PluginConfig]) -> dict[str, typing.Any]:
    """Text for each field without a default (and a checkpoint for a judge that runs a chat model)."""
    args = {f.name: "x" for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    return {**args, "pretrained": "x"} if issubclass(cls, ChatJudgeArgs) else args


def assert_refused(err: BaseException, *names: str) -> None:
    text = str(err)
    assert "\n" not in text and len(text) < ONE_LINE, text
    assert any(name in text for name in names), text


def test_the_walk_finds_number_fields_everywhere():
    fields = [field for _, cls in registered_configs() for field, _ in number_fields(cls)]
    assert {"timeout", "retry_budget", "batch_size", "box_threshold"} <= set(fields)
    assert {"temperature", "top_p", "max_new_tokens"} <= {name for name, _ in number_fields(GenerationSettings)}


@pytest.mark.parametrize("name, cls", registered_configs(), ids=[name for name, _ in registered_configs()])
def test_every_number_field_of_every_plugin_config_takes_only_finite_numbers_in_its_range(name, cls):
    for field, hint in number_fields(cls):
        for text in HOSTILE:
            value = _number(text)
            if fits(value, hint):
                continue
            with pytest.raises(ConfigError) as err:
                cls.from_args({**required_args(cls), field: value}, what=f"--args of {name}")
            assert_refused(err.value, f"{field} must be")
            # the same value as text on the command line: the same refusal
            with pytest.raises(ConfigError) as err:
                cls.from_args({**required_args(cls), **parse_kv(f"{field}={text}", "--args")}, what="--args")
            assert_refused(err.value, f"{field} must be")


@pytest.mark.parametrize("name, cls", registered_configs(), ids=[name for name, _ in registered_configs()])
def test_fuzzed_numbers_are_taken_exactly_when_finite_and_in_range(name, cls):
    fields = number_fields(cls)
    values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2 ** 70, 2 ** 70))

    @settings(max_examples=25, deadline=None, database=None)
    @given(st.sampled_from(fields), values)
    def check(field_hint, value):
        field, hint = field_hint
        taken = fits(value, hint) and (takes_number(hint) is float or isinstance(value, int))
        try:
            cls.from_args({**required_args(cls), field: value}, what="--args")
        except ConfigError as err:
            assert not taken or "must be" not in str(err), err  # refused for another reason (a field's own check)
            assert_refused(err, field)
        else:
            assert taken, (field, value)

    check()


def test_generation_settings_and_run_options_check_their_numbers_by_their_annotations():
    for field, hint in number_fields(GenerationSettings):
        for text in ("nan", "inf", "-1"):
            if fits(_number(text), hint):
                continue
            with pytest.raises(ConfigError) as err:
                GenerationSettings(**{field: _number(text)})
            assert_refused(err.value, f"{field} must be")
    for field, _ in number_fields(RunOptions):
        with pytest.raises(ConfigError) as err:
            RunOptions(**{field: float("nan")})
        assert_refused(err.value, "--" + field.replace("_", "-"), "--limit")


def typed_flags() -> list[tuple[str, argparse.Action]]:
    """(command, action) for every flag of every subcommand that converts its value (argparse `type`)."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    return [(command, action) for command, sub in commands.items() for action in sub._actions
            if action.option_strings and action.type not in (None, Path, str)]


def test_no_flag_takes_an_unchecked_number():
    raw = [f"{command} {action.option_strings[0]}" for command, action in typed_flags() if action.type in (int, float)]
    assert raw == [], "a number flag needs cli/flags.number(...) (a range) instead of type=int/float"
    assert {"--limit", "--seed", "--fps", "--temperature", "--port"} <= \
        {action.option_strings[0] for _, action in typed_flags()}


@pytest.mark.parametrize("command, action", typed_flags(),
                         ids=[f"{c} {a.option_strings[0]}" for c, a in typed_flags()])
def test_every_typed_flag_refuses_hostile_numbers_in_one_line(command, action, capsys):
    flag = action.option_strings[0]
    for text in HOSTILE:
        hint = getattr(action.type, "hint", None)
        if hint is not None and fits(_number(text), hint):
            continue
        with pytest.raises(SystemExit) as exit_:
            main([command, f"{flag}={text}"])
        err = capsys.readouterr().err.strip()
        assert exit_.value.code == 2 and "Traceback" not in err, err
        assert len(err.splitlines()) == 1 and flag in err, err


def test_config_numbers_are_read_as_the_flags_read_them(tmp_path):
    run_flags = [action for command, action in typed_flags() if command == "run"]
    assert run_flags
    for action in run_flags:
        for text in (".nan", ".inf", "1e309", "-1"):
            config = tmp_path / "run.yaml"
            config.write_text(f"{action.dest}: {text}\n", encoding="utf-8")
            with pytest.raises(ConfigError) as err:
                build_options(argparse.Namespace(config=config))
            assert_refused(err.value, f"{action.dest}: ")
    config.write_text("model: openai\nmodel_args: {model: m, timeout: .nan}\n", encoding="utf-8")
    from hallubench.harness.preflight import model_arguments

    with pytest.raises(ConfigError) as err:
        model_arguments(build_options(argparse.Namespace(config=config)), "cpu")
    assert_refused(err.value, "timeout must be a finite number")


@pytest.mark.parametrize("text", ["None", "null", "NULL", "true", "False", "12", "1.5", "abc", "nan"])
def test_a_config_value_means_what_the_same_text_means_on_the_command_line(tmp_path, text):
    config = tmp_path / "run.yaml"
    config.write_text(f"model_args: {{api_key_env: {text}}}\ngen_kwargs: {{temperature: 1}}\n", encoding="utf-8")
    from_yaml = build_options(argparse.Namespace(config=config)).model_args["api_key_env"]
    from_flag = build_options(argparse.Namespace(model_args=f"api_key_env={text}")).model_args["api_key_env"]
    assert repr(from_yaml) == repr(from_flag)


def test_case_14_none_in_a_config_is_no_variable_named_none(tmp_path, monkeypatch):
    monkeypatch.delenv("None", raising=False)
    config = tmp_path / "run.yaml"
    config.write_text("model: openai\nmodel_args: {model: m, api_key_env: None}\n", encoding="utf-8")
    assert build_options(argparse.Namespace(config=config)).model_args["api_key_env"] is None


def bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + f"\nlimit: *a{levels}\n"


YAML_CASES = {"alias bomb": (bomb(9), "line 2: an alias (*name) is not taken"),
              "one alias": ("x: &a 3\nlimit: *a\n", "an alias"),
              "deep": ("limit: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than"),
              "huge": ("limit: 1\n" + "# padding\n" * 200_000, "larger than"),
              "long value": (f"limit: {'x' * 100_000}\n", "is not a value of --limit"),
              "not yaml": ("limit: [1, 2\n", "line 2, column 1")}


@pytest.mark.parametrize("command", ["run", "crosscheck"])
@pytest.mark.parametrize("name", YAML_CASES)
def test_yaml_is_bounded_and_its_errors_are_one_short_line(tmp_path, capsys, command, name):
    text, message = YAML_CASES[name]
    config = tmp_path / "c.yaml"
    config.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    try:
        read_yaml(config)
    except ConfigError:
        pass
    assert time.perf_counter() - started < 5  # the bomb is refused at its first alias, not expanded
    assert main([command, "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and len(err) < ONE_LINE and message in err and str(config) in err, err[:2000]


def test_a_byte_that_is_not_utf8_is_named_with_its_file_and_offset(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_bytes(b"model: hf\ntasks: pope\xff\n")
    assert main(["run", "--config", str(config)]) == 2
    assert f"{config}: byte 21 (0xff) is not UTF-8" in capsys.readouterr().err
    with pytest.raises(ConfigError, match=r"byte 21 \(0xff\) is not UTF-8"):
        JUDGES["nli"].config.from_yaml(config)
    results = tmp_path / "results.json"
    results.write_bytes(b'{"version": 2, "tasks": "\xe9"}')
    with pytest.raises(UnreadableResultsError, match=rf"{results}: byte 25 \(0xe9\) is not UTF-8"):
        read_results(results)
    config.write_bytes(b"\xef\xbb\xbfmodel: hf\n")  # a BOM, as editors on Windows write it, is no error
    assert read_yaml(config) == {"model": "hf"}


def results_dict() -> dict:
    return Results(tasks={"pope": TaskResult(groups={"all": GroupResult()})}).to_dict()


@pytest.mark.parametrize("where", ["tasks.pope", "tasks.pope.groups.all", "model", "run", "environment"])
def test_an_unknown_results_key_is_named_wherever_it_is(tmp_path, where):
    data = results_dict()
    part = data
    for key in where.split("."):
        part = part[key]
    part["surprise\nkey"] = 1
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UnreadableResultsError) as err:
        read_results(path)
    assert_refused(err.value, f"unknown key '{where}.surprise\\nkey'")
    assert str(path) in str(err.value)


def test_a_results_part_of_the_wrong_kind_is_named(tmp_path):
    for where, value in (("tasks", []), ("run", "x"), ("model", None)):
        data = {**results_dict(), where: value}
        with pytest.raises(UnreadableResultsError, match=rf"results.json: {where} is"):
            Results.from_dict(data)


def pickle_code_into(folder: Path, marker: Path) -> None:
    """Make the checkpoint `folder`'s weights a pytorch_model.bin whose pickle also holds code (it would touch
    `marker`), in place of its .safetensors."""
    import torch
    from safetensors.torch import load_file

    class Code:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    weights = next(folder.glob("*.safetensors"))
    torch.save({**load_file(weights), "x": Code()}, folder / "pytorch_model.bin")
    weights.unlink()


def test_a_pickled_checkpoint_holding_code_is_refused_unread(tiny_checkpoint, tmp_path):
    from hallubench.errors import UnsafeCheckpointError
    from hallubench.models.hf import HFChatModel

    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint("llama"), folder)
    pickle_code_into(folder, tmp_path / "ran")
    with pytest.raises(UnsafeCheckpointError) as err:
        HFChatModel(str(folder), dtype="float32")
    assert_refused(err.value, "pytorch_model.bin")
    assert not (tmp_path / "ran").exists()


def _judge(kind: str, key: str):
    def load(folder: Path, tmp_path: Path):
        from hallubench.ranking.judging import make_judge

        return make_judge(kind, {key: str(folder)})
    return load


def _search(folder: Path, tmp_path: Path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The cat sat on the mat.\n", encoding="utf-8")
    return models.get_model("search", model=str(corpus), embedder=str(folder))


def _scene_text(folder: Path, tmp_path: Path):
    detector = make_tiny_grounding_dino(tmp_path / "detector")  # safe: the refusal must be the OCR model's
    return models.get_model("scene_text", model=str(folder), detector=str(detector))


def _tiny_nli(folder: Path) -> Path:
    from nli_support import make_tiny_nli

    return make_tiny_nli(folder)


# Every load of a user-given checkpoint outside the hf adapter: (make the folder, load it as the user would).
CHECKPOINT_LOADS = {
    "nli judge": (_tiny_nli, _judge("nli", "pretrained")),
    "embedding judge": (_tiny_nli, _judge("embedding", "model_dir")),  # sentence-transformers: mean pooling
    "search embedder": (_tiny_nli, _search),
    "grounding_dino tool": (make_tiny_grounding_dino,
                            lambda folder, tmp_path: models.get_model("grounding_dino", model=str(folder))),
    "scene_text tool's OCR model": (make_tiny_trocr, _scene_text),
}


@pytest.mark.parametrize("load", sorted(CHECKPOINT_LOADS))
def test_every_other_checkpoint_load_refuses_pickled_code_as_the_adapter_does(load, tmp_path, monkeypatch):
    """The judges, the search adapter's embedder and the vision tools, each given a local tiny folder whose weights
    pickle code: the adapter's named one-line error, naming the folder and its file, and the code never runs."""
    from hallubench.errors import UnsafeCheckpointError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    build, open_checkpoint = CHECKPOINT_LOADS[load]
    folder = build(tmp_path / "ckpt")
    pickle_code_into(folder, tmp_path / "ran")
    with pytest.raises(UnsafeCheckpointError) as err:
        open_checkpoint(folder, tmp_path)
    assert_refused(err.value, "pytorch_model.bin")
    assert str(err.value).startswith(f"{folder}: its weights (pytorch_model.bin) are pickled")
    assert not (tmp_path / "ran").exists()


def test_did_you_mean_finds_short_names_and_unknown_model_arguments(capsys):
    assert did_you_mean("hg", ["hf", "openai"]) == " (did you mean 'hf'?)"
    assert did_you_mean("zzzz", ["hf", "openai"]) == ""
    assert main(["run", "--model", "hg", "--tasks", "pope", "--data-dir", "mini"]) == 2
    assert "'hg' (did you mean 'hf'?)" in capsys.readouterr().err
    assert main(["run", "--model", "hf", "--model-args", "pretrianed=x", "--tasks", "pope", "--data-dir", "mini"]) == 2
    assert "unknown key(s) pretrianed (did you mean 'pretrained'?)" in capsys.readouterr().err


def test_reference_scores_and_corpora_are_read_through_the_same_doors(tmp_path):
    from hallubench.models.search import read_corpus
    from hallubench.ranking.correlate import load_reference

    reference = tmp_path / "human.csv"
    reference.write_text("model,score\na,inf\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"human.csv:2: score 'inf' is not a finite number"):
        load_reference(reference)
    for path, read in ((reference, load_reference), (tmp_path / "corpus.txt", read_corpus)):
        path.write_bytes(b"model,score\nb\xfc,1\n")
        with pytest.raises(ConfigError, match=rf"{path}: byte 13 \(0xfc\) is not UTF-8"):
            read(path)
