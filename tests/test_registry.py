"""One registry for every plug-in: conflicts are refused, unknown names list the valid ones, and a whole new
benchmark (tests/toy_benchmark.py) runs through `hallubench build` and `hallubench run` by registering
itself, with no other file changed."""
import importlib
import json
import sys

import pytest

from hallubench.errors import PluginImportError, RegistryError
from hallubench.registry import (ALL, BUILDERS, JUDGES, METRICS, MINI_RELEASES, MODEL_FAMILIES, MODELS, PARSERS, TASKS,
                                 LazyTarget, Registry)


@pytest.fixture
def toy():
    """Import the toy benchmark module; afterwards every registry is as it was."""
    saved = [dict(registry) for registry in ALL]
    sys.modules.pop("toy_benchmark", None)
    yield importlib.import_module("toy_benchmark")
    sys.modules.pop("toy_benchmark", None)
    for registry, entries in zip(ALL, saved):
        registry.clear()
        registry.update(entries)


def test_builtin_plugins_are_registered():
    """Each kind finds the seeds' plug-ins through its home package; what a plug-in names is registered too."""
    assert {"avhallubench", "cchall", "cmm", "mhalubench", "sac3"} <= set(BUILDERS) and set(MINI_RELEASES) <= set(BUILDERS)
    assert {"cmm", "cchall", "cchall_cot", "avhallubench_visual", "avhallubench_audio", "mhalubench"} <= set(TASKS)
    assert {"yes_no", "cchall_option", "text"} <= set(PARSERS)
    assert {"hf", "openai"} <= set(MODELS) and {"embedding", "nli", "llm", "implicit"} <= set(JUDGES)
    assert {"pa_hr", "cchall", "crosscheck", "mhalubench", "sac3"} <= set(METRICS)
    assert {"qwen2_5_omni", "qwen2_vl", "qwen2_5_vl", "llava_onevision", "qwen2_audio"} <= set(MODEL_FAMILIES)
    # every task names a registered parser and (when scored in one run) a registered metric, and its benchmark's builder
    assert all(t.parser in PARSERS and (t.metric is None or t.metric in METRICS) and t.benchmark in BUILDERS
               for t in TASKS.values())


def test_lazy_targets_are_read_without_importing_and_resolved_on_use():
    from hallubench.models.configs import HFArgs

    registry = Registry("widget", "hallubench.registry")
    registry.register("w", LazyTarget("widget", "w", "json:dumps", config=HFArgs))
    assert registry["w"].config is HFArgs and registry["w"]([1]) == "[1]"
    registry.register("w", LazyTarget("widget", "w", "json:dumps"))  # the same target again (a re-import)
    registry.register("bad", LazyTarget("widget", "bad", "json:no_such_thing"))
    with pytest.raises(PluginImportError, match="widget 'bad' is registered as 'json:no_such_thing', which cannot be "
                                                "imported"):
        registry["bad"]()
    with pytest.raises(RegistryError, match="not of the form 'package.module:object'"):
        LazyTarget("widget", "x", "json.dumps")


def test_a_name_taken_twice_is_refused_naming_both():
    registry = Registry("widget", "hallubench.registry")
    first = registry.decorator("w")(lambda: 1)
    assert registry.register("w", first) is first  # the same object again is harmless (a re-import)
    with pytest.raises(RegistryError, match="widget 'w' is registered twice"):
        registry.register("w", lambda: 2)
    with pytest.raises(KeyError, match="unknown widget 'v'; valid widgets: w"):
        registry.lookup("v")


def test_builtin_task_conflict_is_refused(toy):
    from hallubench.benchmarks import get_task

    with pytest.raises(RegistryError, match="task 'cmm'"):
        TASKS.register("cmm", toy.ToyBench)
    assert get_task("cmm").benchmark == "cmm"


def test_toy_benchmark_runs_through_build_and_run(toy, tmp_path, capsys):
    from hallubench.builders.mini import make_release
    from hallubench.cli.main import main

    release = make_release("toybench", tmp_path / "release")
    data = tmp_path / "data"
    assert main(["build", "toybench", "--source", str(release), "--out", str(data / "toybench")]) == 0
    # its dataset is a Hub benchmark too: eval.yaml lists the task's scores (its higher_is_better)
    assert "id: toybench_accuracy" in (data / "toybench" / "eval.yaml").read_text()
    out = tmp_path / "run"
    assert main(["run", "--model", "always_yes", "--model-args", "pretrained=toy", "--tasks", "toybench",
                 "--data-dir", str(data), "--output-dir", str(out)]) == 0
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert [r["parsed"] for r in records] == ["yes"] * len(toy.QUESTIONS)
    result = json.loads((out / "results.json").read_text())["tasks"]["toybench"]
    assert result["n_scored"] == 4 and result["metrics"]["pa"] == 1.0 and result["metrics"]["hr"] == 0.0
    assert "toybench" in capsys.readouterr().out
