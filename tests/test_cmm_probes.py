"""Graded dominance probes (CMM Figure 2): `--perturb` ladders (harness/perturb.py) and `--answer-probs`
(harness/answer_probs.py, harness/probes_plot.py): what each level does to the media, one record per (item, level)
with its level and seed, P("yes")/P("no") per level and sub-category with intervals and the chart, resume after a
kill, re-scoring, the refusals, and the real pipeline on a tiny checkpoint (probabilities from one forward pass)."""
import json
import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageFilter

from hallubench import models
from hallubench.benchmarks import get_task
from hallubench.cli.main import main
from hallubench.errors import ConfigError
from hallubench.harness import store
from hallubench.harness.data import load_rows
from hallubench.harness.media import media_parts
from hallubench.harness.options import RunOptions
from hallubench.harness.perturb import Perturbation, add_noise, parse_perturb
from hallubench.models.protocol import AudioPart, VideoPart

TASK = "cmm_audio_visual"  # the mini CMM's probes with both video and audio
LADDERS = ("--perturb", "video_blur=0,8", "--perturb", "audio_snr=inf,-10")
LEVELS = ["audio_snr=inf", "audio_snr=-10", "video_blur=0", "video_blur=8"]  # clean to degraded, by kind
CALLS: list[str] = []


class Killed(BaseException):
    """Stands in for kill -9: nothing in the harness catches it."""


class ProbeDouble:
    """Answers "No." and reads P(yes) from how sharp the frames are and how clean the sound is, so the levels differ;
    `kill_after` calls it dies."""

    accepts = frozenset({"video", "audio", "image"})

    def __init__(self, model: str, kill_after: int = 0, **_):
        self.name, self.fingerprint, self.kill_after = "probe-double", "probe-double-1", kill_after

    def generate(self, conversations, settings, seeds=None):
        CALLS.extend("generate" for _ in conversations)
        if self.kill_after and len(CALLS) > self.kill_after:
            raise Killed()
        return [["No."] * settings.n for _ in conversations]

    def next_token_probs(self, conversations, words):
        out = []
        for conv in conversations:
            parts = {type(p): p for p in conv[0].content}
            sharp = np.abs(np.diff(parts[VideoPart].frames.astype(float), axis=2)).mean() / 255
            rough = np.abs(np.diff(parts[AudioPart].samples)).mean()
            out.append([min(0.5, sharp + rough), 0.25])
        return out


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(models.MODELS, "probe_double", ProbeDouble)
    CALLS.clear()


def _run(data, out, *extra, model=("probe_double", "pretrained=x"), tasks=TASK):
    return main(["run", "--model", model[0], "--model-args", model[1], "--tasks", tasks, "--data-dir", str(data),
                 "--output-dir", str(out), "--limit", "2", *extra])


def _records(run_dir):
    records, torn = store.read_jsonl(Path(run_dir) / "samples.jsonl")
    assert not torn
    return {r["id"]: {k: v for k, v in r.items() if k != "time_s"} for r in records}


def _result(run_dir):
    return json.loads((Path(run_dir) / "results.json").read_text())["tasks"][TASK]


@pytest.fixture(scope="module")
def reference(mini_datasets, tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(models.MODELS, "probe_double", ProbeDouble)
        out = tmp_path_factory.mktemp("probes") / "run"
        assert _run(mini_datasets, out, *LADDERS, "--answer-probs") == 0
        return out


def test_ladders_parse_and_bad_levels_are_refused():
    assert parse_perturb(["video_blur=0,2.0,16", "audio_snr=inf,20,-10"]) == \
        {"video_blur": ["0", "2", "16"], "audio_snr": ["inf", "20", "-10"]}
    assert parse_perturb({"image_blur": [0, 4]}) == {"image_blur": ["0", "4"]}
    for bad, message in (("video_blur=-1", "blur sigma >= 0"), ("video_blur=inf", "blur sigma >= 0"),
                         ("audio_snr=loud", "not a number"), ("audio_snr=-inf", "dB or inf"),
                         ("frame_drop=1", "unknown kind"), ("video_blur=2,2", "distinct levels")):
        with pytest.raises(ConfigError, match=message):
            parse_perturb([bad])


def test_noise_has_the_asked_signal_to_noise_ratio_and_is_seeded():
    signal = np.sin(np.linspace(0, 400 * np.pi, 32000)).astype(np.float32)
    for snr in (20.0, 0.0, -10.0):
        noise = add_noise(signal, snr, seed=7).astype(np.float64) - signal
        measured = 10 * math.log10(np.mean(signal.astype(np.float64) ** 2) / np.mean(noise ** 2))
        assert measured == pytest.approx(snr, abs=0.1)
    assert np.array_equal(add_noise(signal, 0.0, 7), add_noise(signal, 0.0, 7))
    assert not np.array_equal(add_noise(signal, 0.0, 7), add_noise(signal, 0.0, 8))
    assert add_noise(signal, math.inf, 7) is signal and not add_noise(np.zeros(8, np.float32), 0.0, 7).any()


def test_each_level_blurs_the_frames_or_adds_noise_to_the_soundtrack(mini_datasets):
    task = get_task(TASK)
    folder = mini_datasets / task.benchmark
    row = [r for r in load_rows(folder, task)[0] if not task.exclude(r)][0]
    options = RunOptions(num_frames=2)

    def parts(perturbation):
        return {type(p): p for p in media_parts(task, row, folder, options, perturbation)[0]}

    clean, blurred = parts(None), parts(Perturbation("video_blur", "8", 1))
    expected = [np.asarray(Image.fromarray(frame).filter(ImageFilter.GaussianBlur(radius=8)))
                for frame in clean[VideoPart].frames]
    assert np.array_equal(blurred[VideoPart].frames, np.stack(expected))
    assert not np.array_equal(blurred[VideoPart].frames, clean[VideoPart].frames)
    assert np.array_equal(blurred[AudioPart].samples, clean[AudioPart].samples)
    noisy = parts(Perturbation("audio_snr", "-10", 5))
    assert np.array_equal(noisy[AudioPart].samples, add_noise(clean[AudioPart].samples, -10.0, 5))
    assert np.array_equal(noisy[VideoPart].frames, clean[VideoPart].frames)
    assert np.array_equal(parts(Perturbation("video_blur", "0", 1))[VideoPart].frames, clean[VideoPart].frames)


def test_one_record_per_item_and_level_with_its_level_seed_and_probabilities(reference):
    records = _records(reference)
    assert len(records) == 2 * len(LEVELS)
    for sid, record in records.items():
        row_id, _, label = sid.partition("@")
        perturbation = record["perturbation"]
        assert perturbation["label"] == label and f"{perturbation['kind']}={perturbation['level']}" == label
        assert record["group"][0] == label and all(g.startswith(label + " / ") for g in record["group"][1:])
        assert set(record["answer_probs"]) == {"yes", "no"} and sum(record["answer_probs"].values()) <= 1
        assert record["outputs"] == ["No."] and record["parsed"] == "no"
    seeds = {r["perturbation"]["seed"] for r in records.values()}
    assert len(seeds) == len(records)  # per item and level
    # blur and noise change what the double reads; the clean levels of the two ladders show the same media
    by_level = {label: [r["answer_probs"]["yes"] for sid, r in sorted(records.items()) if sid.endswith("@" + label)]
                for label in LEVELS}
    assert by_level["video_blur=0"] == by_level["audio_snr=inf"]
    assert all(a > b for a, b in zip(by_level["video_blur=0"], by_level["video_blur=8"]))
    assert all(a < b for a, b in zip(by_level["audio_snr=inf"], by_level["audio_snr=-10"]))


def test_results_hold_probabilities_per_level_and_sub_category_with_intervals_and_the_chart(reference, mini_datasets):
    result = _result(reference)
    task = get_task(TASK)
    rows = [row for row in load_rows(mini_datasets / task.benchmark, task)[0] if not task.exclude(row)]
    assert (result["n_selected"], result["n_total"]) == (2 * len(LEVELS), len(rows) * len(LEVELS))  # per level
    probs = result["answer_probs"]
    assert probs["levels"] == LEVELS and probs["words"] == ["yes", "no"] and "bootstrap" in probs["interval"]
    records = _records(reference)
    for label in LEVELS:
        mine = [r for sid, r in records.items() if sid.endswith("@" + label)]
        for reference_answer in {r["reference"] for r in mine}:
            cell = probs["by_level"][label]["all"][f"reference={reference_answer}"]
            values = [r["answer_probs"]["yes"] for r in mine if r["reference"] == reference_answer]
            assert cell["n"] == len(values) and cell["yes"] == pytest.approx(np.mean(values))
            assert cell["yes_ci"][0] <= cell["yes"] <= cell["yes_ci"][1] and cell["max_sum"] <= 1
        sub_category = mine[0]["group"][1].split(" / ")[1]
        assert sub_category in probs["by_level"][label]
        assert f"{label} / {sub_category}" in result["groups"]  # pa/hr/accuracy per level and sub-category too
    assert (reference / "probes.png").read_bytes().startswith(b"\x89PNG")


def test_a_killed_ladder_run_resumes_and_matches_an_unbroken_one(reference, mini_datasets, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(Killed):
        _run(mini_datasets, out, *LADDERS, "--answer-probs", model=("probe_double", "pretrained=x,kill_after=3"))
    kept = len(store.read_store(out).records)
    assert 0 < kept < 2 * len(LEVELS) and not (out / "results.json").exists()
    CALLS.clear()
    assert _run(mini_datasets, out, *LADDERS, "--answer-probs") == 0
    assert len(CALLS) == 2 * len(LEVELS) - kept  # only what the kill left undone
    assert _records(out) == _records(reference)
    assert _result(out)["answer_probs"] == _result(reference)["answer_probs"]


def test_rescoring_recomputes_the_probabilities_from_the_records(reference, tmp_path):
    assert main(["run", "--from-outputs", str(reference), "--output-dir", str(tmp_path / "re")]) == 0
    assert _result(tmp_path / "re")["answer_probs"] == _result(reference)["answer_probs"]
    assert (tmp_path / "re" / "probes.png").exists()


def test_probes_are_refused_where_they_cannot_apply(mini_datasets, tmp_path, capsys):
    assert _run(mini_datasets, tmp_path / "a", "--answer-probs", tasks="avhallubench_visual") == 2
    assert "--answer-probs: task 'avhallubench_visual' is not a one-step yes/no task" in capsys.readouterr().err
    assert _run(mini_datasets, tmp_path / "b", "--perturb", "audio_snr=0", tasks="cmm_visual") == 2
    assert "--perturb audio_snr: task 'cmm_visual' shows no audio" in capsys.readouterr().err
    assert _run(mini_datasets, tmp_path / "c", "--perturb", "video_blur=x") == 2
    assert "video_blur: level 'x' is not a number" in capsys.readouterr().err
    assert not CALLS


def test_tiny_checkpoint_records_first_token_probabilities_per_level(tiny_checkpoint, mini_datasets, tmp_path):
    model = ("hf", f"pretrained={tiny_checkpoint('qwen2_5_omni')},dtype=float32")
    out = tmp_path / "run"
    assert _run(mini_datasets, out, "--perturb", "video_blur=0,16", "--answer-probs", "--num-frames", "2",
                "--gen-kwargs", "max_new_tokens=2", model=model) == 0
    records = _records(out)
    assert len(records) == 4 and all(r["error"] is None for r in records.values())
    for record in records.values():
        p_yes, p_no = record["answer_probs"]["yes"], record["answer_probs"]["no"]
        assert 0 < p_yes and 0 < p_no and p_yes + p_no <= 1
    assert _result(out)["answer_probs"]["levels"] == ["video_blur=0", "video_blur=16"]
    assert (out / "probes.png").exists() and (out / "results.png").exists()


def test_openai_compatible_answer_probs_sum_the_variants_among_the_top_20(monkeypatch):
    import httpx

    from hallubench.harness.generate import answer_probs
    from hallubench.models.protocol import Message, TextPart

    monkeypatch.setenv("PROBE_KEY", "sk-probe")
    sent = []

    def server(request):
        sent.append(json.loads(request.content))
        top = [{"token": "Yes", "logprob": math.log(0.5)}, {"token": " yes", "logprob": math.log(0.1)},
               {"token": "No", "logprob": math.log(0.3)}, {"token": "Maybe", "logprob": math.log(0.05)}]
        choice = {"index": 0, "message": {"role": "assistant", "content": "Yes"},
                  "logprobs": {"content": [{"token": "Yes", "top_logprobs": top}]}}
        return httpx.Response(200, json={"choices": [choice]})

    model = models.get_model("openai", model="m", base_url="http://test.invalid/v1", api_key_env="PROBE_KEY",
                             transport=httpx.MockTransport(server))
    conversation = [Message("user", [TextPart("Is there a dog? Answer with yes or no.")])]
    [probs] = answer_probs(model, [conversation], ("yes", "no"))
    assert probs == {"yes": pytest.approx(0.6), "no": pytest.approx(0.3)}
    assert (sent[0]["max_tokens"], sent[0]["logprobs"], sent[0]["top_logprobs"]) == (1, True, 20)
