"""What the viewer tests share: a ranking made by `hallubench rank` (real embedding judge) of hand-written run
folders where one model's first sentence is known to be unsupported (every evidence model describes something else),
with a name and a sentence that try to break out of the page's HTML and JSON."""
import json
from pathlib import Path

from run_folder_support import rewrite_results

from hallubench.cli.main import main
from hallubench.harness.digest import scored_digests
from hallubench.harness.results_schema import GroupResult, ModelInfo, Results, RunInfo, TaskResult

TASK = "avhallubench_visual"
RED = "A red square moves to the left. A tone beeps twice a second."
SUPPORTED = "A red square moves to the left."
UNSUPPORTED = "A dog plays the piano in a kitchen."
HOSTILE = "</script><img src=x onerror=alert(1)> sings."
HOSTILE_NAME = "dog</script><b>"


def write_run(folder: Path, answer: str, samples: list[str], data_dir: Path, video: str, mini: bool = True,
              served: str | None = None) -> Path:
    """A finished run folder of TASK with items q1 and q2 (results.json says it read `data_dir`); `served`: the model
    name an OpenAI-compatible server answered as (`--model openai --model-args model=NAME`)."""
    folder.mkdir(parents=True)
    media = {"video": {"path": video, "timestamps": [0.5, 1.5], "indices": [4, 12]},
             "audio": {"path": video, "start": 0.0, "end": 2.0, "muted": False}}
    records = [{"key": f"{folder.name}-{item}", "task": TASK, "id": item, "prompt": "Describe the video.",
                "outputs": [answer], "samples": samples, "reference": "A red square slides left while a tone beeps.",
                "media": media, "parsed": answer, "error": None} for item in ("q1", "q2")]
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    results = Results(tasks={TASK: TaskResult(task=TASK, benchmark="avhallubench", metric=None, scored_by="crosscheck",
                                              n_total=2, n_selected=2, n_scored=2, unreadable_share=0.0)},
                      model=ModelInfo(name="openai", args={"model": served}) if served else ModelInfo(name="hf"),
                      run=RunInfo(options={"data_dir": str(data_dir)},
                                                              mini_data=[TASK] if mini else [],
                                                              records_digest=scored_digests(records, {})))
    rewrite_results(folder, results.to_dict())  # with its manifest, as a run leaves it
    return folder


def results_json(folder: Path, tasks: dict[str, TaskResult], verdicts: dict[str, dict] | None = None,
                 model: str = "org/model", mini: list[str] = (), limit: int | None = None, served: bool = False) -> dict:
    """Write a results.json of the harness's schema into `folder`, beside its samples.jsonl (whose digest it records);
    `verdicts`: task -> the per-sample verdicts scoring adds (the shape of the shared verdict contract), put beside
    the task's other fields."""
    records = [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]
    adapter = ModelInfo(name="openai", args={"model": model}) if served else ModelInfo(name="hf", args={"pretrained": model})
    results = Results(tasks=tasks, model=adapter,
                      run=RunInfo(options={"limit": limit}, mini_data=list(mini),
                                  records_digest=scored_digests(records, {}))).to_dict()
    for name, given in (verdicts or {}).items():
        results["tasks"][name]["verdicts"] = given
    rewrite_results(folder, results)
    return results


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


def served_ranking(root: Path, data_dir: Path) -> tuple[Path, list[Path]]:
    """(ranking folder, run folders): three runs that one server answered as `model=x` (three checkpoints behind
    one served name), ranked as tiny_model_1..3, and a fourth, unranked POPE run served as `model=x` too."""
    video = sorted((data_dir / "avhallubench" / "videos").glob("*.mp4"))[0].relative_to(data_dir / "avhallubench")
    answers = [RED, "A red square moves to the left. A dog barks.", f"{UNSUPPORTED} A tone beeps."]
    runs = [write_run(root / "runs" / f"run{k}", answer, [RED, "A red square slides left."], data_dir, str(video),
                      served="x") for k, answer in enumerate(answers, start=1)]
    out = root / "ranking"
    argv = ["rank", *(f"tiny_model_{k}={run}" for k, run in enumerate(runs, start=1)), "--output-dir", str(out),
            "--cache", str(root / "judgments.sqlite"), "--weighting", "uniform"]
    assert main(argv) == 0
    return out, runs + [write_pope_run(root / "runs" / "pope", "x", 0.75, served=True)]


def write_cmm_run(folder: Path, verdicts: bool = True) -> Path:
    """A finished cmm run folder (mini data, --limit 5 of 8) with five samples: right, wrong, unreadable, failed,
    and p5, whose strict parser's reading ("yes") equals the reference while the headline's rule (mode=official:
    the answer begins with yes/no) read "Noted" as "no" and counted it wrong: a page must show the verdict, never a
    match of the parser's reading. `verdicts`: results.json carries them (the shared verdict contract)."""
    folder.mkdir(parents=True)
    records = [{"key": "1", "task": "cmm", "id": "p1", "prompt": "Is there a dog? Answer yes or no.", "outputs": ["Yes."],
                "parsed": "yes", "reference": "yes", "error": None},
               {"key": "2", "task": "cmm", "id": "p2", "prompt": "Is there a cat?", "outputs": ["No"], "parsed": "no",
                "reference": "yes", "error": None},
               {"key": "3", "task": "cmm", "id": "p3", "prompt": "Is there a cow?", "outputs": ["I cannot tell\x07\x1b[2J"],
                "parsed": None, "reference": "no", "error": None},
               {"key": "4", "task": "cmm", "id": "p4", "prompt": "Is there a fox?", "outputs": [], "parsed": None,
                "reference": "no", "error": {"type": "generation", "message": "scripted failure"}},
               {"key": "5", "task": "cmm", "id": "p5", "prompt": "Is there a bell?", "outputs": ["Noted: yes, there is."],
                "parsed": "yes", "reference": "yes", "error": None}]
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    counts = {"n_selected": 5, "n_errors": 1, "n_unparsed": 1, "n_scored": 3, "n_unreadable": 1, "unreadable_share": 0.25,
              "mostly_unreadable": True}
    groups = {"visual-language": GroupResult(**counts, metrics={"pa": 1 / 3, "pa_stderr": 0.25})}
    task = TaskResult(task="cmm", benchmark="cmm", metric="pa_hr", n_total=8, groups=groups, **counts,
                      metrics={"pa": 1 / 3, "pa_stderr": 0.25, "hr": 0.0, "hr_stderr": 0.125,
                               "per_class": {"yes": {"precision": 0.5, "support": 3}, "no": {"precision": 1.0, "support": 1}}},
                      higher_is_better={"pa": True, "hr": True})
    given = {"cmm": {"p1": {"verdict": "correct", "reading": "yes"}, "p2": {"verdict": "wrong", "reading": "no"},
                     "p3": {"verdict": "unreadable", "reading": None}, "p4": {"verdict": "error", "reading": None},
                     "p5": {"verdict": "wrong", "reading": "no"}}}
    results = results_json(folder, {"cmm": task}, given if verdicts else None, mini=["cmm"], limit=5)
    if not verdicts:  # as scored before answers had verdicts: schema version 1
        results["version"] = 1
        rewrite_results(folder, results)
    return folder


def write_pope_run(folder: Path, model: str, accuracy: float, mini: bool = False, unreadable: int = 0,
                   served: bool = False) -> Path:
    """A finished pope run folder of `model` (`pretrained`, or `model` of an API adapter where `served`), scored by
    the harness's own scoring (so `hallubench verify` agrees): 16 answers, `unreadable` of them unreadable and
    `accuracy` of the others right."""
    from hallubench.benchmarks import get_task
    from hallubench.harness.scoring import score_task

    folder.mkdir(parents=True)
    right = round(accuracy * (16 - unreadable))
    records = []
    for k in range(16):
        reference = "yes" if k % 2 else "no"
        answer = "maybe" if k < unreadable else reference if k - unreadable < right else ("no" if reference == "yes" else "yes")
        records.append({"key": f"{folder.name}-{k}", "task": "pope", "id": f"coco-{k:02d}", "generation": {},
                        "prompt": "Is there a cat in the image?", "outputs": [answer.capitalize()],
                        "parsed": None if answer == "maybe" else answer, "reference": reference, "error": None})
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    task = score_task(get_task("pope"), records, 16)
    results_json(folder, {"pope": task}, model=model, mini=["pope"] if mini else [], served=served)
    return folder
