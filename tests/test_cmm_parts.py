"""CMM by part, as the paper's Table 2 reports models: a `--modality` that removes a medium never has a probe about
it asked without it (the probe is left out of the headline and counted), and the part tasks hold the probes a
one-medium model is evaluated on."""
import json
import os

import pytest

from hallubench import models
from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.models.protocol import AudioPart, TextPart, VideoPart

os.environ["HF_HUB_OFFLINE"] = "1"
ASKED: list[set[type]] = []  # per conversation the stand-in was asked: the kinds of its media parts


class MediaYes:
    """Takes every medium and answers "Yes.", noting which media each conversation held."""

    name, fingerprint, accepts = "media-yes", "media-yes-v1", frozenset({"video", "audio", "image"})

    def __init__(self, **model_args):
        pass

    def generate(self, conversations, settings, seeds=None):
        ASKED.extend({type(p) for m in c for p in m.content} - {TextPart} for c in conversations)
        return [["Yes."] * settings.n for _ in conversations]


@pytest.fixture(scope="module", autouse=True)
def media_yes_registered():
    """`--model media_yes` for this module only: other tests list the registry's adapters."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(models.MODELS, "media_yes", MediaYes)
        yield


@pytest.fixture(scope="module")
def visual_only(mini_datasets, tmp_path_factory):
    out = tmp_path_factory.mktemp("cmm") / "run"
    ASKED.clear()
    assert main(["run", "--model", "media_yes", "--model-args", "pretrained=x", "--tasks", "cmm,cmm_visual",
                 "--modality", "visual-only", "--data-dir", str(mini_datasets), "--output-dir", str(out),
                 "--num-frames", "2"]) == 0
    return out, list(ASKED)


def test_visual_only_cmm_never_asks_or_scores_a_probe_without_its_audio(visual_only, capsys):
    out, asked = visual_only
    records, _ = store.read_jsonl(out / "samples.jsonl")
    cmm = [r for r in records if r["task"] == "cmm"]
    left_out = [r for r in cmm if r["error"]]
    assert all(r["error"]["class"] == "MediumRemovedError" and not r["outputs"] for r in left_out)
    assert {r["group"][0] for r in left_out} == {"audio-language", "visual-audio-language",
                                                  "overrely_visual_ignore_audio", "overrely_audio_ignore_visual"}
    assert len(asked) == 2 * (len(cmm) - len(left_out)) and all(kinds == {VideoPart} for kinds in asked)
    assert AudioPart not in set().union(*asked)

    tasks = json.loads((out / "results.json").read_text())["tasks"]
    result = tasks["cmm"]
    assert (result["n_without_media"], result["n_errors"], result["n_scored"]) == (len(left_out), 0, 16)
    audio = result["groups"]["audio-language"]
    assert (audio["n_without_media"], audio["n_scored"], audio["metrics"]) == (8, 0, {})
    # the headline is over the visual probes alone: the paper's Table 2b part, as cmm_visual reports it
    assert (result["metrics"]["pa"], result["metrics"]["hr"]) == (1.0, 0.0)
    assert {k: v for k, v in result["metrics"].items() if not k.endswith("_stderr")} == \
        {k: v for k, v in tasks["cmm_visual"]["metrics"].items() if not k.endswith("_stderr")}
    assert tasks["cmm_visual"]["n_without_media"] == 0 and tasks["cmm_visual"]["n_selected"] == 16


def test_a_part_task_whose_medium_the_modality_removes_is_refused(mini_datasets, tmp_path, capsys):
    assert main(["run", "--model", "media_yes", "--model-args", "pretrained=x", "--tasks", "cmm_audio",
                 "--modality", "visual-only", "--data-dir", str(mini_datasets), "--output-dir", str(tmp_path)]) != 0
    assert "'cmm_audio' has no media left" in capsys.readouterr().err
