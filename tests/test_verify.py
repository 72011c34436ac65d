"""`hallubench verify RUN_DIR`: a run folder's per-answer verdicts re-aggregate to its results.json (exit 0), and
an edited results.json (a score, a count, a group's count, a verdict) is named by task and metric (exit 1)."""
import importlib
import json
import sys

import pytest

from run_folder_support import rewrite_results

from hallubench.cli.main import main
from hallubench.registry import ALL

ANSWERS = ["Yes.", "yes", "maybe", ""]  # to references yes, no, yes, no: correct, wrong, two unreadable


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A toy benchmark run (tests/toy_benchmark.py) whose outputs are replaced and re-scored with --from-outputs;
    the registries are restored afterwards."""
    saved = [dict(registry) for registry in ALL]
    sys.modules.pop("toy_benchmark", None)
    importlib.import_module("toy_benchmark")
    from hallubench.builders.mini import make_release

    root = tmp_path_factory.mktemp("verify")
    data, out = root / "data", root / "run"
    assert main(["build", "toybench", "--source", str(make_release("toybench", root / "release")),
                 "--out", str(data / "toybench")]) == 0
    assert main(["run", "--model", "always_yes", "--model-args", "pretrained=toy", "--tasks", "toybench",
                 "--data-dir", str(data), "--output-dir", str(out)]) == 0
    path = out / "samples.jsonl"
    records = sorted((json.loads(line) for line in path.read_text().splitlines()), key=lambda r: r["id"])
    path.write_text("".join(json.dumps({**r, "outputs": [answer]}) + "\n" for r, answer in zip(records, ANSWERS)))
    assert main(["run", "--from-outputs", str(out)]) == 0
    yield out
    sys.modules.pop("toy_benchmark", None)
    for registry, entries in zip(ALL, saved):
        registry.clear()
        registry.update(entries)


@pytest.fixture
def edited(run_dir, tmp_path):
    """A copy of the run folder and a function that edits its results.json's toybench entry."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)

    def edit(change):
        results = json.loads((copy / "results.json").read_text())
        change(results["tasks"]["toybench"])
        rewrite_results(copy, results)
        return copy
    return edit


def test_the_verdicts_are_in_results_json_and_verify_agrees(run_dir, capsys):
    task = json.loads((run_dir / "results.json").read_text())["tasks"]["toybench"]
    assert sorted(v["verdict"] for v in task["verdicts"].values()) == ["correct", "unreadable", "unreadable", "wrong"]
    assert task["n_unparsed"] == 2 and task["n_scored"] == 2
    assert main(["verify", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "toybench (pa_hr): 4 samples;" in out and "re-aggregate to results.json" in out


@pytest.mark.parametrize("change, named", [
    (lambda t: t["metrics"].update(accuracy=0.75), "accuracy is 0.75 in results.json, the verdicts give 0.25"),
    (lambda t: t["metrics"].update(hr=1.0), "hr is 1.0 in results.json"),
    (lambda t: t.update(n_unparsed=0), "n_unparsed is 0 in results.json, the verdicts give 2"),
    (lambda t: t.update(unreadable_share=0.1), "unreadable_share is 0.1"),
    (lambda t: t["verdicts"][sorted(t["verdicts"])[2]].update(verdict="correct"), "verdicts differ"),
])
def test_an_edited_results_json_is_named_by_task_and_metric(edited, capsys, change, named):
    folder = edited(change)
    assert main(["verify", str(folder)]) == 1
    captured = capsys.readouterr()
    assert named in captured.out and "toybench (pa_hr): DIFFERS" in captured.out
    assert "error: " in captured.err and "toybench (pa_hr)" in captured.err and "--from-outputs" in captured.err
    assert "Traceback" not in captured.err


def test_results_json_of_schema_1_is_read_and_verify_asks_for_a_rescore(edited, capsys):
    folder = edited(lambda t: t.pop("verdicts"))
    results = json.loads((folder / "results.json").read_text())
    rewrite_results(folder, {**results, "version": 1})
    from hallubench.harness.results_schema import Results

    assert Results.from_dict(json.loads((folder / "results.json").read_text())).tasks["toybench"].verdicts == {}
    assert main(["verify", str(folder)]) == 2
    assert "schema version 1" in capsys.readouterr().err


def test_a_folder_that_is_not_there(tmp_path, capsys):
    assert main(["verify", str(tmp_path / "nothing")]) == 2
    assert "is not a run folder" in capsys.readouterr().err


def _records(folder):
    return [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]


def test_each_record_carries_the_verdict_results_json_counts(run_dir):
    task = json.loads((run_dir / "results.json").read_text())["tasks"]["toybench"]
    records = _records(run_dir)
    assert {r["id"]: {"verdict": r["verdict"]["verdict"], "reading": r["verdict"]["reading"]} for r in records} == \
        task["verdicts"]
    counted = [r["verdict"]["counted"] for r in records]
    assert (counted.count("scored"), counted.count("unreadable")) == (task["n_scored"], task["n_unreadable"])
    assert task["n_scored"] + task["n_unreadable"] + task["n_errors"] == task["n_selected"]


def test_a_forged_record_verdict_keeps_the_digest_and_is_named(run_dir, tmp_path, capsys):
    import shutil

    from hallubench.harness.verify import mismatches

    folder = tmp_path / "run"
    shutil.copytree(run_dir, folder)
    assert mismatches(folder) == []
    records = _records(folder)
    wrong = next(r for r in records if r["verdict"]["verdict"] == "wrong")
    wrong["verdict"] = {"verdict": "correct", "reading": "yes", "counted": "scored"}
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    found = mismatches(folder)  # read: the digest covers what generation wrote, not the verdicts
    assert found and all(line.startswith("toybench: ") for line in found)
    assert any(wrong["id"] in line and "samples.jsonl" in line for line in found)
    assert main(["verify", str(folder)]) == 1
    assert wrong["id"] in capsys.readouterr().out


def test_a_sample_id_with_control_characters_is_printed_as_escapes(edited, capsys):
    """An id in results.json is data: a terminal escape or newline in it is shown as a Python escape, not sent."""
    folder = edited(lambda t: t["verdicts"].update({"p\x1b[2J\nx": {"verdict": "correct", "reading": "yes"}}))
    assert main(["verify", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "p\\x1b[2J\\nx: correct ('yes') in results.json, none now" in out and "\x1b" not in out
    assert all(line.startswith("toybench (pa_hr): ") for line in out.splitlines())
