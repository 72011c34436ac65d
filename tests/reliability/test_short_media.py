"""Media that decode short are never silently scored: a truncated mp4 (its header declares more frames than its
bytes hold) and a truncated wav (its header declares more seconds) in a dataset are, through `hallubench run`, each a
per-sample media error (ShortMediaError naming the file, what was asked and what decoded), counted in the results'
errors, left out of the scores, never sent to the model, with no raw Python warning on stderr."""
import json
import shutil

import pyarrow.parquet as pq

from hallubench.builders.mini.synthetic import shape_frames, write_mp4
from hallubench.cli.main import main

from conftest import API_KEY, openai_run_argv


def cut(path, keep=3):
    """`path` cut to its first 1/`keep` of bytes, as an interrupted download leaves it."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // keep])


def test_a_truncated_mp4_and_wav_are_media_errors_counted_and_never_scored(server, data_dir, tmp_path, capfd,
                                                                           monkeypatch):
    monkeypatch.setenv("HB_RELIABILITY_KEY", API_KEY)
    folder = tmp_path / "datasets" / "cmm"
    shutil.copytree(data_dir / "cmm", folder)
    rows = {row["id"]: row for path in folder.glob("data/all/*.parquet") for row in pq.read_table(path).to_pylist()}
    video, audio = rows["cmm-0000"]["video_path"], rows["cmm-0008"]["audio_path"]
    assert video.endswith(".mp4") and audio.endswith(".wav") and rows["cmm-0000"]["audio_path"] is None
    write_mp4(folder / video, shape_frames(48), fps=8)  # its index up front: a cut file still opens
    cut(folder / video)
    cut(folder / audio)
    out = tmp_path / "run"
    argv = openai_run_argv(server, folder.parent, out, "--num-frames", "16")
    argv[argv.index("--limit") + 1] = "9"  # cmm-0000 ... cmm-0008
    assert main(argv) == 0
    shown = capfd.readouterr()
    assert "Warning" not in shown.err, shown.err

    records = {r["id"]: r for r in map(json.loads, (out / "samples.jsonl").read_text().splitlines())}
    cut_rows = {item: (path, decoded) for item, row in records.items()
                for path, decoded in ((video, "frames decode of the"), (audio, "s decode of the"))
                if path in (rows[item]["video_path"], rows[item]["audio_path"])}
    assert len(records) == 9 and {"cmm-0000", "cmm-0008"} <= cut_rows.keys()
    for item, (path, decoded) in cut_rows.items():
        error = records[item]["error"]
        assert error["type"] == "media" and error["class"] == "ShortMediaError", error
        assert path in error["message"] and "truncated" in error["message"] and decoded in error["message"]
        assert "asked: " in error["message"]
    assert {item for item, record in records.items() if record.get("error")} == cut_rows.keys()
    result = json.loads((out / "results.json").read_text())["tasks"]["cmm"]
    assert result["n_errors"] == len(cut_rows) and result["n_scored"] == 9 - len(cut_rows)
    assert len(server.requests) == 9 - len(cut_rows), "a truncated item reached the model"
    table = [line.split("|") for line in shown.out.splitlines() if line.startswith("| cmm ")]
    assert [cells[6].strip() for cells in table] == [str(len(cut_rows))], shown.out  # the table's errors column


def test_build_refuses_a_truncated_mp4_and_wav_or_lists_their_rows_as_skipped(tmp_path, capsys):
    """The build checks each video and WAV it places against its header, without decoding: a truncated one stops
    the build naming it, or with --skip-missing leaves its rows out, each in skipped.jsonl with the reason."""
    from hallubench.builders.mini import make_release

    release = make_release("cmm", tmp_path / "release")
    video = sorted(release.rglob("*.mp4"))[0]
    audio = sorted(release.rglob("*.wav"))[0]
    write_mp4(video, shape_frames(48), fps=8)
    cut(video)
    cut(audio)
    assert main(["build", "cmm", "--source", str(release), "--out", str(tmp_path / "refused")]) == 1
    err = capsys.readouterr().err
    assert "truncated: " in err and ("frames decode of the 48 frames" in err or " s decode of the " in err), err
    assert not (tmp_path / "refused").exists()

    out = tmp_path / "cmm"
    assert main(["build", "cmm", "--source", str(release), "--out", str(out), "--skip-missing"]) == 0
    skipped = [json.loads(line) for line in (out / "skipped.jsonl").read_text().splitlines()]
    reasons = " ".join(entry["reason"] for entry in skipped)
    assert f"{video.name} is truncated: " in reasons and f"{audio.name} is truncated: " in reasons, reasons
    assert not list(out.rglob(video.name)) and not list(out.rglob(audio.name))
