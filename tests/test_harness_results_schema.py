"""results.json schema: typed round trip and refusal of other versions."""
import json

import pytest

from hallubench.benchmarks import get_task
from hallubench.harness.report import table
from hallubench.harness.results_schema import (SCHEMA_VERSION, Environment, GroupResult, ModelInfo, Results, RunInfo,
                                               TaskResult)


def _results():
    task = TaskResult(task="cmm", benchmark="cmm", config="all", parser="yes_no", metric="pa_hr", n_total=48,
                      n_selected=4, n_errors=1, n_unparsed=1, n_scored=2, metrics={"pa": 0.5, "hr": 1.0},
                      n_unreadable=1, unreadable_share=1 / 3, mostly_unreadable=True, generation={"temperature": 0.2},
                      groups={"visual-language": GroupResult(4, 1, 1, 2, {"pa": 0.5}, n_unreadable=1,
                                                             unreadable_share=0.1)})
    return Results(tasks={"cmm": task}, model=ModelInfo("hf", {"pretrained": "/m"}, "abc"),
                   run=RunInfo(options={"limit": 4}, num_processes=2, generated=3, samples_per_s=1.5),
                   environment=Environment({"torch": "2"}, "deadbeef", "3.11"))


def test_round_trip_through_json_is_lossless():
    results = _results()
    again = Results.from_dict(json.loads(json.dumps(results.to_dict())))
    assert again == results and again.tasks["cmm"].groups["visual-language"].n_errors == 1
    assert results.to_dict()["version"] == SCHEMA_VERSION


def test_other_versions_and_unknown_keys_are_refused():
    data = _results().to_dict()
    with pytest.raises(ValueError, match="schema version 99"):
        Results.from_dict({**data, "version": 99})
    data["tasks"]["cmm"]["surprise"] = 1
    with pytest.raises(ValueError, match="surprise"):
        Results.from_dict(data)


def test_table_lists_tasks_groups_counts_and_the_cross_run_note():
    results = _results()
    results.tasks["mhalubench"] = TaskResult(task="mhalubench", metric=None, n_selected=2, n_scored=2,
                                             scored_by=get_task("mhalubench").scored_by)
    text = table(results)
    assert "| task | group | n | scored | unreadable | errors | metrics |" in text
    assert "| cmm | all | 4 | 2 | 1 (33%) ⚠ | 1 | pa=0.5000, hr=1.0000 |" in text
    assert "|  | visual-language | 4 | 2 | 1 (10%) | 1 | pa=0.5000 |" in text
    assert "| mhalubench | all | 2 | 2 | 0 | 0 | scored by crosscheck" in text
    assert "⚠: more than 20% of the answers" in text and "without media" not in text


def test_table_shows_rows_left_out_for_the_modality():
    results = _results()
    results.tasks["cmm"].groups["audio-language"] = GroupResult(n_selected=8, n_without_media=8)
    text = table(results)
    assert "|  | audio-language | 8 | 0 | 0 | 0 (+8 without media) | – (0 of 8 scored: 8 without media) |" in text
    assert "without media: rows left out" in text


@pytest.mark.parametrize("counts, why", [
    ({"n_selected": 3, "n_unreadable": 3}, "0 of 3 scored: 3 unreadable"),
    ({"n_selected": 4, "n_unreadable": 2, "n_errors": 1, "n_without_media": 1},
     "0 of 4 scored: 2 unreadable, 1 error, 1 without media"),
    ({"n_selected": 2, "n_errors": 2}, "0 of 2 scored: 2 errors"),
    ({"n_selected": 0}, "0 of 0 scored: no samples"),
    ({"n_selected": 3, "n_scored": 1, "n_unreadable": 2}, None),
])
def test_nothing_scored_says_why_and_the_table_shows_no_number(counts, why):
    from hallubench.harness.report import nothing_scored

    result = GroupResult(**counts, metrics={"pa": None, "pa_stderr": None} if why else {"pa": 0.5})
    assert nothing_scored(result) == why
    results = _results()
    results.tasks["cmm"].groups = {"g": result}
    row = next(line for line in table(results).splitlines() if "| g |" in line)
    assert (f"| – ({why}) |" in row and "0.0000" not in row) if why else "pa=0.5000" in row
