"""One verdict per answer, for every task: each one-step task with a metric (walked from the registry, so a new one
is covered) is scored on its mini data with scripted answers, adversarial ones and model errors among them, and the
`verdicts` results.json gets re-aggregate to its counts and headline shares, overall and per group. (Multi-step
tasks feed their metric what their steps wrote; they are scored in tests/test_harness_program.py.)"""
import random

import pytest

from hallubench.benchmarks import all_tasks
from hallubench.errors import ConfigError
from hallubench.harness.data import dataset_dir, load_rows
from hallubench.harness.generate import base_record
from hallubench.harness.plan import WorkItem
from hallubench.harness.scoring import group_names, load_metric, metric_records, parse_records, score_task

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
    task = all_tasks()[name]
    folder = dataset_dir(mini_datasets, task)
    try:
        rows, _ = load_rows(folder, task)
    except ConfigError as err:  # a config the mini release does not make (POPE's gqa and aokvqa)
        pytest.skip(f"no mini data: {err}")
    rows = [row for row in rows if task.exclude is None or not task.exclude(row)]
    metric = load_metric(task.metric)
    result = score_task(task, _records(task, rows, folder, seed=len(name)), n_total=len(rows))
    if metric.item_verdicts is None:
        assert result.verdicts == {}
        return
    records = parse_records(task, _records(task, rows, folder, seed=len(name)))
    verdicts = result.verdicts
    assert set(verdicts) <= {str(r["id"]) for r in records}
    for record in records:
        verdict = verdicts.get(str(record["id"]))
        if record.get("error") is not None:
            assert verdict == {"verdict": "error", "reading": None}
        elif verdict is not None:
            assert verdict["verdict"] in ("correct", "wrong", "unreadable")
            assert verdict["verdict"] != "unreadable" or verdict["reading"] is None

    def unread(record):
        verdict = verdicts.get(str(record["id"]))
        return record["parsed"] is None if verdict is None else verdict["reading"] is None

    checked = []

    def check(where, members, counts):
        answered = [r for r in members if r.get("error") is None]
        assert counts.n_errors == len(members) - len(answered), where
        assert counts.n_unparsed == sum(map(unread, answered)), where
        assert counts.n_scored == len(answered) - counts.n_unparsed, where
        scored = metric_records(task, members)
        for share, label in metric.verdict_shares.items():
            taken = [verdicts[str(r["id"])]["verdict"] for r in scored if str(r["id"]) in verdicts
                     and (label is None or str(r["reference"]).strip().lower() == label)]
            if share in counts.metrics and taken:
                assert counts.metrics[share] == taken.count("correct") / len(taken), f"{where}: {share}"
                checked.append(share)

    check(name, records, result)
    if set(metric.verdict_shares) & set(result.metrics):
        assert checked, "a headline share was re-aggregated from the verdicts"
    for group, counts in result.groups.items():
        check(f"{name} group {group}", [r for r in records if group in group_names(r)], counts)
