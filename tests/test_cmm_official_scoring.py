"""The `cmm` task's headline numbers in a real run's results.json are exactly what the CMM release's own
scorer (`evaluation/calculate_score.py`, re-implemented in cmm_support) prints for the run's outputs,
adversarial answers included, overall, per sub_category and per granularity × sub_category."""
import json
import os

import pytest
import torch

from hallubench.benchmarks import get_task
from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.harness.data import load_rows
from hallubench.benchmarks import get_parser
from hallubench.harness.results_schema import Results

from cmm_support import cmm_calculate_score

os.environ["HF_HUB_OFFLINE"] = "1"
torch.set_num_threads(1)
# Answers where "begins with yes/no" (the paper's rule) and "first yes/no word" disagree, or neither reads one.
ADVERSARIAL = [
    "There is no dog in the video.", "I know it is there.", "Not sure.", "Yes/No", "nobody is there",
    "  YES, clearly", "Sure, yes.", "No.", "**Yes**", "Answer: no", "yes", "", "Nope", "noyes", "Yeah, yes.",
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, mini_datasets, tiny_checkpoint):
    """A real run of a tiny random model on the mini CMM, its outputs then replaced by adversarial answers
    and the folder re-scored with `--from-outputs` (the path a user takes to score saved outputs)."""
    root = tmp_path_factory.mktemp("cmm")
    model, data = tiny_checkpoint("qwen2_5_omni"), mini_datasets
    out = root / "run"
    assert main(["run", "--model", "hf", "--model-args", f"pretrained={model},dtype=float32", "--data-dir", str(data),
                 "--output-dir", str(out), "--tasks", "cmm", "--num-frames", "2",
                 "--gen-kwargs", "max_new_tokens=2"]) == 0
    path = out / "samples.jsonl"
    records, _ = store.read_jsonl(path)
    for i, record in enumerate(sorted(records, key=lambda r: r["id"])):
        record["outputs"] = [ADVERSARIAL[i % len(ADVERSARIAL)]]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["run", "--from-outputs", str(out)]) == 0
    return out, data


def test_headline_numbers_are_the_cmm_scorers(run_dir):
    out, data = run_dir
    records, _ = store.read_jsonl(out / "samples.jsonl")
    rows = {row["id"]: row for row in load_rows(data / "cmm", get_task("cmm"))[0]}
    lines = [json.dumps({**{k: rows[r["id"]][k] for k in ("answer", "sub_category", "granularity")},
                         "pred": r["outputs"][0]}) for r in records]
    overall, by_sub, by_gran = cmm_calculate_score(lines)
    task = Results.from_dict(json.loads((out / "results.json").read_text())).tasks["cmm"]

    def headline(result):
        return result.metrics["pa"], result.metrics["hr"], result.metrics["accuracy"]

    assert headline(task) == pytest.approx(overall)
    assert {sub: headline(task.groups[sub]) for sub in by_sub} == pytest.approx(by_sub)
    assert {key: headline(task.groups[f"{key[1]} / {key[0]}"]) for key in by_gran} == pytest.approx(by_gran)
    assert len(task.groups) == len(by_sub) + len(by_gran) and len(by_gran) > len(by_sub) > 1
    # The adversarial answers change the numbers: the strict parser would have scored them differently.
    strict = [get_parser("yes_no")(r["outputs"][0]) == rows[r["id"]]["answer"] for r in records]
    assert sum(strict) / len(strict) != pytest.approx(overall[2])


def test_each_answers_verdict_and_the_counts_follow_the_headlines_rule(run_dir):
    """Each sample's verdict is what the CMM scorer counted it as (its reference in the first five characters), not
    the strict parser's reading ("There is no dog." reads "no" but is wrong); the unparsed counts are the answers
    that rule reads nothing in, overall and per group."""
    out, data = run_dir
    records, _ = store.read_jsonl(out / "samples.jsonl")
    rows = {row["id"]: row for row in load_rows(data / "cmm", get_task("cmm"))[0]}
    task = Results.from_dict(json.loads((out / "results.json").read_text())).tasks["cmm"]

    def head(record):
        return record["outputs"][0].strip().lower()[:5]

    def unread(record):
        return "yes" not in head(record) and "no" not in head(record)

    for record in records:
        expected = "correct" if rows[record["id"]]["answer"] in head(record) else "unreadable" if unread(record) \
            else "wrong"
        assert task.verdicts[record["id"]]["verdict"] == expected, record["outputs"][0]
    strict_but_wrong = [r for r in records if get_parser("yes_no")(r["outputs"][0]) == rows[r["id"]]["answer"]
                        and task.verdicts[r["id"]]["verdict"] != "correct"]
    assert strict_but_wrong, "the adversarial answers include ones the strict parser reads right and the rule not"
    assert task.n_unparsed == sum(map(unread, records)) > 0
    for name, group in task.groups.items():
        members = [r for r in records if name in r["group"]]
        assert group.n_unparsed == sum(map(unread, members))
        assert group.n_scored == len(members) - group.n_unparsed


def test_verify_finds_the_verdicts_equal_to_the_results(run_dir, capsys):
    out, _ = run_dir
    assert main(["verify", str(out)]) == 0
    assert "cmm (pa_hr):" in capsys.readouterr().out
