"""The wheel holds one import namespace, `hallubench`, with every subpackage and its data files; installed into a
fresh venv, its first use makes the metrics load by bare name."""
import configparser
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from filelock import FileLock
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    # setuptools builds in the checkout (build/, *.egg-info): pytest-xdist workers take turns, or they clobber it.
    with FileLock(tmp_path_factory.getbasetemp().parent / "hallubench-wheel-build.lock"):
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                        str(ROOT)], check=True, capture_output=True)
    (path,) = out.glob("hallubench-*.whl")
    return zipfile.ZipFile(path)


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory, wheel) -> Path:
    """A new venv holding only the wheel (its dependencies come from the interpreter's own site-packages)."""
    venv = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-deps",
                    "-q", wheel.filename], check=True, capture_output=True)
    return venv


LOAD_BY_BARE_NAME = """
import json, sys
import evaluate
metric = evaluate.load("crosscheck")
print(json.dumps({"file": sys.modules[type(metric).__module__].__file__, "hallubench": "hallubench" in sys.modules}))
"""


def _offline_env(home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("HF_MODULES_CACHE", "PYTHONPATH")}
    env.update(HF_HOME=str(home), HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1")
    return env


def test_bare_name_load_needs_a_first_use_after_pip_install(fresh_venv, tmp_path):
    """The stated condition (docs: "bare names work after the first `hallubench` command, `import hallubench.metrics`
    or `hallubench metrics install` in that HF_HOME"): pip runs no code of ours, so before any first use evaluate
    finds nothing offline. Were this to pass one day (an install hook), the docs' condition could be dropped."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    loaded = subprocess.run([str(fresh_venv / "bin" / "python"), "-c", LOAD_BY_BARE_NAME], cwd=elsewhere,
                            env=_offline_env(tmp_path / "hf-home"), capture_output=True, text=True, timeout=300)
    assert loaded.returncode != 0 and "crosscheck" in loaded.stderr


@pytest.mark.parametrize("first_use", [["bin/hallubench", "--help"], ["bin/python", "-c", "import hallubench.metrics"],
                                       ["bin/hallubench", "metrics", "install"]],
                         ids=["cli-help", "import-metrics", "metrics-install"])
def test_first_use_after_pip_install_makes_bare_name_load_work_offline(fresh_venv, tmp_path, first_use):
    home, elsewhere = tmp_path / "hf-home", tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = _offline_env(home)
    used = subprocess.run([str(fresh_venv / first_use[0]), *first_use[1:]], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=300)
    assert used.returncode == 0, used.stderr
    loaded = subprocess.run([str(fresh_venv / "bin" / "python"), "-c", LOAD_BY_BARE_NAME], cwd=elsewhere, env=env,
                            capture_output=True, text=True, timeout=300)
    assert loaded.returncode == 0, loaded.stderr
    out = json.loads(loaded.stdout.strip().splitlines()[-1])
    cached = home / "modules" / "evaluate_modules" / "metrics" / "evaluate-metric--crosscheck"
    assert Path(out["file"]).is_relative_to(cached) and not out["hallubench"]


@pytest.fixture(scope="module")
def wheel_files(wheel) -> list[str]:
    return wheel.namelist()


def test_nothing_but_hallubench_lands_in_site_packages(wheel_files):
    tops = {name.split("/")[0] for name in wheel_files}
    assert {top for top in tops if not top.startswith("hallubench-")} == {"hallubench"}


def test_every_top_level_folder_with_code_is_a_subpackage(wheel_files):
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    mapped = {line.split("=")[1].strip() for line in config["options"]["package_dir"].strip().splitlines()}
    code_folders = {p.parent.name for p in ROOT.glob("*/__init__.py") if not p.parent.name.startswith(".")} | {"hallubench"}
    assert code_folders <= mapped, f"top-level folders missing from setup.cfg package_dir: {code_folders - mapped}"
    assert "hallubench/__main__.py" in wheel_files


def test_metric_modules_cards_and_dataset_cards_are_shipped(wheel_files):
    metrics = sorted(p.parent.name for p in (ROOT / "metrics").glob("*/*.py") if p.stem == p.parent.name)
    assert metrics, "no metric modules found"
    for name in metrics:
        assert f"hallubench/metrics/{name}/{name}.py" in wheel_files
        assert f"hallubench/metrics/{name}/README.md" in wheel_files
    for card in (ROOT / "builders" / "cards").glob("*.md"):
        assert f"hallubench/builders/cards/{card.name}" in wheel_files
    for data in [*(ROOT / "view" / "templates").glob("*.html"), *(ROOT / "view" / "assets").glob("*"),
                 *(ROOT / "view" / "published").glob("*.yaml")]:
        assert f"hallubench/view/{data.parent.name}/{data.name}" in wheel_files  # the viewer's templates, CSS, JS, published tables
    assert "hallubench/reproduce/sources.json" in wheel_files  # the pins of the authors' files `reproduce` fetches


def test_console_script_is_declared(wheel, wheel_files):
    entry_points = next(name for name in wheel_files if name.endswith("dist-info/entry_points.txt"))
    config = configparser.ConfigParser()
    config.read_string(wheel.read(entry_points).decode())
    assert config["console_scripts"]["hallubench"] == "hallubench.cli.main:main"


def _requirements(wheel, wheel_files) -> list:
    from packaging.requirements import Requirement

    metadata = next(name for name in wheel_files if name.endswith("dist-info/METADATA"))
    lines = wheel.read(metadata).decode().splitlines()
    return [Requirement(line.split(":", 1)[1].strip()) for line in lines if line.startswith("Requires-Dist:")]


def _constraints(name: str = "constraints.txt") -> dict[str, str]:
    from packaging.utils import canonicalize_name

    pins = {}
    for line in (ROOT / name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    return pins


def test_requirements_are_ranges_and_the_tested_pins_satisfy_them(wheel, wheel_files):
    """install_requires never pins exactly (hallubench must install beside vLLM or another transformers),
    and constraints.txt, which install.sh and CI use, pins every requirement inside its declared range."""
    from packaging.utils import canonicalize_name

    pins = _constraints()
    requirements = _requirements(wheel, wheel_files)
    assert requirements
    for req in requirements:
        assert not any(spec.operator in ("==", "===") for spec in req.specifier), f"{req} is an exact pin"
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} has no tested version in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), f"constraints.txt {name}=={pins[name]} is outside {req}"


def test_constraints_min_pins_each_library_at_its_declared_floor(wheel, wheel_files):
    """What CI's lowest-versions job installs is exactly the lower bound setup.cfg declares, so that job tests the floor."""
    from packaging.utils import canonicalize_name

    floors = {canonicalize_name(req.name): next(spec.version for spec in req.specifier if spec.operator == ">=")
              for req in _requirements(wheel, wheel_files) if any(spec.operator == ">=" for spec in req.specifier)}
    lowest = _constraints("constraints-min.txt")
    assert {"transformers", "huggingface-hub", "datasets", "accelerate", "evaluate"} <= set(lowest)
    for name, version in lowest.items():
        assert name in floors, f"constraints-min.txt pins {name}, which setup.cfg does not require with a floor"
        assert Version(version) == Version(floors[name]), f"constraints-min.txt {name}=={version}, setup.cfg >= {floors[name]}"
