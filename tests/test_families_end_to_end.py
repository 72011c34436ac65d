"""Every family of the hf adapter's table (models/families.py) with a tiny checkpoint, end to end through
`hallubench run` on the mini benchmarks, on each medium it takes: images on MHaluBench, videos on CMM's
visual probes (--modality visual-only), audio on AVHalluBench's audio task (--modality audio-only), a video with
its soundtrack on AVHalluBench's visual task (--modality audio-visual; the Omni thinkers interleave it,
use_audio_in_video=true), text LMs on SAC3's multi-step prime task. The weights are random: what is checked is
that each sample saw the media its task sends, every output was generated and recorded, and results.json counts
them; not the answers. Families whose tiny checkpoint needs a package that is not installed skip, naming it."""
import json
import os
from pathlib import Path

import pytest
import torch

from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.models.families import families
from hallubench.models.hf import HFChatModel

os.environ["HF_HUB_OFFLINE"] = "1"
torch.set_num_threads(1)  # tiny models: threads only contend on the shared cores

LIMIT = 1
TESTED = [family for family in families() if family.tiny]
# task -> the media each of its samples sees under the run's modality
IMAGE, VIDEO = {"mhalubench": {"image"}}, {"cmm": {"video"}}  # the mini CMM's first rows are visual probes
AUDIO, AUDIO_VISUAL = {"avhallubench_audio": {"audio"}}, {"avhallubench_visual": {"video", "audio"}}
TEXT = {"sac3_prime": set()}


def runs(family) -> list[tuple[str, dict[str, set[str]]]]:
    """(modality, {task: media}) per `hallubench run` that covers every medium the family takes."""
    takes = set(family.modalities)
    if not takes:
        return [("audio-visual", TEXT)]  # the default modality; a text task sends no media
    if {"video", "audio"} <= takes:  # one run: a video with its soundtrack, and images
        return [("audio-visual", {**(IMAGE if "image" in takes else {}), **AUDIO_VISUAL})]
    visual = {**(IMAGE if "image" in takes else {}), **(VIDEO if "video" in takes else {})}
    return ([("visual-only", visual)] if visual else []) + ([("audio-only", AUDIO)] if "audio" in takes else [])


def test_every_medium_a_family_takes_is_run():
    for family in TESTED:
        sent = {kind for _, tasks in runs(family) for media in tasks.values() for kind in media}
        assert sent == set(family.modalities), family.name


def test_the_docs_table_says_how_each_family_is_tested_or_why_not():
    readme = (Path(__file__).resolve().parents[1] / "docs" / "topics" / "models.md").read_text()  # the models page
    for family in families():
        row = next((line for line in readme.splitlines() if line.startswith(f"| {family.name} | ")), None)
        assert row is not None, f"docs/topics/models.md lists no {family.name}"
        if family.tiny:
            assert f"`{family.tiny}`: " in row, row
            assert all(task in row and (modality in row or media is TEXT) for modality, media in runs(family)
                       for task in media), row
        else:
            assert "untested" in row or "refused" in row, row


@pytest.mark.parametrize("family", TESTED, ids=[family.tiny for family in TESTED])
def test_each_family_runs_its_media_end_to_end(family, mini_datasets, tiny_checkpoint, tmp_path, monkeypatch):
    interleaved = []  # per generate call: did the videos carry their soundtrack (use_audio_in_video)?
    generate_batch = HFChatModel._generate_batch

    def spy(self, conversations, settings, flag=False, seeds=None):
        interleaved.append(flag)
        return generate_batch(self, conversations, settings, flag, seeds)

    monkeypatch.setattr(HFChatModel, "_generate_batch", spy)
    model_args = f"pretrained={tiny_checkpoint(family.tiny)},dtype=float32"
    if family.pixel_budget:  # a few patches per image and frame
        model_args += f",min_pixels={56 * 56},max_pixels={112 * 112}"
    if family.audio_in_video:
        model_args += ",use_audio_in_video=true"
    for modality, media in runs(family):
        out = tmp_path / modality
        argv = ["run", "--model", "hf", "--model-args", model_args, "--data-dir", str(mini_datasets),
                "--output-dir", str(out), "--tasks", ",".join(media), "--modality", modality, "--limit", str(LIMIT),
                "--num-samples", "0", "--num-frames", "4", "--gen-kwargs", "max_new_tokens=4"]
        if media is TEXT:  # one perturbed question, one sampled answer
            argv += ["--task-args", "k=1,num_samples=1"]
        assert main(argv) == 0, f"{family.name} on {modality}"

        results = json.loads((out / "results.json").read_text())
        assert sorted(results["tasks"]) == sorted(media)
        for task in results["tasks"].values():
            assert task["n_selected"] == LIMIT and task["n_errors"] == 0
            assert task["n_scored"] + task["n_unreadable"] == LIMIT
        records, torn = store.read_jsonl(out / "samples.jsonl")
        assert not torn and len(records) == LIMIT * len(media)
        for record in records:
            assert record["error"] is None
            assert set(record["media"] or ()) == media[record["task"]], f"{family.name}: {record['task']}"
            # one greedy answer; an untrained model may end it at once (the tiny VideoLLaMA3 does on MHaluBench)
            assert len(record["outputs"]) == 1 and isinstance(record["outputs"][0], str)
            if media is TEXT:  # each step of SAC3 ran on the model
                assert all(record["steps"][step]["outputs"] for step in ("perturb", "samples", "judge_self"))
    assert (True in interleaved) == family.audio_in_video  # the Omni thinkers got each video with its soundtrack
