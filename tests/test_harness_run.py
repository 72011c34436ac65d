"""End to end with a tiny random Qwen2.5-Omni: resume, re-scoring, media errors, 1 vs 2 processes.

One reference run (`reference`) is made once; every other run must reproduce its samples exactly.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.harness.results_schema import Results


os.environ["HF_HUB_OFFLINE"] = "1"
# CPU float reductions depend on the thread count, and a tiny random model's sampled tokens follow
# them; every run here (in-process and launched) uses one thread so outputs can be compared exactly.
torch.set_num_threads(1)
TASKS = ["--tasks", "cmm,avhallubench_visual", "--limit", "3", "--num-samples", "2", "--num-frames", "4"]


@pytest.fixture(scope="module")
def tiny_omni(tiny_checkpoint):
    return tiny_checkpoint("qwen2_5_omni")


@pytest.fixture(scope="module")
def data_dir(mini_datasets):
    return mini_datasets


def _argv(model, data, out, *extra):
    return ["run", "--model", "hf", "--model-args", f"pretrained={model},dtype=float32", "--data-dir", str(data),
            "--output-dir", str(out), "--gen-kwargs", "max_new_tokens=6", *extra]


def _samples(run_dir):
    """Records by (task, id) without the timing field."""
    records, torn = store.read_jsonl(Path(run_dir) / "samples.jsonl")
    assert not torn
    return {(r["task"], r["id"]): {k: v for k, v in r.items() if k != "time_s"} for r in records}


def _results(run_dir):
    return Results.from_dict(json.loads((Path(run_dir) / "results.json").read_text()))


@pytest.fixture(scope="module")
def reference(tiny_omni, data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "run"
    assert main(_argv(tiny_omni, data_dir, out, *TASKS)) == 0
    return out


def test_reference_run_logs_prompts_media_outputs_and_samples(reference):
    samples, results = _samples(reference), _results(reference)
    assert len(samples) == 6 and results.run.generated == 6
    assert (reference / "results.png").read_bytes().startswith(b"\x89PNG")
    cmm = samples[("cmm", "cmm-0000")]
    assert cmm["prompt"].endswith(" Answer with yes or no.") and len(cmm["media"]["video"]["indices"]) == 4
    assert cmm["generation"]["temperature"] == 0.2 and cmm["generation"]["max_new_tokens"] == 6
    assert cmm["parsed"] in ("yes", "no", None) and cmm["samples"] == []
    visual = next(rec for key, rec in samples.items() if key[0] == "avhallubench_visual")
    assert len(visual["samples"]) == 2 and visual["sample_generation"]["temperature"] == 1.0
    assert visual["media"]["audio"]["end"] > 0 and visual["reference"]
    task = results.tasks["cmm"]
    assert task.n_selected == 3 and task.n_total > 3 and task.n_scored + task.n_unparsed == 3
    assert set(task.metrics) >= {"pa", "hr", "accuracy"} and task.groups


def test_limit_then_more_resumes_without_repeating_or_losing(tiny_omni, data_dir, reference, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_argv(tiny_omni, data_dir, out, *TASKS, "--limit", "1")) == 0
    assert main(_argv(tiny_omni, data_dir, out, *TASKS)) == 0
    assert _results(out).run.generated == 4
    assert _samples(out) == _samples(reference)
    assert "| cmm | all | 3 |" in capsys.readouterr().out


def test_sampled_task_batched_gives_the_samples_of_batch_size_1(tiny_omni, data_dir, reference, tmp_path):
    out = tmp_path / "run"
    assert main(_argv(tiny_omni, data_dir, out, *TASKS, "--tasks", "cmm", "--batch-size", "3")) == 0
    cmm = {key: record for key, record in _samples(reference).items() if key[0] == "cmm"}
    assert _results(out).run.generated == 3 and _samples(out) == cmm


def test_torn_last_line_is_redone_and_from_outputs_rescoring_matches(tiny_omni, data_dir, reference, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    merged = out / "samples.jsonl"
    data = merged.read_bytes()
    merged.write_bytes(data[:len(data) - 40])  # kill -9 in the middle of the last record
    assert main(_argv(tiny_omni, data_dir, out, *TASKS)) == 0
    results = _results(out)
    assert results.run.generated == 1 and str(merged) in results.run.torn_lines
    assert _samples(out) == _samples(reference) and results.tasks == _results(reference).tasks
    rescored_dir = tmp_path / "rescored"
    assert main(["run", "--from-outputs", str(reference), "--output-dir", str(rescored_dir)]) == 0
    rescored = _results(rescored_dir)
    assert rescored.tasks == _results(reference).tasks and rescored.run.from_outputs == str(reference)
    assert rescored.model == _results(reference).model


def test_unloadable_media_is_an_error_record_not_an_answer(tiny_omni, data_dir, reference, tmp_path):
    data = tmp_path / "datasets"
    shutil.copytree(data_dir / "cmm", data / "cmm")
    good = {key: rec for key, rec in _samples(reference).items() if key[0] == "cmm"}
    victim = good[("cmm", "cmm-0000")]["media"]["video"]["path"]
    broken = {key for key, rec in good.items() if rec["media"]["video"]["path"] == victim}
    assert len(broken) < len(good)
    (data / "cmm" / victim).write_bytes(b"not a video")
    out = tmp_path / "bad"
    assert main(_argv(tiny_omni, data, out, *TASKS, "--tasks", "cmm")) == 0
    for key, record in _samples(out).items():
        if key in broken:
            assert record["error"]["type"] == "media" and Path(victim).name in record["error"]["message"]
            assert record["outputs"] == [] and record["parsed"] is None
        else:
            assert record == good[key]
    task = _results(out).tasks["cmm"]
    assert (task.n_selected, task.n_errors) == (3, len(broken))
    assert task.n_scored + task.n_unparsed == 3 - len(broken)


@pytest.mark.slow
def test_two_processes_give_the_same_samples_as_one(tiny_omni, data_dir, reference, tmp_path):
    out = tmp_path / "run"
    # Start from a partial single-process run: resuming works across process counts too.
    assert main(_argv(tiny_omni, data_dir, out, *TASKS, "--tasks", "cmm", "--limit", "1")) == 0
    # accelerate 1.15 runs `launch --cpu --num_processes 2` as ONE process (multi-CPU needs mpirun);
    # torchrun through `--multi_gpu` with ACCELERATE_USE_CPU gives two gloo processes on CPU.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "ACCELERATE_USE_CPU": "true"}
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
              "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
              "-m", "hallubench", *_argv(tiny_omni, data_dir, out, *TASKS)]
    proc = subprocess.run(launch, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = _results(out)
    assert results.run.num_processes == 2 and results.run.generated == 5
    assert _samples(out) == _samples(reference)
    assert results.tasks == _results(reference).tasks


@pytest.mark.slow
def test_rerun_after_kill_9_finishes_without_repeating_or_losing(tiny_omni, data_dir, reference, tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "hallubench", *_argv(tiny_omni, data_dir, out, *TASKS)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    rank_file = store.rank_file(out, 0)
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        if rank_file.exists() and rank_file.read_bytes().count(b"\n") >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = store.read_store(out).finished()
    assert 2 <= len(done) < 6 and not (out / "results.json").exists()
    assert main(_argv(tiny_omni, data_dir, out, *TASKS)) == 0
    assert _results(out).run.generated == 6 - len(done)
    assert _samples(out) == _samples(reference)


def test_rerun_with_other_settings_warns_that_the_folder_now_mixes_them(tiny_omni, data_dir, reference, tmp_path,
                                                                        capsys):
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    capsys.readouterr()
    assert main(_argv(tiny_omni, data_dir, out, *TASKS, "--limit", "1", "--seed", "7")) == 0
    assert "already holds 2 of these samples made with other settings" in capsys.readouterr().err
    records, _ = store.read_jsonl(out / "samples.jsonl")
    assert _results(out).run.generated == 2 and len(records) == 8  # the 2 new records join the 6 old ones
    assert main(["run", "--from-outputs", str(out)]) == 2  # and re-scoring refuses the mixed folder
    err = capsys.readouterr().err
    assert "has records made with two settings (seed: " in err and "A run folder holds one setting" in err
