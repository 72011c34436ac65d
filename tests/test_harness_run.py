"""End to end with a tiny random Qwen2.5-Omni: resume, re-scoring, media errors, 1 vs 2 processes."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.harness.results_schema import Results

sys.path.insert(0, str(Path(__file__).parent))
from tiny_models import make_tiny_model  # noqa: E402

os.environ["HF_HUB_OFFLINE"] = "1"
GEN = "max_new_tokens=6"


@pytest.fixture(scope="session")
def tiny_omni(tmp_path_factory):
    return make_tiny_model("qwen2_5_omni", tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
    from hallubench.builders import build
    from hallubench.builders.mini import make_release

    root = tmp_path_factory.mktemp("data")
    for name in ("cmm", "avhallubench"):
        build(name, make_release(name, root / "releases" / name), root / "datasets" / name)
    return root / "datasets"


def _argv(model, data, out, *extra):
    return ["run", "--model", "hf", "--model-args", f"pretrained={model},dtype=float32", "--data-dir", str(data),
            "--output-dir", str(out), "--gen-kwargs", GEN, *extra]


def _samples(run_dir):
    """Records by (task, id) without the timing field."""
    records, torn = store.read_jsonl(Path(run_dir) / "samples.jsonl")
    assert not torn
    return {(r["task"], r["id"]): {k: v for k, v in r.items() if k != "time_s"} for r in records}


def _results(run_dir):
    return Results.from_dict(json.loads((Path(run_dir) / "results.json").read_text()))


def test_limit_then_more_resumes_without_repeating_or_losing(tiny_omni, data_dir, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_argv(tiny_omni, data_dir, out, "--tasks", "cmm", "--limit", "2")) == 0
    first = _samples(out)
    assert main(_argv(tiny_omni, data_dir, out, "--tasks", "cmm", "--limit", "4")) == 0
    second = _samples(out)
    assert len(second) == 4 and all(second[key] == first[key] for key in first)
    results = _results(out)
    assert results.run.generated == 2 and results.tasks["cmm"].n_selected == 4
    assert "| cmm | all | 4 |" in capsys.readouterr().out
    record = second[("cmm", sorted(second)[0][1])]
    assert record["prompt"].endswith(" Answer with yes or no.") and record["media"]["video"]["indices"]
    assert record["generation"]["temperature"] == 0.2 and record["generation"]["max_new_tokens"] == 6


def test_torn_last_line_is_redone_and_from_outputs_rescoring_matches(tiny_omni, data_dir, tmp_path):
    out = tmp_path / "run"
    assert main(_argv(tiny_omni, data_dir, out, "--tasks", "cmm", "--limit", "3")) == 0
    original, original_results = _samples(out), _results(out)
    merged = out / "samples.jsonl"
    data = merged.read_bytes()
    merged.write_bytes(data[:len(data) - 40])  # kill -9 in the middle of the last record
    assert main(_argv(tiny_omni, data_dir, out, "--tasks", "cmm", "--limit", "3")) == 0
    results = _results(out)
    assert results.run.generated == 1 and str(merged) in results.run.torn_lines
    assert _samples(out) == original
    assert results.tasks == original_results.tasks
    rescored_dir = tmp_path / "rescored"
    assert main(["run", "--from-outputs", str(out), "--output-dir", str(rescored_dir)]) == 0
    rescored = _results(rescored_dir)
    assert rescored.tasks == original_results.tasks and rescored.run.from_outputs == str(out)
    assert rescored.model == original_results.model


def test_unloadable_media_is_an_error_record_not_an_answer(tiny_omni, data_dir, tmp_path):
    data = tmp_path / "datasets"
    shutil.copytree(data_dir / "cmm", data / "cmm")
    good = tmp_path / "good"
    assert main(_argv(tiny_omni, data, good, "--tasks", "cmm", "--limit", "4")) == 0
    media = {key: rec["media"]["video"]["path"] for key, rec in _samples(good).items()}
    victim = media[("cmm", "cmm-0000")]
    broken = {key for key, path in media.items() if path == victim}
    assert len(broken) < len(media)
    (data / "cmm" / victim).write_bytes(b"not a video")
    bad_run = tmp_path / "bad"
    assert main(_argv(tiny_omni, data, bad_run, "--tasks", "cmm", "--limit", "4")) == 0
    for key, record in _samples(bad_run).items():
        if key in broken:
            assert record["error"]["type"] == "media" and victim.split("/")[-1] in record["error"]["message"]
            assert record["outputs"] == [] and record["parsed"] is None
        else:
            assert record["error"] is None and len(record["outputs"]) == 1
    task = _results(bad_run).tasks["cmm"]
    assert (task.n_selected, task.n_errors) == (4, len(broken))
    assert task.n_scored + task.n_unparsed == 4 - len(broken)


def test_two_processes_give_the_same_samples_as_one(tiny_omni, data_dir, tmp_path):
    args = ["--tasks", "cmm,avhallubench_visual", "--limit", "3", "--num-samples", "2"]
    single = tmp_path / "single"
    assert main(_argv(tiny_omni, data_dir, single, *args)) == 0
    double = tmp_path / "double"
    # Start from a partial single-process run: resuming works across process counts too.
    assert main(_argv(tiny_omni, data_dir, double, "--tasks", "cmm", "--limit", "1")) == 0
    # accelerate 1.15 runs `launch --cpu --num_processes 2` as ONE process (multi-CPU needs mpirun);
    # torchrun through `--multi_gpu` with ACCELERATE_USE_CPU gives two gloo processes on CPU.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "ACCELERATE_USE_CPU": "true"}
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
              "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
              "-m", "hallubench", *_argv(tiny_omni, data_dir, double, *args)]
    proc = subprocess.run(launch, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    one, two = _samples(single), _samples(double)
    assert sorted(one) == sorted(two) and len(one) == 6
    for key in one:
        assert one[key] == two[key], key
    assert len(one[("avhallubench_visual", sorted(k[1] for k in one if k[0] == "avhallubench_visual")[0])]["samples"]) == 2
    results = _results(double)
    assert results.run.num_processes == 2 and results.run.generated == 5
    assert results.tasks == _results(single).tasks
