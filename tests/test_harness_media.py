"""What the model is shown: modality options, frame sampling options, and what the sample log records."""
import numpy as np
import pytest

from hallubench.benchmarks import get_task
from hallubench.harness.data import load_rows
from hallubench.harness.media import (MediumRemovedError, MissingMediaError, check_modality, check_row_media, prepare,
                                     sent_kinds)
from hallubench.harness.options import RunOptions
from hallubench.errors import ConfigError
from hallubench.models.protocol import AudioPart, ImagePart, TextPart, VideoPart


@pytest.fixture(scope="module")
def datasets_dir(mini_datasets):
    return mini_datasets


def _prepare(datasets_dir, task_name, **options):
    task = get_task(task_name)
    folder = datasets_dir / task.benchmark
    rows, _ = load_rows(folder, task, limit=1)
    messages, seen = prepare(task, rows[0], folder, RunOptions(**options))
    parts = messages[0].content
    assert isinstance(parts[-1], TextPart) and parts[-1].text == task.prompt(rows[0])
    return {type(part): part for part in parts}, seen


def test_audio_visual_clip_gives_frames_and_the_videos_own_audio(datasets_dir):
    parts, seen = _prepare(datasets_dir, "avhallubench_visual", num_frames=4)
    assert parts[VideoPart].frames.shape[0] == 4 and len(seen["video"]["indices"]) == 4
    assert seen["video"]["path"] == seen["audio"]["path"] and seen["video"]["path"].endswith(".mp4")
    assert np.abs(parts[AudioPart].samples).max() > 0 and seen["audio"]["end"] == pytest.approx(seen["video"]["duration"], abs=0.1)
    assert parts[VideoPart].fps > 0


@pytest.mark.parametrize("modality, kinds", [("visual-only", {VideoPart}), ("audio-only", {AudioPart}),
                                             ("muted", {VideoPart, AudioPart}), ("blank", {VideoPart, AudioPart})])
def test_modalities(datasets_dir, modality, kinds):
    parts, seen = _prepare(datasets_dir, "avhallubench_audio", modality=modality)
    assert set(parts) - {TextPart} == kinds
    if modality == "muted":
        assert not parts[AudioPart].samples.any() and seen["audio"]["muted"] and parts[VideoPart].frames.any()
    if modality == "blank":
        assert not parts[VideoPart].frames.any() and parts[AudioPart].samples.any()


def test_fps_sampling_is_capped_by_max_frames(datasets_dir):
    parts, seen = _prepare(datasets_dir, "avhallubench_visual", fps=4.0, max_frames=3)
    stamps = seen["video"]["timestamps"]
    assert len(seen["video"]["indices"]) == 3 and stamps == sorted(stamps)
    # the cap spreads 3 frames over the clip, so the model is told the rate they were really taken at
    assert parts[VideoPart].fps == pytest.approx(2 / (stamps[-1] - stamps[0])) and parts[VideoPart].fps < 4.0
    parts, seen = _prepare(datasets_dir, "avhallubench_visual", fps=2.0, max_frames=32)
    assert len(seen["video"]["indices"]) == pytest.approx(2.0 * seen["video"]["duration"], abs=1)
    assert parts[VideoPart].fps == pytest.approx(2.0, rel=0.1)


def test_images_and_their_blank_variant(datasets_dir):
    parts, seen = _prepare(datasets_dir, "cchall")
    assert np.asarray(parts[ImagePart].image).any() and seen["image"]["path"].startswith("images/")
    parts, seen = _prepare(datasets_dir, "cchall", modality="blank")
    assert not np.asarray(parts[ImagePart].image).any() and seen["image"]["blank"]


def test_impossible_modalities_and_missing_files_are_named(tmp_path):
    with pytest.raises(ConfigError, match="audio-only.*'cchall'"):
        check_modality(get_task("cchall"), "audio-only")
    row = {"id": "m1", "image": None}
    with pytest.raises(MissingMediaError, match="'m1'"):
        prepare(get_task("mhalubench"), row, tmp_path, RunOptions())


@pytest.mark.parametrize("modality, asked", [
    ("audio-visual", {"visual-language", "audio-language", "visual-audio-language", "overrely_visual_ignore_audio",
                      "overrely_audio_ignore_visual", "overrely_language_ignore_visual"}),
    ("visual-only", {"visual-language", "overrely_language_ignore_visual"}),  # the paper's Table 2b
    ("audio-only", {"audio-language"}),  # Table 2c
    ("muted", {"visual-language", "audio-language", "visual-audio-language", "overrely_visual_ignore_audio",
               "overrely_audio_ignore_visual", "overrely_language_ignore_visual"}),  # replaced, not removed
])
def test_a_cmm_probe_is_never_asked_without_a_medium_it_has(datasets_dir, modality, asked):
    task = get_task("cmm")
    rows, _ = load_rows(datasets_dir / "cmm", task)
    seen = set()
    for row in rows:
        try:
            check_row_media(task, row, modality)
        except MediumRemovedError as err:
            assert "cmm_visual" in str(err) and "cmm_audio" in str(err)  # names the tasks of the paper's parts
            continue
        seen.add(row["sub_category"])
    assert seen == asked


def test_part_tasks_hold_their_sub_categories_and_show_only_their_medium(datasets_dir):
    for name, sub_categories, kinds in [("cmm_visual", {"visual-language", "overrely_language_ignore_visual"}, {"video"}),
                                        ("cmm_audio", {"audio-language"}, {"audio"}),
                                        ("cmm_audio_visual", {"visual-audio-language", "overrely_visual_ignore_audio",
                                                              "overrely_audio_ignore_visual"}, {"video", "audio"})]:
        task = get_task(name)
        rows = [row for row in load_rows(datasets_dir / "cmm", task)[0] if not task.exclude(row)]
        assert {row["sub_category"] for row in rows} == sub_categories
        assert sent_kinds(task, "audio-visual") == kinds


def test_a_row_left_with_no_media_is_not_asked_even_where_one_medium_is_enough(tmp_path):
    task = get_task("sac3_cmm")  # not needs_all: a probe keeps being asked with the medium it still has
    check_row_media(task, {"id": "v", "video_path": "v.mp4", "audio_path": "v.wav"}, "visual-only")
    with pytest.raises(MediumRemovedError, match="audio"):
        check_row_media(task, {"id": "a", "video_path": None, "audio_path": "a.wav"}, "visual-only")
    with pytest.raises(MediumRemovedError):
        prepare(task, {"id": "a", "video_path": None, "audio_path": "a.wav", "question": "Q?"}, tmp_path,
                RunOptions(modality="visual-only"))
