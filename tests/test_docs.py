"""The README and the docs site cannot break unnoticed: the README stays a short path to a first result; every
markdown file's code fences close; every `hallubench` command shown parses with the real parsers; the README's
links resolve; the `>>>` examples of the README and the docs run; `mkdocs build --strict` passes (broken links
and anchors fail it); every registered benchmark has its page. Each check is also shown failing on a planted
broken file."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from docs_checks import (ROOT, bad_commands, broken_links, code_blocks, markdown_files, placeholders_read_as_html,
                         unclosed_fences)
from metric_doctests import run_examples

sys.path.insert(0, str(ROOT / "docs" / "hooks"))
README = ROOT / "README.md"
PAGES_PYTHON = (3, 11)  # the Python whose argparse wrote docs/reference/cli.md (install.sh's and CI's)
TEST_COMMAND = "./install.sh && python3 -m pytest tests"  # .ci/run runs what the README says


def test_readme_is_a_short_path_to_a_result():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    assert TEST_COMMAND in text
    assert "hallucination **resistance**" in text  # HR spelled out: higher is better, not a rate


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_fences_close_and_commands_parse(path):
    problems = unclosed_fences(path) + bad_commands(path) + placeholders_read_as_html(path)
    assert not problems, "\n".join(problems)


def repository_markdown() -> list[Path]:
    """Every markdown file of the checkout (git's list, so nothing a run or a build left behind), or of a copy
    without git: the files a reader opens on GitHub or the Hub, where a link is a plain relative path."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"], cwd=ROOT,
                            capture_output=True, text=True)
    if listed.returncode != 0:
        return markdown_files()
    return sorted(ROOT / name for name in listed.stdout.splitlines() if (ROOT / name).is_file())


def test_every_relative_link_resolves():
    """docs/index.md once linked reference/cli.md, which existed only inside `mkdocs build`: dead on GitHub. An
    unfolded note (docs/incoming/NAME.md) may link where it will be folded: its links are the fold's to fix."""
    files = [path for path in repository_markdown() if "incoming" not in path.relative_to(ROOT).parts[:2]]
    assert ROOT / "docs" / "index.md" in files and README in files
    problems = [problem for path in files for problem in broken_links(path)]
    assert not problems, "\n".join(problems)


def test_generated_pages_are_committed_as_generated():
    """The reference pages and metric pages are committed (their links work without the site) and equal what the
    generator writes from the code now."""
    from generated_pages import REGENERATE, generated_pages

    pages = generated_pages()
    if sys.version_info[:2] != PAGES_PYTHON:  # argparse's --help layout changes between Python versions
        pages.pop("reference/cli.md")
    stale = [path for path, text in pages.items()
             if not (ROOT / "docs" / path).is_file() or (ROOT / "docs" / path).read_text(encoding="utf-8") != text]
    assert not stale, f"docs/{', docs/'.join(stale)} differ from the code: run `{REGENERATE}` and commit them"


def test_readme_names_every_benchmark_and_metric_with_its_page():
    from hallubench.registry import BUILDERS, METRICS

    text = README.read_text(encoding="utf-8")
    missing = [f"docs/benchmarks/{name}.md" for name in BUILDERS if f"(docs/benchmarks/{name}.md)" not in text]
    missing += [f"metrics/{name}/README.md" for name in METRICS if f"(metrics/{name}/README.md)" not in text]
    assert not missing, f"the README's table lacks {missing}"


NUMBER_WORDS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
    "seventeen eighteen nineteen twenty".split()


@pytest.mark.parametrize("path", [README, ROOT / "docs" / "index.md"], ids=lambda p: str(p.relative_to(ROOT)))
def test_the_opening_counts_what_ships(path):
    """The opening once listed 5 benchmarks and "the five metrics" while 12 and 11 shipped: it counts the registries."""
    from hallubench.registry import BUILDERS, METRICS

    opening = path.read_text(encoding="utf-8").lower().split("\n## ", 1)[0]
    assert f"{NUMBER_WORDS[len(BUILDERS)]} benchmarks" in opening or \
        f"{NUMBER_WORDS[len(BUILDERS)]} hallucination benchmarks" in opening
    assert f"{NUMBER_WORDS[len(METRICS)]} metrics" in opening


def test_every_guarantee_names_tests_that_exist():
    """docs/topics/guarantees.md: one section per promise, each with the tests that hold it (files that exist)."""
    import re

    text = (ROOT / "docs" / "topics" / "guarantees.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    assert len(sections) >= 10
    for section in sections:
        heading = section.splitlines()[0]
        tested = re.search(r"^\*\*Tested by:\*\* (.+)$", section, flags=re.M)
        assert tested, f"guarantee {heading!r} has no **Tested by:** line"
        named = re.findall(r"(test_\w+\.py)", tested[1])
        assert named, f"guarantee {heading!r} names no test file"
        missing = [name for name in named if not list((ROOT / "tests").rglob(name))]
        assert not missing, f"guarantee {heading!r} names {missing}, which do not exist under tests/"


def test_every_benchmark_has_its_page():
    from hallubench.registry import BUILDERS

    missing = [name for name in BUILDERS if not (ROOT / "docs" / "benchmarks" / f"{name}.md").is_file()]
    assert not missing, f"write docs/benchmarks/<name>.md for {missing}"


def python_examples(path: Path) -> str:
    return "\n\n".join("\n".join(body) for info, _start, body, _closed in code_blocks(path.read_text(encoding="utf-8"))
                       if info == "python" and any(line.startswith(">>>") for line in body))


def generated(path: Path) -> bool:  # a generated page's examples are run at their source (metrics/*/README.md)
    return path.read_text(encoding="utf-8").startswith("<!-- Generated from ")


EXAMPLE_FILES = [README, *sorted(p for p in (ROOT / "docs").rglob("*.md") if not generated(p))]


@pytest.mark.parametrize("path", [p for p in EXAMPLE_FILES if python_examples(p)], ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples_run(path):
    """As a reader runs them: `import evaluate` and bare metric names, which hallubench's first use installs."""
    import hallubench.metrics  # noqa: F401  the first use puts the metrics in evaluate's cache

    failed, attempted, report = run_examples(python_examples(path), str(path.relative_to(ROOT)))
    assert attempted > 0 and failed == 0, report


def test_the_docs_have_examples_to_run():  # the parametrization above is not empty by accident
    assert python_examples(README) and python_examples(ROOT / "docs" / "metrics" / "index.md")


# --- the site ---

def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


@pytest.fixture(scope="module")
def mkdocs_available():
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("mkdocs and mkdocs-material are in the test extra: ./install.sh installs them")
        pytest.skip("mkdocs is not installed (pip install -e '.[test]'); CI fails here instead")


def test_site_builds_strict(mkdocs_available, tmp_path):
    done = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    from hallubench.registry import BUILDERS, METRICS, TASKS

    site = tmp_path / "site"
    assert all((site / "metrics" / name / "index.html").is_file() for name in METRICS)
    assert all((site / "benchmarks" / name / "index.html").is_file() for name in BUILDERS)
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    from hallubench.cli.main import COMMANDS

    assert all(f"hallubench {name}" in cli for name in COMMANDS)  # generated from the parsers
    tasks = (site / "reference" / "tasks" / "index.html").read_text(encoding="utf-8")
    assert all(name in tasks for name in TASKS)
    assert not (site / "incoming").exists()  # unfolded notes are not pages


# --- each check fails on a planted broken file ---

def test_an_unclosed_fence_is_found(tmp_path):
    broken = tmp_path / "broken.md"
    # a merge left a stray fence: it opens a block, and the rest of the file pairs up wrong but evenly
    broken.write_text("# x\n\n```bash\nhallubench demo\n```\n\nA cut-off sentence\n```\n\n## Later\n\n```bash\nls\n```\n")
    assert [p.split(": ", 1)[0] for p in unclosed_fences(broken)] == [f"{broken}:8"]
    assert "without a language" in unclosed_fences(broken)[0]
    broken.write_text("# x\n\n```bash\nhallubench demo\n```\n\n```text\nnever closed\n")
    assert [p.split(": ", 1)[0] for p in unclosed_fences(broken)] == [f"{broken}:7"]
    assert "never closed" in unclosed_fences(broken)[0]


def test_a_bad_command_is_found(tmp_path):
    broken = tmp_path / "broken.md"
    broken.write_text("# x\n\n```bash\nhallubench run --model hf \\\n    --no-such-flag 3 --tasks cmm --data-dir mini\n"
                      "hallubench frobnicate\nhallubench build cmm --out d && hallubench run --modality loud\n```\n\n"
                      "Inline: `hallubench view --serve --port x`, `hallubench run --help` is fine.\n")
    problems = bad_commands(broken)
    assert any(p.startswith(f"{broken}:4") and "--no-such-flag" in p for p in problems), problems
    assert any(p.startswith(f"{broken}:6") and "frobnicate" in p for p in problems), problems
    assert any(p.startswith(f"{broken}:7") and "loud" in p for p in problems), problems
    assert any(p.startswith(f"{broken}:10") and "--port" in p for p in problems), problems
    assert len(problems) == 4, problems


def test_a_placeholder_read_as_html_is_found(tmp_path):
    broken = tmp_path / "broken.md"
    broken.write_text("Asks `Is there a\n<object> in it?` and **qacc_<j>**,\nthen <object>.\n\n```text\n<fine>\n```\n<br>\n")
    problems = placeholders_read_as_html(broken)
    assert [p.split(": ", 1)[0] for p in problems] == [f"{broken}:2", f"{broken}:3"], problems


def test_a_broken_readme_link_is_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# Page\n\n## Real heading\n")
    broken = tmp_path / "README.md"
    broken.write_text("[ok](docs/page.md#real-heading) [gone](docs/nope.md)\n[bad anchor](docs/page.md#nope)\n")
    problems = broken_links(broken)
    assert len(problems) == 2 and "nope.md: no such file" in problems[0] and "#nope" in problems[1], problems


def test_a_broken_site_link_fails_the_strict_build(mkdocs_available, tmp_path):
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    docs = tmp_path / "docs"
    (docs / "incoming").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n\n[fine](other.md#there)\n")
    (docs / "other.md").write_text("# Other\n\n## There\n")
    (docs / "incoming" / "note.md").write_text("[unfolded notes may link anywhere](nowhere.md)\n")
    config.pop("hooks")
    config["docs_dir"] = str(docs)
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    assert mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site").returncode == 0
    for planted in ("[gone](missing.md)", "[bad anchor](other.md#not-there)"):
        (docs / "index.md").write_text(f"# Home\n\n{planted}\n")
        done = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
        assert done.returncode != 0 and "Aborted" in done.stdout + done.stderr, planted
    shutil.rmtree(tmp_path / "site", ignore_errors=True)


# --- what every package has ---

def test_the_license_ships_and_the_citation_matches_the_package():
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    meta = config["metadata"]
    assert meta["license"] == "Apache-2.0" and "LICENSE" in meta["license_files"].split()  # in the wheel and sdist
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software" and cff["message"] and cff["authors"]
    assert (cff["version"], cff["license"]) == (meta["version"], meta["license"])
    for reference in cff["references"]:
        assert reference["type"] and reference["title"] and isinstance(reference["year"], int)
        assert all(author["family-names"] and author["given-names"] for author in reference["authors"])


PAPERS = ROOT.parent / "shared" / "papers"


@pytest.mark.skipif(not PAPERS.is_dir(), reason=f"the seed papers are not at {PAPERS}")
def test_the_citation_cites_each_seed_paper_as_it_is_printed():
    """Each reference's title and every author's name are on the first page of one of the papers: none invented."""
    import re

    def plain(text: str) -> str:
        return re.sub(r"[^a-z0-9]+", " ", re.sub(r"<[^>]+>", "", text).lower())

    openings = {path.name: plain(path.read_text(encoding="utf-8")[:3000]) for path in PAPERS.glob("*.txt")}
    references = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))["references"]
    assert len(references) == len(openings)
    for reference in references:
        title = plain(reference["title"])
        paper = next((name for name, opening in openings.items() if title in opening), None)
        assert paper, f"{reference['title']!r} opens none of {sorted(openings)}"
        missing = [author["family-names"] for author in reference["authors"]
                   if plain(f"{author['given-names']} {author['family-names']}") not in openings[paper]]
        assert not missing, f"{paper} does not name {missing}"
