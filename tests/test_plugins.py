"""Plug-ins from outside the hallubench package, through the CLI: `--include` of a file, a folder or a module, and
an installed plug-in package (entry point group hallubench.plugins). tests/toy_plugin is one of each kind (a model
adapter, a judge, a benchmark with its builder, mini release and tasks, and a metric); tests/toy_benchmark.py a
benchmark in one file."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hallubench import registry
from hallubench.cli.main import main
from hallubench.errors import PluginImportError, RegistryError
from hallubench.registry import ALL, JUDGES, METRICS, MODELS, TASKS

TESTS = Path(__file__).resolve().parent
TOY_PLUGIN = TESTS / "toy_plugin"
TOY_BENCHMARK = TESTS / "toy_benchmark.py"
REPO = TESTS.parent


@pytest.fixture
def isolated(tmp_path):
    """Afterwards every registry, the record of what was included and sys.path are as they were, and the modules
    imported from the plug-ins are forgotten."""
    saved = [dict(r) for r in ALL]
    state = (list(registry._included), registry._entry_points, list(sys.path), set(sys.modules))
    yield
    for r, entries in zip(ALL, saved):
        r.clear()
        r.update(entries)
    registry._included[:], registry._entry_points, sys.path[:] = state[0], state[1], state[2]
    for name in set(sys.modules) - state[3]:
        where = str(getattr(sys.modules[name], "__file__", None) or "")
        if where.startswith((str(tmp_path), str(TOY_PLUGIN), str(TOY_BENCHMARK))):
            del sys.modules[name]


def _results(run: Path) -> dict:
    return json.loads((run / "results.json").read_text())


def test_one_of_each_kind_from_a_folder_runs_through_the_cli(isolated, tmp_path, capsys):
    plugins = tmp_path / "plugins"
    shutil.copytree(TOY_PLUGIN / "hallubench_toy", plugins / "hallubench_toy")
    include = ["--include", str(plugins)]
    assert main(["models", "--json", *include]) == 0
    assert [f["name"] for f in json.loads(capsys.readouterr().out)["adapters"]["toy_echo"]] == ["model", "device",
                                                                                                 "answer"]
    from hallubench.builders.mini import make_release

    data = tmp_path / "data"
    assert main(["build", "toyecho", "--source", str(make_release("toyecho", tmp_path / "release")),
                 "--out", str(data / "toyecho"), *include]) == 0
    runs = {}
    for answer in ("yes", "no"):
        runs[answer] = tmp_path / "runs" / answer
        assert main(["run", "--model", "toy_echo", "--model-args", f"pretrained=org/toy,answer={answer}",
                     "--tasks", "toyecho_qa,toyecho_describe", "--data-dir", str(data), "-o", str(runs[answer]),
                     *include]) == 0
    yes, no = _results(runs["yes"]), _results(runs["no"])
    # the package's own metric scored its task: references yes, no, yes
    assert yes["tasks"]["toyecho_qa"]["metrics"]["agreement"] == pytest.approx(2 / 3)
    assert no["tasks"]["toyecho_qa"]["metrics"]["agreement"] == pytest.approx(1 / 3)
    assert yes["run"]["options"]["include"] == [str(plugins.resolve())]  # what the run folder needs, recorded
    ranking = tmp_path / "ranking"
    assert main(["rank", str(runs["yes"]), str(runs["no"]), "--judge", "toy_overlap", "--cache",
                 str(tmp_path / "cache.sqlite"), "-o", str(ranking), *include]) == 0
    ranked = json.loads((ranking / "crosscheck.json").read_text())
    assert "toy-overlap:lowercase=True" in json.dumps(ranked) and ranked["config"]["plugins"]["include"] == [
        str(plugins.resolve())]
    assert "toyecho_describe" in capsys.readouterr().out


def test_a_benchmark_in_one_file_runs_through_the_cli(isolated, tmp_path):
    release = tmp_path / "release"
    release.mkdir()
    (release / "toy.json").write_text(json.dumps([{"question": "Is the sky blue?", "truth": "yes"}]))
    include = ["--include", str(TOY_BENCHMARK)]
    assert main(["build", "toybench", "--source", str(release), "--out", str(tmp_path / "data" / "toybench"),
                 *include]) == 0
    assert main(["run", "--model", "always_yes", "--model-args", "pretrained=toy", "--tasks", "toybench",
                 "--data-dir", str(tmp_path / "data"), "-o", str(tmp_path / "run"), *include]) == 0
    assert _results(tmp_path / "run")["tasks"]["toybench"]["metrics"]["pa"] == 1.0


def test_a_rescore_names_what_the_run_included(isolated, tmp_path, capsys):
    plugins = tmp_path / "plugins"
    shutil.copytree(TOY_PLUGIN / "hallubench_toy", plugins / "hallubench_toy")
    registry.include(plugins)
    from hallubench.builders import build
    from hallubench.builders.mini import make_release

    build("toyecho", make_release("toyecho", tmp_path / "release"), tmp_path / "data" / "toyecho")
    run = tmp_path / "run"
    assert main(["run", "--model", "toy_echo", "--model-args", "pretrained=org/toy", "--tasks", "toyecho_qa",
                 "--data-dir", str(tmp_path / "data"), "-o", str(run), "--include", str(plugins)]) == 0
    for name in [n for n in TASKS if n.startswith("toyecho")]:  # as in a new process without --include
        del TASKS[name]
    assert main(["run", "--from-outputs", str(run)]) == 2
    assert f"the run included plug-ins from {plugins.resolve()}: pass --include" in capsys.readouterr().err


def test_include_takes_a_file_a_folder_of_modules_and_metrics_or_a_module(isolated, tmp_path, monkeypatch):
    assert registry.include(TOY_BENCHMARK) == str(TOY_BENCHMARK)
    assert "toybench" in TASKS and "always_yes" in MODELS
    assert registry.include(TOY_BENCHMARK) == str(TOY_BENCHMARK)  # again: nothing happens
    folder = tmp_path / "folder"
    shutil.copytree(TOY_PLUGIN / "hallubench_toy", folder)  # its modules, top level, and a metric subfolder
    (folder / "__init__.py").unlink()
    registry.include(folder)
    assert {"toy_echo"} <= set(MODELS) and "toy_overlap" in JUDGES and {"toyecho_qa", "toyecho_describe"} <= set(TASKS)
    assert METRICS["toy_agreement"] == folder / "toy_agreement" / "toy_agreement.py"
    assert registry.plugin_sources()["include"] == [str(TOY_BENCHMARK), str(folder)]


def test_include_as_a_module_name(isolated, monkeypatch):
    monkeypatch.syspath_prepend(str(TOY_PLUGIN))
    assert registry.include("hallubench_toy") == "hallubench_toy"
    assert "toy_echo" in MODELS and METRICS["toy_agreement"].parent.name == "toy_agreement"


def test_include_errors_name_what_and_where(isolated, tmp_path, capsys):
    with pytest.raises(PluginImportError, match="--include nowhere/x.py: no such .py file or folder"):
        registry.include("nowhere/x.py")
    broken = tmp_path / "broken_plugin.py"
    broken.write_text("from hallubench.registry import register_model\n\nraise RuntimeError('half-written')\n")
    with pytest.raises(PluginImportError, match=rf"RuntimeError: half-written \({broken}:3\)"):
        registry.include(broken)
    taken = tmp_path / "json.py"  # a name another module has: refused, not silently the other module
    taken.write_text("")
    with pytest.raises(PluginImportError, match="the module name 'json' is taken"):
        registry.include(taken)
    clash = tmp_path / "clash.py"
    clash.write_text("from hallubench.registry import register_model\n\n@register_model('hf')\ndef hf(**args): ...\n")
    with pytest.raises(RegistryError, match="model adapter 'hf' is registered twice"):
        registry.include(clash)
    assert main(["run", "--include", str(tmp_path / "missing.py"), "--help"]) == 2
    assert "missing.py: no such .py file or folder" in capsys.readouterr().err


def _dist_info(site: Path, name: str, module: str) -> None:
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[hallubench.plugins]\n{name} = {module}\n")


def test_a_broken_installed_plugin_is_named_with_its_distribution(isolated, tmp_path, monkeypatch, capsys):
    site = tmp_path / "site"
    _dist_info(site, "broken-plugin", "broken_plugin_module")
    (site / "broken_plugin_module.py").write_text("import not_a_module_anywhere\n")
    monkeypatch.syspath_prepend(str(site))
    registry._entry_points = None  # as in a new process
    with pytest.raises(PluginImportError, match=r"plug-in broken-plugin = broken_plugin_module \(entry point group "
                       r"hallubench.plugins, from broken-plugin 0.1\) cannot be imported: ModuleNotFoundError"):
        registry.load_entry_points()
    assert main(["run", "--help"]) == 2
    assert "pip uninstall broken-plugin" in capsys.readouterr().err


LISTING = """
import sys
from hallubench.cli.main import main
for argv in (["models"], ["run", "--help"], ["rank", "--help"], ["--help"]):
    try:
        main(argv)
    except SystemExit:
        pass
print(sorted(name for name in ("torch", "transformers", "httpx") if name in sys.modules))
"""


def test_listing_plugins_imports_no_torch():
    out = subprocess.run([sys.executable, "-c", LISTING], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "[]"


@pytest.mark.slow  # pip builds and installs a package; then four hallubench processes
def test_an_installed_plugin_package_shows_up_and_runs(tmp_path):
    pytest.importorskip("wheel", reason="the test extra's wheel builds the package offline: pip install -e .[test]")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(shutil.copytree(TOY_PLUGIN, tmp_path / "src"))], check=True)
    assert (site / "hallubench_toy" / "toy_agreement" / "toy_agreement.py").is_file()
    env = {**os.environ, "PYTHONPATH": str(site), "HF_HUB_OFFLINE": "1"}

    def hallubench(*argv: str) -> str:
        done = subprocess.run([sys.executable, "-m", "hallubench", *argv], capture_output=True, text=True, env=env,
                              cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "\n  toy_echo " in hallubench("models")  # an adapter row of the listing
    assert "toy_echo" in hallubench("run", "--help") and "\n  toyecho_qa " in hallubench("tasks")
    release = tmp_path / "release"
    release.mkdir()
    (release / "questions.jsonl").write_text(json.dumps({"text": "Is the sky blue?", "label": True}) + "\n")
    hallubench("build", "toyecho", "--source", str(release), "--out", str(tmp_path / "data" / "toyecho"))
    hallubench("run", "--model", "toy_echo", "--model-args", "pretrained=org/toy", "--tasks", "toyecho_qa",
               "--data-dir", str(tmp_path / "data"), "-o", str(tmp_path / "run"))
    results = _results(tmp_path / "run")
    assert results["tasks"]["toyecho_qa"]["metrics"]["agreement"] == 1.0
    assert results["environment"]["packages"]["hallubench-toy-plugin"] == "0.1.0"


NEW_MODULES = {  # home package -> a new module of its folder, as ARCHITECTURE.md's "Where to add things" says
    "hallubench.models": ("dummy", "from hallubench.registry import register_model\n\n"
                                   "@register_model('dummy')\ndef dummy(**args): ...\n", MODELS),
    "hallubench.judges": ("planted", "from hallubench.config import PluginConfig\n"
                                     "from hallubench.registry import register_judge\n\n"
                                     "@register_judge('planted', config=PluginConfig)\ndef planted(config): ...\n",
                          JUDGES),
    "hallubench.benchmarks": ("newbench", "from hallubench.registry import register_parser\n\n"
                                          "@register_parser('planted_parser')\ndef parse(text): ...\n",
                              registry.PARSERS),
    "hallubench.builders.mini": ("newbench", "from hallubench.registry import register_mini_release\n\n"
                                             "@register_mini_release('planted_release')\ndef make(out): ...\n",
                                 registry.MINI_RELEASES),
}


@pytest.mark.parametrize("home", sorted(NEW_MODULES))
def test_a_new_module_in_a_home_folder_registers_itself(isolated, tmp_path, monkeypatch, home):
    import importlib

    package = importlib.import_module(home)
    name, source, kind = NEW_MODULES[home]
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])  # the folder, one file added
    registry.discover_modules(home, package.__path__)
    found = {"hallubench.models": "dummy", "hallubench.judges": "planted", "hallubench.benchmarks": "planted_parser",
             "hallubench.builders.mini": "planted_release"}[home]
    assert found in kind
    sys.modules.pop(f"{home}.{name}")
