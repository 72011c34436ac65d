"""The wheel holds one import namespace, `hallubench`, with every subpackage and its data files."""
import configparser
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True)
    (path,) = out.glob("hallubench-*.whl")
    return zipfile.ZipFile(path)


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
    for data in [*(ROOT / "view" / "templates").glob("*.html"), *(ROOT / "view" / "assets").glob("*")]:
        assert f"hallubench/view/{data.parent.name}/{data.name}" in wheel_files  # the viewer's templates, CSS, JS


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


def _constraints() -> dict[str, str]:
    from packaging.utils import canonicalize_name

    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
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
