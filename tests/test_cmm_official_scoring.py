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


def test_strict_parsers_unparsed_counts_stay_beside_the_headline(run_dir):
    out, _ = run_dir
    records, _ = store.read_jsonl(out / "samples.jsonl")
    task = Results.from_dict(json.loads((out / "results.json").read_text())).tasks["cmm"]
    parse = get_parser("yes_no")
    assert task.n_unparsed == sum(parse(r["outputs"][0]) is None for r in records) > 0
    for name, group in task.groups.items():
        members = [r for r in records if name in r["group"]]
        assert group.n_unparsed == sum(parse(r["outputs"][0]) is None for r in members)
