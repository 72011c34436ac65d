"""The pages generated from the code, committed under docs/ so that their links work as plain markdown (GitHub,
the Hub) as well as on the site; tests/test_docs.py fails when one differs from what this writes. Regenerate them
all with

    python docs/hooks/generated_pages.py


- `reference/cli.md`: every command's `--help`, from the argparse parsers `hallubench.cli.main` builds;
- `reference/tasks.md`: every task of the TASKS registry with its benchmark, metric and scoring;
- `reference/architecture.md`: the repository's ARCHITECTURE.md (layers, registries, the metric contract), as is;
- `metrics/<name>.md`: each metric's card (`metrics/<name>/README.md`, the single source), less the YAML header
  that makes it an evaluate Space, for every metric of the METRICS registry.

A benchmark or metric added next year gets its rows and page here without anyone listing it; a task whose
benchmark has no page under docs/benchmarks/ is a broken link, which `mkdocs build --strict` fails on.
As an MkDocs hook it orders the site's navigation.
"""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
REGENERATE = "python docs/hooks/generated_pages.py"
HELP_WIDTH = "100"  # argparse wraps --help to $COLUMNS: fixed, so the page does not depend on the terminal
# The sections of the navigation in reading order (MkDocs sorts folders by name); a folder not named here goes last.
SECTION_ORDER = ["Topics", "Benchmarks", "Methods", "Metrics", "Reference"]
TOPIC_ORDER = ["install", "mini-data", "building", "harness", "reading-output", "models", "gpu-and-vllm", "publishing",
               "viewer", "guarantees", "reproductions", "plugins"]


def on_nav(nav, config, files):
    rank = {title: n for n, title in enumerate(SECTION_ORDER)}
    nav.items.sort(key=lambda item: (item.is_section, rank.get(item.title, len(rank))))  # the home page first
    topics = next((item for item in nav.items if item.is_section and item.title == "Topics"), None)
    if topics:
        order = {f"topics/{name}.md": n for n, name in enumerate(TOPIC_ORDER)}
        topics.children.sort(key=lambda page: order.get(getattr(page.file, "src_uri", ""), len(order)))
    return nav


def generated_pages() -> dict[str, str]:
    from hallubench.registry import METRICS

    pages = {"reference/cli.md": (cli_reference(), "the command's parsers"),
             "reference/tasks.md": (task_reference(), "the task registry"),
             "reference/architecture.md": ((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"), "ARCHITECTURE.md")}
    for name in sorted(METRICS):
        card = METRICS[name].parent / "README.md"
        pages[f"metrics/{name}.md"] = (metric_page(card), f"metrics/{name}/README.md")
    return {path: f"<!-- Generated from {source} by `{REGENERATE}`: edit that, not this page. -->\n{text}"
            for path, (text, source) in pages.items()}


def metric_page(card) -> str:
    text = card.read_text(encoding="utf-8")
    return re.sub(r"\A---\n.*?\n---\n", "", text, count=1, flags=re.S)  # the Space's YAML, not for readers


def cli_reference() -> str:
    from hallubench.cli.main import build_parser

    parser = build_parser()
    lines = ["# Command line", "",
             f"Generated from the `hallubench` command's own parsers by `{REGENERATE}`. Every flag written",
             "`--dashed-flag` also answers to `--dashed_flag` (lm-evaluation-harness's spelling).", ""]
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        for path, sub in walk(parser, ["hallubench"]):
            lines += [f"## `{' '.join(path)}`", "", "```text", sub.format_help().rstrip(), "```", ""]
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return "\n".join(lines)


def walk(parser: argparse.ArgumentParser, path: list[str]):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, [*path, name])


def task_reference() -> str:
    from hallubench.registry import TASKS

    lines = ["# Tasks", "",
             f"Every task `hallubench run --tasks NAME` takes, generated from the task registry by `{REGENERATE}`.", "",
             "| task | benchmark | scored by | steps |", "|---|---|---|---|"]
    for name in sorted(TASKS):
        task = TASKS[name]
        scored = (f"[`{task.metric}`](../metrics/{task.metric}.md)" if task.metric
                  else (task.scored_by or "across runs").replace("|", "\\|"))
        steps = len(task.program.steps) if task.program else 1
        lines.append(f"| `{name}` | [{task.benchmark}](../benchmarks/{task.benchmark}.md) | {scored} | {steps} |")
    return "\n".join(lines) + "\n"


def write_pages() -> list[str]:
    """Writes every generated page under docs/; returns the ones that changed."""
    changed = []
    for path, content in generated_pages().items():
        target = DOCS / path
        if not target.is_file() or target.read_text(encoding="utf-8") != content:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            changed.append(path)
    return changed


if __name__ == "__main__":
    print("\n".join(f"wrote docs/{path}" for path in write_pages()) or "the generated pages are up to date")
