"""Every metric under metrics/ (found there, so a new one is covered at once): its docstring and card
examples run, and its module file imports nothing from hallubench (evaluate copies it alone)."""
import importlib

import pytest
from metric_doctests import METRICS, assert_examples_pass, assert_standalone, readme_examples

NAMES = sorted(p.parent.name for p in METRICS.glob("*/*.py") if p.stem == p.parent.name)


def test_every_metric_folder_is_registered_and_has_its_card():
    from hallubench.registry import METRICS as REGISTERED

    assert NAMES and set(NAMES) <= set(REGISTERED)  # the folder is the registration (hallubench.metrics)
    assert all((METRICS / name / "README.md").is_file() for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_docstring_examples_run(name):
    module = importlib.import_module(f"hallubench.metrics.{name}.{name}")
    assert_examples_pass(module._KWARGS_DESCRIPTION, f"{name} docstring")


@pytest.mark.parametrize("name", NAMES)
def test_readme_examples_run(name):
    assert_examples_pass(readme_examples(name), f"{name} README")


@pytest.mark.parametrize("name", NAMES)
def test_module_file_stands_alone(name):
    assert_standalone(name)
