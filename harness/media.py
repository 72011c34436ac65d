"""Turn one dataset row into the chat parts a model sees, honouring the run's modality and frame options.

Modalities: `audio-visual` (frames and audio), `visual-only` (no audio), `audio-only` (no frames or
image), `muted` (frames plus a silent track of the same length), `blank` (black frames or image plus
the audio). Besides the parts it returns what the sample saw (frame indices and timestamps, the audio
window) for the samples log.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from hallubench.benchmarks.task import MediaSpec, Row, Task
from hallubench.harness.options import RunOptions
from hallubench.harness.perturb import Perturbation, perturb
from hallubench.confined import Folder
from hallubench.errors import (ConfigError, MediaOutsideDatasetError, MediumRemovedError, MissingMediaError,
                               OutsideFolderError)
from hallubench.loaders import load_audio, load_image, load_video
from hallubench.models.protocol import AudioPart, ImagePart, Message, Part, TextPart, VideoPart

_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
# Videos are decoded beside the model and the processor calls (harness/prefetch.py), one core each. FFmpeg's own
# choice, a decoding thread per core, takes theirs: on 2 cores one thread made run() faster at both batch sizes on the
# harness benchmark, though a 720p clip alone decodes up to 1.7x slower on one (tests/perf/README.md).
DECODE_THREADS = max(1, _CORES - 2)


def media_file(task: Task, row: Row, column: str, dataset_dir: Path) -> Path | None:
    """The file `row[column]` names, symlinks followed, when it lies inside `dataset_dir` by the door's rule
    (hallubench/confined.py; a Hub dataset's snapshot files are links into its cache's blob store); None for no file.
    MediaOutsideDatasetError naming the task, row, column and path when it leads out of the folder: a dataset is
    data, and never makes a run read (and send) other files."""
    value = row[column]
    if value is None:
        return None
    where = f"task {task.name!r} row {row.get('id')!r} column {column!r}: media path {value!r}"
    fix = f"Paths in a dataset are relative to its folder {dataset_dir} and stay inside it; fix or rebuild the dataset."
    if not isinstance(value, str):
        raise MediaOutsideDatasetError(f"{where} is not a path string. {fix}")
    try:
        real = Folder(dataset_dir, hub_snapshot=True).path(value)
        os.stat(real)
    except OutsideFolderError:
        raise MediaOutsideDatasetError(f"{where} leads outside the dataset folder. {fix}") from None
    except FileNotFoundError:
        return Path(dataset_dir) / value  # nothing to read there; the loader says the file is missing
    except OSError as err:  # a symlink loop
        raise MediaOutsideDatasetError(f"{where} cannot be resolved ({err}). {fix}") from None
    return real


def media_columns(task: Task) -> list[str]:
    """The dataset columns naming the task's media files."""
    return list(dict.fromkeys(c for c in (task.media.video, task.media.audio, task.media.image) if c))


def sent_kinds(task: Task, modality: str) -> set[str]:
    """The media kinds ("video", "audio", "image") the task shows the model under `modality`."""
    media = task.media
    kinds = {"audio"} if media.audio else set()
    if modality != "audio-only":
        kinds |= {kind for kind in ("video", "image") if getattr(media, kind)}
    if modality == "visual-only":
        kinds.discard("audio")
    return kinds


def check_modality(task: Task, modality: str) -> None:
    """ConfigError when `modality` would leave the task with no media at all (a text-only task runs as it is)."""
    if modality == "audio-visual" and task.media == MediaSpec():
        return
    if modality == "audio-only" and task.media.audio is None:
        raise ConfigError(f"--modality audio-only: task {task.name!r} gives the model no audio")
    if not sent_kinds(task, modality):
        raise ConfigError(f"--modality {modality}: task {task.name!r} has no media left to show")


def check_model_accepts(task: Task, modality: str, model_name: str, accepts: frozenset[str]) -> None:
    """ConfigError, before any sample runs, when the task would send the model media it cannot take."""
    refused = sorted(sent_kinds(task, modality) - accepts)
    if refused:
        hint = ("--modality visual-only" if refused == ["audio"] else
                "--modality audio-only" if "audio" in accepts else "a model that takes " + " and ".join(refused))
        parts = f" ({task.media.parts_hint})" if task.media.parts_hint else ""
        raise ConfigError(f"task {task.name!r} sends {' and '.join(refused)} under --modality {modality}, which "
                          f"{model_name} takes no input of; use {hint}{parts}")


def row_kinds(task: Task, row: Row) -> set[str]:
    """The media kinds the row has a file for (a video's own track counts as its audio)."""
    media = task.media
    return {kind for kind in ("video", "audio", "image")
            if (column := getattr(media, kind)) is not None and row.get(column) is not None}


def check_row_media(task: Task, row: Row, modality: str) -> None:
    """MediumRemovedError when `modality` removes the medium the row is asked about: any of its media for a task
    that `needs_all` of them (CMM), else all of them (the row would be asked with no media at all)."""
    has = row_kinds(task, row)
    removed = has - sent_kinds(task, modality)
    if removed and (task.media.needs_all or removed == has):
        hint = f"; {task.media.parts_hint}" if task.media.parts_hint else ""
        raise MediumRemovedError(f"--modality {modality} removes the {' and '.join(sorted(removed))} that task "
                                 f"{task.name!r} asks this row about: left out of the scores and counted as without "
                                 f"media{hint}")


def _video(path: Path, options: RunOptions) -> tuple[VideoPart, dict[str, Any]]:
    clip = load_video(path, num_frames=options.num_frames or 8, fps=options.fps, max_frames=options.max_frames,
                      blank=options.modality == "blank", threads=DECODE_THREADS)
    span = clip.timestamps[-1] - clip.timestamps[0] if len(clip.timestamps) > 1 else 0.0
    # The rate the frames were actually taken at: with --fps capped by --max-frames it is lower than asked.
    rate = (len(clip.indices) - 1) / span if span > 0 else (options.fps or clip.native_fps)
    info = {"indices": list(clip.indices), "timestamps": [round(t, 6) for t in clip.timestamps],
            "native_fps": clip.native_fps, "duration": clip.duration}
    return VideoPart(frames=clip.frames, fps=float(rate)), info


def _audio(path: Path, options: RunOptions) -> tuple[AudioPart, dict[str, Any]]:
    clip = load_audio(path, muted=options.modality == "muted")
    info = {"start": 0.0, "end": clip.duration, "sr": clip.sr, "muted": options.modality == "muted"}
    return AudioPart(samples=clip.samples, sr=clip.sr), info


def _image(path: Path, blank: bool) -> tuple[ImagePart, dict[str, Any]]:
    image = load_image(path)
    if blank:
        image = Image.fromarray(np.zeros((image.height, image.width, 3), dtype=np.uint8))
    return ImagePart(image=image), {"size": [image.width, image.height], "blank": blank}


def media_parts(task: Task, row: Row, dataset_dir: Path, options: RunOptions,
                perturbation: Perturbation | None = None) -> tuple[list[Part], dict[str, Any]]:
    """The media parts the model sees for `row` (with the sample's `perturbation` applied) and a JSON-able record
    of them; MediumRemovedError when the run's modality removes what the row is asked about."""
    spec, modality = task.media, options.modality
    check_row_media(task, row, modality)
    parts: list[Part] = []
    seen: dict[str, Any] = {}

    def path_of(column: str) -> Path | None:
        return media_file(task, row, column, dataset_dir)

    if spec.video and modality != "audio-only" and (path := path_of(spec.video)) is not None:
        part, seen["video"] = _video(path, options)
        seen["video"]["path"] = row[spec.video]
        parts.append(part)
    if spec.audio and modality != "visual-only" and (path := path_of(spec.audio)) is not None:
        part, seen["audio"] = _audio(path, options)
        seen["audio"]["path"] = row[spec.audio]
        parts.append(part)
    if spec.image and modality != "audio-only" and ((path := path_of(spec.image)) is not None or not spec.optional):
        if path is None:
            raise MissingMediaError(f"row {row['id']!r} of {task.benchmark}/{task.config} has no {spec.image!r} file")
        part, seen["image"] = _image(path, blank=modality == "blank")
        seen["image"]["path"] = row[spec.image]
        parts.append(part)
    return perturb(parts, perturbation), seen


def prepare(task: Task, row: Row, dataset_dir: Path, options: RunOptions,
            perturbation: Perturbation | None = None) -> tuple[list[Message], dict[str, Any]]:
    """The conversation for `row` and a JSON-able record of the media it contains."""
    parts, seen = media_parts(task, row, dataset_dir, options, perturbation)
    return [Message(role="user", content=[*parts, TextPart(task.prompt(row))])], seen
