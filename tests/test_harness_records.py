"""The run folder's SampleRecord: a schema version on every new line, old lines (no version) still read and
re-scored, a newer version or a line that is no record refused with its file and line; scoring counts what the
metric's verdicts read (the stored parse where the metric gives none), and re-scoring parses once more with the
current parser."""
import json

import pytest

from hallubench.benchmarks import get_task
from hallubench.errors import CorruptRecordError
from hallubench.harness import store
from hallubench.harness.records import SCHEMA_VERSION, SampleRecord
from hallubench.harness.rescore import rescore
from hallubench.harness.scoring import score_task

ANSWERS = [("a", "Yes.", "yes"), ("b", "no", "no"), ("c", "No, there is not.", "yes"), ("d", "Maybe.", "no")]


def _records(schema=True):
    out = []
    for sid, text, reference in ANSWERS:
        record = SampleRecord(key=f"k-{sid}", task="cmm", id=sid, model="m", model_fingerprint="f", seed=1,
                              generation={"temperature": 0.2}, sample_generation=None, prompt="p?",
                              reference=reference, group=("visual-language", "visual-language / object-level"),
                              outputs=[text], parsed=None).to_dict()
        if not schema:
            del record["schema"]
        out.append(record)
    return out


def _write(folder, records):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / store.MERGED).write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def test_new_records_carry_the_schema_version():
    assert _records()[0]["schema"] == SCHEMA_VERSION >= 2


def test_an_old_run_folder_without_versions_rescores_like_a_new_one(tmp_path):
    old = rescore(_write(tmp_path / "old", _records(schema=False)))
    new = rescore(_write(tmp_path / "new", _records()))
    assert old.tasks["cmm"] == new.tasks["cmm"]
    # stored parses were all None; re-scoring parsed once more: "Maybe." alone is unparseable
    assert new.tasks["cmm"].n_unparsed == 1 and new.tasks["cmm"].n_scored == 3
    assert store.read_store(tmp_path / "old").records["k-a"].get("schema") is None  # read as it is


def test_scoring_counts_the_metrics_verdicts_not_the_stored_parse():
    records = _records()
    records[0]["parsed"] = "yes"
    result = score_task(get_task("cmm"), records, n_total=4)
    # the stored parses are None but for one; the headline's rule (begins with yes/no) reads all but "Maybe."
    assert result.n_unparsed == 1 and result.verdicts["d"] == {"verdict": "unreadable", "reading": None}
    assert result.verdicts["c"] == {"verdict": "wrong", "reading": "no"}


@pytest.mark.parametrize("line, message", [
    ('{"key": "k", "task": "cmm", "id": "a", "schema": 99}', r"samples.jsonl:2: sample record schema 99, this "
                                                              r"hallubench reads 1 to \d; upgrade hallubench"),
    ('{"task": "cmm", "id": "a"}', r"samples.jsonl:2: not a sample record \(no key\)"),
    ('["cmm"]', r"samples.jsonl:2: not a sample record \(a JSON object\)"),
    ('{"key": ', r"samples.jsonl:2: not a JSON record"),
])
def test_a_line_that_is_no_record_is_refused_with_file_and_line(tmp_path, line, message):
    folder = tmp_path / "run"
    _write(folder, _records()[:1])
    with (folder / store.MERGED).open("a") as f:
        f.write(line + "\n" + json.dumps(_records()[1]) + "\n")
    with pytest.raises(CorruptRecordError, match=message):
        store.read_store(folder)
