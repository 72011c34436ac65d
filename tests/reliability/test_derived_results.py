"""A result is derived from what is on disk: results.json records digests of exactly the records it scored
(harness/digest.py), and every reader of a run folder (each purpose of run_state.PURPOSES, through the CLI) refuses
a folder whose records are not those, naming results.json, samples.jsonl and the command that scores them again;
that command (`run --from-outputs`) re-scores them, after which the readers accept the folder. A run resumed over a
rebuilt dataset scores its stored answers with the rebuilt labels (as a fresh run does), never the old ones under
the new revision; a medium renamed by the rebuild is generated again."""
import json

import pytest

from run_folder_support import rewrite_results, seal

from hallubench.builders.mini import make_release
from hallubench.cli.main import main
from hallubench.errors import StaleResultsError
from hallubench.publish.runs import publish_run
from hallubench.harness import digest, run_state, store

from conftest import openai_run_argv


pytestmark = pytest.mark.usefixtures("offline")


@pytest.fixture
def purposes(monkeypatch):
    """The purposes run folders were read for, through the one reader (run_state.read_run_folder)."""
    seen, read = [], run_state.read_run_folder

    def spy(folder, purpose, **kwargs):
        seen.append(purpose)
        return read(folder, purpose, **kwargs)

    monkeypatch.setattr(run_state, "read_run_folder", spy)
    return seen


def _empty_ranking(tmp_path):
    ranking = tmp_path / "ranking-to-view"
    ranking.mkdir(exist_ok=True)
    (ranking / "crosscheck.json").write_text(json.dumps({"boards": {}, "judge": {}, "config": {}, "runs": {}}))
    (ranking / "sentences.jsonl").write_text("")
    return seal(ranking)


# Each purpose a run folder is read for, and a command that reads one for it; `run --from-outputs` (re-score) is
# the fix the others name, checked on its own below.
READERS = {
    "publish": lambda out, tmp: ["publish", str(out), "--repo", "me/x", "--allow-mini-data"],
    "rank (reading)": lambda out, tmp: ["rank", str(out), f"other={out}", "--output-dir", str(tmp / "ranking")],
    "view": lambda out, tmp: ["view", str(_empty_ranking(tmp)), str(out), "--out", str(tmp / "site")],
    "verify": lambda out, tmp: ["verify", str(out)],
}
RESCORE = "re-score (reading)"


def test_every_purpose_a_run_folder_is_read_for_has_a_reader_here():
    assert {*READERS, RESCORE} == set(run_state.PURPOSES)


def _edit_records(folder, change):
    """Rewrite samples.jsonl with `change(record)` applied to each record (None: left as it was)."""
    path = folder / store.MERGED
    records = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(change(r) or r) + "\n" for r in records))


def _files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")}


def _publish_gets_past_the_folder_checks(folder, capfd):
    """Publish with no Hub token stops at the token, after every check of the folder."""
    assert main(["publish", str(folder), "--repo", "me/x", "--allow-mini-data", "--allow-partial"]) == 2
    err = capfd.readouterr().err
    assert "no Hugging Face token" in err, err


def test_an_edited_sample_is_refused_by_every_reader_and_rescoring_fixes_it(server, data_dir, tmp_path, capfd,
                                                                             purposes):
    out = tmp_path / "run"
    assert main(openai_run_argv(server, data_dir, out)) == 0  # the server answers "yes" to every question
    scored = json.loads((out / "results.json").read_text())["tasks"]["cmm"]
    wrong = [json.loads(line) for line in (out / store.MERGED).read_text().splitlines()]
    wrong = [r for r in wrong if r["reference"] != r["parsed"]]
    assert wrong, "the mini run has an answer to correct"
    target = wrong[0]["key"]
    # Defect: this edit (the answer made correct) was published beside the results.json scored before it.
    _edit_records(out, lambda r: {**r, "outputs": [r["reference"].capitalize()], "parsed": r["reference"]}
                  if r["key"] == target else None)
    capfd.readouterr()
    before = _files(out)
    for purpose, argv in READERS.items():
        purposes.clear()
        assert main(argv(out, tmp_path)) == 2, purpose
        err = capfd.readouterr().err
        assert purpose in purposes, (purpose, purposes)
        assert f"{out / 'results.json'} was not computed from what {out / 'samples.jsonl'} holds now" in err, err
        assert f"`hallubench run --from-outputs {out}`" in err and "Traceback" not in err, err
    assert _files(out) == before, "a refusing reader changes nothing"
    assert not (tmp_path / "site" / "index.html").exists()
    purposes.clear()
    assert main(["run", "--from-outputs", str(out)]) == 0  # the fix every refusal names
    assert purposes == [RESCORE]
    rescored = json.loads((out / "results.json").read_text())["tasks"]["cmm"]
    assert rescored["metrics"] != scored["metrics"], "the scores now describe the edited samples"
    capfd.readouterr()
    _publish_gets_past_the_folder_checks(out, capfd)
    assert main(READERS["view"](out, tmp_path)) == 0


def test_line_order_does_not_matter_but_a_missing_digest_is_refused(server, data_dir, tmp_path, capfd):
    out = tmp_path / "run"
    assert main(openai_run_argv(server, data_dir, out)) == 0
    merged = out / store.MERGED
    merged.write_text("".join(reversed(merged.read_text().splitlines(keepends=True))))
    capfd.readouterr()
    _publish_gets_past_the_folder_checks(out, capfd)
    results = json.loads((out / "results.json").read_text())
    del results["run"]["records_digest"]
    rewrite_results(out, results)
    assert main(["publish", str(out), "--repo", "me/x", "--allow-mini-data"]) == 2
    err = capfd.readouterr().err
    assert f"{out / 'results.json'} records no digest of the samples it scored" in err
    assert f"`hallubench run --from-outputs {out}`" in err


def test_results_rescored_into_another_folder_are_checked_against_their_source(server, data_dir, tmp_path, capfd):
    out, scored = tmp_path / "run", tmp_path / "scored"
    assert main(openai_run_argv(server, data_dir, out)) == 0
    assert main(["run", "--from-outputs", str(out), "--output-dir", str(scored)]) == 0
    _edit_records(out, lambda r: {**r, "outputs": ["maybe"], "parsed": None})
    assert main(["run", "--from-outputs", str(out)]) == 0  # the source's own results follow it; `scored`'s do not
    capfd.readouterr()
    assert main(["publish", str(scored), "--repo", "me/x", "--allow-mini-data"]) == 2
    err = capfd.readouterr().err  # `out` is named only by scored's results.json: data, not the user's word
    assert f"names the folder {out}, which you did not give" in err, err
    with pytest.raises(StaleResultsError, match=f"was not computed from what {out / 'samples.jsonl'} holds now"):
        publish_run(scored, "me/x", allow_mini_data=True, given=[out])  # as `run --from-outputs out --push-to-hub`


def test_the_digest_covers_the_steps_a_sample_was_made_from_and_not_their_order():
    steps = {"k1": {"key": "k1", "outputs": [["a"]]}, "k2": {"key": "k2", "outputs": [["b"]]}}
    records = [{"key": "s1", "task": "t", "id": "1", "steps": {"one": {"key": "k1"}}},
               {"key": "s2", "task": "t", "id": "2", "steps": {"one": {"key": "k2"}}}]
    held = digest.scored_digests(records, steps)
    assert set(held["t"]) == {digest.SAMPLES, digest.STEPS}
    assert digest.scored_digests(records[::-1], dict(reversed(steps.items()))) == held
    edited = {**steps, "k2": {"key": "k2", "outputs": [["c"]]}}
    assert digest.scored_digests(records, edited)["t"][digest.STEPS] != held["t"][digest.STEPS]
    assert digest.scored_digests(records, {"k1": steps["k1"]})["t"][digest.STEPS] != held["t"][digest.STEPS]
    assert digest.scored_digests([{**records[0], "time_s": 1.0}, records[1]], steps)["t"][digest.SAMPLES] \
        != held["t"][digest.SAMPLES]


def _build(release, data):
    assert main(["build", "cmm", "--source", str(release), "--out", str(data / "cmm"), "--overwrite"]) == 0


def _release_rows(release):
    return json.loads((release / "all_data_final_reorg.json").read_text())


def _scores(folder):
    results = json.loads((folder / "results.json").read_text())
    return results["tasks"]["cmm"]["metrics"], results["tasks"]["cmm"]["dataset"]["revision"]


def test_a_run_resumed_over_a_rebuilt_dataset_scores_the_new_labels(server, tmp_path, capfd):
    """Defect: after `build --overwrite` with two labels corrected, the same `run` command generated nothing,
    scored the old stored labels and recorded the new dataset revision. Now it scores the stored answers with the
    new labels: the same scores as a fresh run on the rebuilt data, with nothing generated again."""
    release, data, out = make_release("cmm", tmp_path / "release"), tmp_path / "data", tmp_path / "run"
    _build(release, data)
    argv = openai_run_argv(server, data, out, tasks="cmm")
    assert main(argv) == 0
    old_scores, old_revision = _scores(out)
    ids = [json.loads(line)["id"] for line in (out / store.MERGED).read_text().splitlines()]
    rows = _release_rows(release)
    for item in ids:  # "Ids are cmm-<index> by position in the official JSON"
        row = rows[int(item.rpartition("-")[2])]
        row["answer"] = {"yes": "no", "no": "yes"}[row["answer"].strip().lower()]
    (release / "all_data_final_reorg.json").write_text(json.dumps(rows))
    _build(release, data)
    asked = len(server.requests)
    capfd.readouterr()
    assert main(argv) == 0
    err = capfd.readouterr().err
    assert len(server.requests) == asked, "nothing is generated again"
    assert f"{len(ids)} stored answers are scored with the current references" in err, err
    new_scores, new_revision = _scores(out)
    assert new_revision != old_revision and new_scores != old_scores
    fresh = tmp_path / "fresh"
    assert main(openai_run_argv(server, data, fresh, tasks="cmm")) == 0
    assert _scores(fresh) == (new_scores, new_revision), "one revision, one score, whichever folder"
    references = {r["id"]: r["reference"] for r in store.read_store(out).records.values()}
    assert references == {r["id"]: r["reference"] for r in store.read_store(fresh).records.values()}
    capfd.readouterr()
    _publish_gets_past_the_folder_checks(out, capfd)


def test_a_medium_renamed_by_a_rebuild_is_generated_again(server, tmp_path, capfd):
    release, data, out = make_release("cmm", tmp_path / "release"), tmp_path / "data", tmp_path / "run"
    _build(release, data)
    argv = openai_run_argv(server, data, out, "--limit", "1", tasks="cmm")
    assert main(argv) == 0
    record = next(iter(store.read_store(out).records.values()))
    rows = _release_rows(release)
    row = rows[int(record["id"].rpartition("-")[2])]  # "Ids are cmm-<index> by position in the official JSON"
    column = next(c for c in ("video_path", "audio_path", "image_path") if row.get(c))
    old = release / row[column].removeprefix("./")
    new = old.with_name("renamed-" + old.name)
    new.write_bytes(old.read_bytes())  # other rows may share the old file
    row[column] = row[column].replace(old.name, new.name)
    (release / "all_data_final_reorg.json").write_text(json.dumps(rows))
    _build(release, data)
    asked = len(server.requests)
    capfd.readouterr()
    assert main(argv) == 0
    assert "1 whose media changed are generated again" in capfd.readouterr().err
    assert len(server.requests) > asked
    [again] = store.read_store(out).records.values()
    assert {seen["path"].rpartition("/")[2] for seen in again["media"].values()} == {new.name}


@pytest.mark.parametrize("keep", ["id", 12])
def test_from_outputs_on_a_torn_last_line_names_the_sample_it_drops(server, data_dir, tmp_path, capfd, keep):
    """Defect: the cut last record was dropped silently and the table said "SUBSET (--limit None)"."""
    out, argv = tmp_path / "run", openai_run_argv(server, data_dir, tmp_path / "run")
    del argv[argv.index("--limit"):argv.index("--limit") + 2]  # all of the task's samples
    assert main(argv) == 0
    merged = out / store.MERGED
    lines = merged.read_bytes().splitlines(keepends=True)
    last = json.loads(lines[-1])
    cut = lines[-1].index(b'"id"') + len(json.dumps({"id": last["id"]})) if keep == "id" else keep
    merged.write_bytes(b"".join(lines[:-1]) + lines[-1][:cut])
    capfd.readouterr()
    assert main(["run", "--from-outputs", str(out)]) == 0
    captured = capfd.readouterr()
    said = (f"the record of task 'cmm' item {last['id']!r}" if keep == "id" else
            "an unreadable record (cut after 12 bytes, too early to tell its sample)")
    assert f"dropped the torn last line (an interrupted write) of {merged}: {said}" in captured.err, captured.err
    assert "--limit" not in captured.out and f"SUBSET (a torn last line dropped): cmm {len(lines) - 1} of {len(lines)}" in captured.out, captured.out
    assert json.loads((out / "results.json").read_text())["run"]["torn_lines"] == [str(merged)]
