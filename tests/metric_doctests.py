"""Checks shared by the metric tests: run the `>>>` examples of a docstring or README (loading metrics/<name> by
path) and check that a metric file imports nothing from hallubench."""
import ast
import doctest
import re
from pathlib import Path

import evaluate

METRICS = Path(__file__).resolve().parents[1] / "metrics"


class LocalEvaluate:
    """Test double for `evaluate` inside examples: `load("<name>")` loads metrics/<name> by path (no install)."""

    @staticmethod
    def load(name: str, *args, **kwargs):
        return evaluate.load(str(METRICS / name), *args, **kwargs)


def readme_examples(name: str) -> str:
    """The ```python blocks of metrics/<name>/README.md, joined (the closing fences would end doctest outputs)."""
    text = (METRICS / name / "README.md").read_text(encoding="utf-8")
    return "\n\n".join(re.findall(r"```python\n(.*?)```", text, flags=re.S))


def run_examples(text: str, label: str, extra_globals: dict | None = None) -> tuple[int, int, str]:
    """(failed, attempted, report) for the examples in `text`."""
    globs = {"evaluate": LocalEvaluate, **(extra_globals or {})}
    test = doctest.DocTestParser().get_doctest(text, globs, label, None, 0)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=report.append)
    failed, attempted = runner.summarize(verbose=False)
    return failed, attempted, "".join(report)


def assert_examples_pass(text: str, label: str) -> None:
    failed, attempted, report = run_examples(text, label)
    assert attempted > 0, f"{label} has no examples"
    assert failed == 0, report


def assert_standalone(name: str) -> None:
    """evaluate copies metrics/<name>/<name>.py alone, so it may import nothing from hallubench."""
    tree = ast.parse((METRICS / name / f"{name}.py").read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module or "." for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    offending = [module for module in imported if module.startswith(("hallubench", "."))]
    assert not offending, f"metrics/{name}/{name}.py imports {offending}"
