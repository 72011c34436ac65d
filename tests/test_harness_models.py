"""The harness end to end on the mini benchmarks with one tiny model of each kind: audio-visual
(Qwen2.5-Omni thinker), video (Qwen2-VL), audio (Qwen2-Audio) and image (LLaVA), through the real processor,
chat template and `generate`. The models are untrained, so what is checked is what each sample saw
and that every output was recorded and parsed or counted, not the answers themselves."""
import json
import os

import pytest
import torch

from hallubench.benchmarks import get_task
from hallubench.cli.main import main
from hallubench.harness import store

os.environ["HF_HUB_OFFLINE"] = "1"
torch.set_num_threads(1)

CASES = {
    # kind: (modality, {task: the media each of its samples must have seen}); the mini CMM's first rows
    # are visual-language probes (video, no audio).
    "qwen2_5_omni": ("audio-visual", {"cmm": {"video"}, "avhallubench_visual": {"video", "audio"}}),
    "qwen2_vl": ("visual-only", {"cmm": {"video"}, "mhalubench": {"image"}}),
    "qwen2_audio": ("audio-only", {"avhallubench_audio": {"audio"}, "avhallubench_speech": {"audio"}}),
    # a family the adapter loads through transformers' auto mappings alone (image only)
    "llava": ("visual-only", {"mhalubench": {"image"}, "cchall": {"image"}}),
}


@pytest.fixture(scope="module")
def data_dir(mini_datasets):
    return mini_datasets


@pytest.mark.parametrize("kind", list(CASES))
def test_each_model_kind_runs_its_modality_on_the_mini_benchmarks(kind, data_dir, tiny_checkpoint, tmp_path):
    modality, media = CASES[kind]
    model = tiny_checkpoint(kind)
    out = tmp_path / "run"
    argv = ["run", "--model", "hf", "--model-args", f"pretrained={model},dtype=float32", "--data-dir", str(data_dir),
            "--output-dir", str(out), "--tasks", ",".join(media), "--modality", modality, "--limit", "2",
            "--num-samples", "1", "--num-frames", "4", "--gen-kwargs", "max_new_tokens=5", "--batch-size", "2"]
    assert main(argv) == 0

    records, torn = store.read_jsonl(out / "samples.jsonl")
    assert not torn and len(records) == 2 * len(media)
    assert [r["error"] for r in records] == [None] * len(records)
    for record in records:
        assert len(record["outputs"]) == 1 and isinstance(record["outputs"][0], str)
        assert set(record["media"]) == media[record["task"]]
        if "video" in record["media"]:
            assert len(record["media"]["video"]["indices"]) == 4
        if record["task"] == "cmm":
            assert record["parsed"] in ("yes", "no", None)
        assert len(record["samples"]) == (1 if get_task(record["task"]).cross_checkable else 0)
    results = json.loads((out / "results.json").read_text())
    assert sorted(results["tasks"]) == sorted(media)
    if "cmm" in media:
        cmm = results["tasks"]["cmm"]
        assert cmm["n_selected"] == 2 and cmm["n_scored"] + cmm["n_unparsed"] == 2


def test_a_modality_the_model_cannot_take_is_refused_before_any_sample(data_dir, tiny_checkpoint, tmp_path, capsys):
    model = tiny_checkpoint("qwen2_vl")
    out = tmp_path / "run"
    argv = ["run", "--model", "hf", "--model-args", f"pretrained={model},dtype=float32", "--data-dir", str(data_dir),
            "--output-dir", str(out), "--tasks", "cmm", "--limit", "2"]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "task 'cmm' sends audio under --modality audio-visual" in error and "use --modality visual-only" in error
    assert "--tasks cmm_visual (Table 2b)" in error  # the paper's part for a visual-only model
    assert not (out / "samples.jsonl").exists() and not list(out.glob("samples_rank*.jsonl"))


@pytest.mark.parametrize("modality, kinds", [
    ("audio-visual", {"video", "audio"}), ("visual-only", {"video"}), ("audio-only", {"audio"}),
    ("muted", {"video", "audio"}), ("blank", {"video", "audio"}),
])
def test_sent_kinds_follow_the_modality(modality, kinds):
    from hallubench.benchmarks import get_task
    from hallubench.harness.media import sent_kinds

    assert sent_kinds(get_task("cmm"), modality) == kinds
    assert sent_kinds(get_task("mhalubench"), modality) == ({"image"} if modality != "audio-only" else set())
