"""The documented commands work when a reader types them: each whole `hallubench` command of the README and the docs
pages runs on the mini data in reading order (tests/docs_commands.py says what is swapped for a stand-in and what
cannot run here, by rule), within a time budget. Built after `hallubench crosscheck` on the demo's checkpoints,
which the README invited, stopped with "models named twice"; the planted page below fails the same way."""
import os

import pytest
from docs_commands import Shown, documented_commands, normalized, run_documented, why_not_run
from docs_checks import ROOT

BUDGET_S = float(os.environ.get("HALLUBENCH_DOCS_BUDGET_S", "50"))  # CPU seconds of commands; the rest: not reached


def pages() -> list:
    """The README first (a newcomer's path), then the docs pages; not the unfolded notes or the generated pages
    (their sources are the metric cards and the parsers)."""
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md") if "incoming" not in p.parts
                  and not p.read_text(encoding="utf-8").startswith("<!-- Generated from "))
    return [ROOT / "README.md", *docs]


@pytest.fixture
def reader(tmp_path, monkeypatch, mini_datasets, tiny_checkpoint):
    """A reader's working folder (inside a scratch folder, so `--output-dir ../datasets` stays in it), offline,
    whose `--data-dir mini` is the session's mini benchmarks; the tiny checkpoint; the mini releases."""
    from hallubench.harness.data import default_data_dir

    monkeypatch.setenv("HALLUBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    mini = default_data_dir()
    mini.parent.mkdir(parents=True)
    mini.symlink_to(mini_datasets.parent, target_is_directory=True)
    workdir = tmp_path / "reader" / "work"
    workdir.mkdir(parents=True)
    return workdir, tiny_checkpoint("qwen2_5_omni"), mini_datasets.parent / "releases"


def test_every_documented_command_runs_on_the_mini_data(reader):
    commands = documented_commands(pages())
    assert commands and commands[0].where.startswith("README.md")
    outcome = run_documented(commands, *reader, budget_s=BUDGET_S)
    print(outcome.summary())
    assert not outcome.failed, "\n".join(outcome.failed)
    assert outcome.ran and outcome.ran[0] == commands[0].where  # the README's first command is always run
    assert any("crosscheck" in " ".join(c.arguments) and c.where in outcome.ran for c in commands), \
        "no documented crosscheck command ran: the budget is too small to test what this test was built for"


def test_a_failing_command_and_a_chain_are_found(reader, tmp_path):
    planted = tmp_path / "planted.md"
    planted.write_text(
        "```bash\n"
        "hallubench build pope --source coco/ --output-dir datasets/pope   # from the mini release\n"
        "hallubench verify datasets/pope         # reads what the line above made: it runs, and fails (no run folder)\n"
        "hallubench verify runs/never-made       # nothing made it: not run\n"
        "hallubench crosscheck --tasks avhallubench_visual --model hf --models ckpt/omni,ckpt/omni \\\n"
        "    --data-dir datasets/ --output-dir runs/cc\n"
        "hallubench run ... --tasks pope         # elided\n"
        "```\n")
    outcome = run_documented(documented_commands([planted]), *reader, budget_s=BUDGET_S)
    assert [f.split(":", 2)[1] for f in outcome.failed] == ["3", "5"], outcome.failed
    assert "named twice" in outcome.failed[1]
    assert outcome.ran == [f"{planted}:2", f"{planted}:3", f"{planted}:5"]
    assert sorted(outcome.skipped) == ["an elided command", "reads a folder that no command before it makes"]


@pytest.mark.parametrize("line,reason", [
    ("hallubench run --model openai --model-args model=gpt-4o --tasks pope --data-dir d", "OpenAI"),
    ("hallubench run --model hf --model-args pretrained=x,base_url=http://h:1/v1 --tasks pope --data-dir d", "server"),
    ("accelerate launch -m hallubench run --model hf --tasks pope --data-dir d", "accelerate"),
    ("hallubench build cmm --output-dir d", "Hub"),
    ("hallubench build cmm --source hub:org/x --output-dir d", "Hub"),
    ("hallubench view runs/a --output-dir s --push-to-hub you/x", "Hub"),
    ("hallubench view runs/a --output-dir s --serve", "serves"),
    ("hallubench run --model hf --tasks pope --data-dir d --helper detector adapter=x,device=cuda", "GPU"),
    ("hallubench rank a --include my_plugins/ --judge j", "reader's own file"),
    ("hallubench rank a --judge implicit --judge-args pretrained=Org/Judge", "helper or judge model"),
    ("hallubench rank runs/a runs/b --output-dir r", "no command before it"),
    ("hallubench tasks cmm", None),
    ("hallubench run --model hf --model-args pretrained=Org/Model --tasks pope --data-dir d", None),
])
def test_what_cannot_run_here_is_named_by_rule(line, reason, tmp_path):
    before, _, arguments = line.partition("hallubench ")
    found = why_not_run(Shown("x", before.split(), arguments.split()), normalized(arguments.split()), tmp_path)
    assert (found is None) if reason is None else (reason in (found or "")), found
