"""One verdict per answer, for every task: each one-step task with a metric (walked from the registry, so a new one
is covered) is scored on its mini data with scripted answers, adversarial ones and model errors among them, and the
verdicts written into its records (`verdict`, as samples.jsonl holds them) re-aggregate to its counts and headline
shares, overall and per group, and equal results.json's. (Multi-step
tasks feed their metric what their steps wrote; they are scored in tests/test_harness_program.py.)"""
import random
from collections import Counter

import pytest

from hallubench.benchmarks import all_tasks
from hallubench.errors import ConfigError
from hallubench.harness.data import dataset_dir, load_rows
from hallubench.harness.generate import base_record
from hallubench.harness.plan import WorkItem
from hallubench.harness.scoring import group_names, load_metric, metric_records, parse_records, is_count, score_task, with_verdicts

# Answers every benchmark's rule reads differently: begins with yes/no or not, a "no" the strict parser finds but a
# rule does not, neither, options echoed, CCHall's final answers, MHaluBench's claim verdicts.
ANSWERS = ["Yes.", "No.", "yes", "There is no dog in it.", "I cannot tell.", "", "Yes/No", "Not really.", "noyes",
           "Final Answer: A.", "Final Answer: B. Modality conflict", "claim1: hallucination\nclaim2: non-hallucination",
           "Claim 1: non-hallucination", "A dog and a car on the grass."]
ERROR = {"class": "GenerationError", "message": "scripted failure"}

TASKS = sorted(name for name, task in all_tasks().items() if task.metric is not None and task.program is None)


def _records(task, rows, folder, seed):
    rng = random.Random(seed)
    records = []
    for row in rows:
        item = WorkItem(task, row, folder, f"k{row['id']}", 0, task.generation, None)
        record = base_record(item, None)
        if rng.random() < 0.1:
            record["error"] = ERROR
        else:
            record["outputs"] = [rng.choice(ANSWERS)]
        records.append(record)
    return parse_records(task, records)


@pytest.mark.parametrize("name", TASKS)
def test_verdicts_reaggregate_to_the_tasks_results(name, mini_datasets):
    """The verdicts read from the records (as scoring writes them into samples.jsonl) give the headline's counts and
    shares, overall and per group; every record is counted once: scored + unreadable + errors = n."""
    task = all_tasks()[name]
    folder = dataset_dir(mini_datasets, task)
    try:
        rows, _ = load_rows(folder, task)
    except ConfigError as err:  # a config the mini release does not make (POPE's gqa and aokvqa)
        pytest.skip(f"no mini data: {err}")
    rows = [row for row in rows if task.exclude is None or not task.exclude(row)]
    metric = load_metric(task.metric)
    shares = getattr(metric, "verdict_shares", {})  # declared by the metrics that give verdicts
    records = _records(task, rows, folder, seed=len(name))
    result = score_task(task, records, n_total=len(rows))
    records = list(with_verdicts([task], records, {r["key"]: r for r in records}, {name: result}).values())
    if metric.item_verdicts is None:
        assert result.verdicts == {} and all(r["verdict"]["verdict"] is None for r in records)
    for record in records:
        verdict = record["verdict"]
        assert verdict["counted"] in ("scored", "unreadable", "error")
        if record.get("error") is not None:
            assert verdict == {"verdict": "error", "reading": None, "counted": "error"} or \
                metric.item_verdicts is None and verdict["counted"] == "error"
        elif verdict["verdict"] is not None:
            assert verdict["verdict"] in ("correct", "wrong", "unreadable")
            assert verdict["verdict"] != "unreadable" or verdict["reading"] is None
            assert verdict["reading"] is not None or verdict["counted"] == "unreadable"
    from_records = {str(r["id"]): {"verdict": r["verdict"]["verdict"], "reading": r["verdict"]["reading"]}
                    for r in records if r["verdict"]["verdict"] is not None}
    assert from_records == result.verdicts
    checked = []

    def check(where, members, counts):
        taken = Counter(r["verdict"]["counted"] for r in members)
        assert (counts.n_scored, counts.n_unreadable, counts.n_errors) == \
            (taken["scored"], taken["unreadable"], taken["error"]), where
        assert counts.n_scored + counts.n_unreadable + counts.n_errors + counts.n_without_media == \
            counts.n_selected == len(members), where
        assert (counts.not_scored is None) == bool(counts.n_scored), where
        if counts.not_scored is not None:  # no number where no answer was scored
            assert all(value is None or is_count(value) for value in counts.metrics.values()), where
            return
        scored = metric_records(task, members)
        for share, label in shares.items():
            taken = [r["verdict"]["verdict"] for r in scored if r["verdict"]["verdict"] is not None
                     and (label is None or str(r["reference"]).strip().lower() == label)]
            if share in counts.metrics and taken:
                assert counts.metrics[share] == taken.count("correct") / len(taken), f"{where}: {share}"
                checked.append(share)

    check(name, records, result)
    if set(shares) & set(result.metrics) and result.not_scored is None:
        assert checked, "a headline share was re-aggregated from the records' verdicts"
    for group, counts in result.groups.items():
        check(f"{name} group {group}", [r for r in records if group in group_names(r)], counts)
