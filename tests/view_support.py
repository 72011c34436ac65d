"""What the viewer tests share: a ranking made by `hallubench rank` (real embedding judge) of hand-written run
folders where one model's first sentence is known to be unsupported (every evidence model describes something else),
with a name and a sentence that try to break out of the page's HTML and JSON."""
import json
from pathlib import Path

from hallubench.cli.main import main
from hallubench.harness.digest import scored_digests

TASK = "avhallubench_visual"
RED = "A red square moves to the left. A tone beeps twice a second."
SUPPORTED = "A red square moves to the left."
UNSUPPORTED = "A dog plays the piano in a kitchen."
HOSTILE = "</script><img src=x onerror=alert(1)> sings."
HOSTILE_NAME = "dog</script><b>"


def write_run(folder: Path, answer: str, samples: list[str], data_dir: Path, video: str, mini: bool = True) -> Path:
    """A finished run folder of TASK with items q1 and q2 (results.json says it read `data_dir`)."""
    folder.mkdir(parents=True)
    media = {"video": {"path": video, "timestamps": [0.5, 1.5], "indices": [4, 12]},
             "audio": {"path": video, "start": 0.0, "end": 2.0, "muted": False}}
    records = [{"key": f"{folder.name}-{item}", "task": TASK, "id": item, "prompt": "Describe the video.",
                "outputs": [answer], "samples": samples, "reference": "A red square slides left while a tone beeps.",
                "media": media, "parsed": answer, "error": None} for item in ("q1", "q2")]
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    results = {"run": {"options": {"data_dir": str(data_dir)}, "mini_data": [TASK] if mini else [],
                       "records_digest": scored_digests(records, {})},
               "model": {"name": "hf"},
               "tasks": {TASK: {"metric": None, "scored_by": "crosscheck", "metrics": {}, "n_selected": 2,
                                "n_errors": 0, "n_unparsed": 0, "n_scored": 2}}}
    (folder / "results.json").write_text(json.dumps(results))
    return folder


def hand_ranking(root: Path, data_dir: Path, mini: bool = True) -> tuple[Path, list[Path]]:
    """(ranking folder, run folders): a, b and c answer and sample RED; the hostile-named model answers
    UNSUPPORTED and HOSTILE but samples RED too, so its first sentence has no support anywhere."""
    video = sorted((data_dir / "avhallubench" / "videos").glob("*.mp4"))[0].relative_to(data_dir / "avhallubench")
    runs = [write_run(root / "runs" / name, RED, [RED, "A red square slides left."], data_dir, str(video), mini)
            for name in ("a", "b", "c")]
    runs.append(write_run(root / "runs" / "dog", f"{UNSUPPORTED} {HOSTILE}", [RED, RED], data_dir, str(video), mini))
    out = root / "ranking"
    argv = ["rank", *map(str, runs[:3]), f"{HOSTILE_NAME}={runs[3]}", "--output-dir", str(out),
            "--cache", str(root / "judgments.sqlite"), "--weighting", "uniform", "--refcheck"]
    assert main(argv) == 0
    return out, runs


def write_cmm_run(folder: Path) -> Path:
    """A finished cmm run folder with four samples: matching the reference, not matching, unreadable, failed."""
    folder.mkdir(parents=True)
    records = [{"key": "1", "task": "cmm", "id": "p1", "prompt": "Is there a dog? Answer yes or no.", "outputs": ["Yes."],
                "parsed": "yes", "reference": "yes", "error": None},
               {"key": "2", "task": "cmm", "id": "p2", "prompt": "Is there a cat?", "outputs": ["No"], "parsed": "no",
                "reference": "yes", "error": None},
               {"key": "3", "task": "cmm", "id": "p3", "prompt": "Is there a cow?", "outputs": ["I cannot tell"],
                "parsed": None, "reference": "no", "error": None},
               {"key": "4", "task": "cmm", "id": "p4", "prompt": "Is there a fox?", "outputs": [], "parsed": None,
                "reference": "no", "error": {"type": "generation", "message": "scripted failure"}}]
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    digests = scored_digests(records, {})
    (folder / "results.json").write_text(json.dumps({"run": {"options": {}, "records_digest": digests},
                                                     "model": {"name": "hf"}, "tasks": {"cmm": {
        "metric": "pa_hr", "metrics": {"pa": 0.5, "pa_stderr": 0.25}, "n_selected": 4, "n_errors": 1,
        "n_unparsed": 1, "n_scored": 2, "verdicts": {
            "p1": {"verdict": "correct", "reading": "yes"}, "p2": {"verdict": "wrong", "reading": "no"},
            "p3": {"verdict": "unreadable", "reading": None}, "p4": {"verdict": "error", "reading": None}}}}}))
    return folder
