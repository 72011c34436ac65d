"""The user-facing error types, at the bottom of the package: any layer may raise them, and the CLI prints
their message (which names the file, row or flag and says what to do) instead of a traceback.

Every one is a `HallubenchError`, the one root that `hallubench`'s main catches (cli/main.py), printing the message
and exiting with the error's `exit_code`: 2 for what the user asked for (`ConfigError`s, like argparse's usage
errors; a ValueError, so callers of the Python API can catch either), 1 for what failed while doing it, 130 for an
interrupted run (128 + SIGINT, as shells report it).
"""
from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """" (did you mean 'x'?)" naming the closest of `choices` to a mistyped `word` (difflib, as Python 3.14's
    argparse `suggest_on_error`; for a short word, whose every typo is far in difflib's ratio, a choice one edit
    away: "hg" -> "hf"), or "" when none is close: the one spelling-suggestion rule of every name error."""
    by_folded = {str(choice).lower(): str(choice) for choice in choices}  # CCHALL finds cchall
    folded = word.lower()
    close = difflib.get_close_matches(folded, list(by_folded), n=3, cutoff=0.6) or \
        [choice for choice in by_folded if _one_edit(folded, choice)][:3]
    return f" (did you mean {' or '.join(repr(by_folded[c]) for c in close)}?)" if close else ""


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` becomes `b` by one substitution, insertion, deletion or swap of neighbours (len >= 2 each)."""
    if min(len(a), len(b)) < 2 or a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


class HallubenchError(Exception):
    """Base of the errors whose message is meant for the user."""

    exit_code = 1


class ConfigError(HallubenchError, ValueError):
    """A problem with what the user asked for (flag, YAML key, task name, data folder)."""

    exit_code = 2


class RunFolderNotFoundError(ConfigError):
    """A run folder (or the samples it should hold) is not there."""


class NotARankingFolderError(ConfigError):
    """A folder given as a ranking lacks what `hallubench rank` writes (crosscheck.json, sentences.jsonl) or holds a bad one."""


class UntrustedRecordError(ConfigError):
    """A config read back from a file we did not write (a run folder's results.json) names a server, a credential, a
    path outside its folder or code to run, and the user gave no consent: refused before anything loads or connects."""


class CorruptRecordError(ConfigError):
    """A line of a run folder's samples*.jsonl cannot be read as a sample record."""


class DatasetRowError(ConfigError):
    """A row of a built dataset cannot run as its task needs (a column its prompt uses is missing, a label its metric
    cannot score); found before any model loads. The message names the folder, task, row id and column."""


class OutsideFolderError(ConfigError):
    """A file of a folder hallubench did not write (a run folder, ranking, dataset, site, cache) leads outside it (a
    link out, `..`, an absolute path) or is no regular file (a FIFO, a device): hallubench/confined.py, the one door
    those folders are read through, refuses it."""


class FileTooLargeError(ConfigError):
    """A file of a folder hallubench did not write is larger than such a file may be (hallubench/confined.py)."""


class UnnamedFolderError(ConfigError):
    """A record (a ranking's `runs`) names a folder the user did not give; the message says which argument names it."""


class NotWholeError(ConfigError):
    """A run or ranking folder lacks the manifest (`.hallubench-files.json`) its writer puts there last, so nothing
    says its files belong together; the message gives the one command that makes it whole."""


class OutsideDatasetError(OutsideFolderError):
    """Something a dataset folder names leads outside it (an absolute path, `..`, a URL, a link out of it): a dataset
    is data, and never makes a run read (and send) other files. builders/dataset_reader.py and the door
    (hallubench/confined.py, with its `hub_snapshot` policy) are the one rule every path a dataset names goes through."""


class DataFilesOutsideDatasetError(OutsideDatasetError):
    """A `data_files` pattern of the dataset card's `configs:` (or the card itself) leads outside the dataset folder,
    or names a URL; the message names the folder, the config and the pattern."""


class MediaOutsideDatasetError(DatasetRowError, OutsideDatasetError):
    """A row names a media file that is not inside its dataset folder (an absolute path, `..`, a link out of it)."""


class RegistryError(HallubenchError, ValueError):
    """A plug-in (task, builder, parser, model, judge, metric) registered under a name already taken."""


class PluginImportError(RegistryError):
    """A plug-in cannot be imported: an `--include` file, folder or module, a `hallubench.plugins` entry point, or
    the "module:object" a plug-in was registered under. The user's to fix (a flag, a file, an installed package)."""

    exit_code = 2


class BuildError(HallubenchError, ValueError):
    """Bad input or output location of a dataset build. The message names the file (and row) and what to do."""


class NothingLeftToBuildError(BuildError):
    """Every row of a release config was left out (`--skip-missing` skipped them all): no dataset to write."""


class RowError(HallubenchError):
    """One row of a release cannot be converted; the builder names the file and row, and skips it or stops."""


class PublishError(HallubenchError):
    """Publishing cannot go on (no run, no token, a Hub error); the message says what to do."""

    exit_code = 2


class RepoIdError(PublishError):
    """A repo id given to publish (--repo, --model-id, --benchmark-ids) is no Hub repo id."""


class BenchmarkRepoError(PublishError):
    """A --benchmark-ids repo is missing, not a hallubench benchmark dataset, or lacks the task ids used."""


class PartialRunError(PublishError):
    """The run scored a subset (--limit) or lacks samples; published only with --allow-partial."""


class ResultsFolderTakenError(PublishError):
    """The model's folder in the results repo already holds another model's results."""


class FolderWriteError(ConfigError):
    """A file of a run or ranking folder cannot be written (full or read-only disk, no permission); the message says
    what is on disk now, and rerunning the same command resumes. `folder_changed`: whether the folder was left
    half-replaced (its readers then refuse it until the command is run again)."""

    folder_changed = False


class UnreadableResultsError(ConfigError):
    """A results.json this hallubench cannot read as its schema (another version, an unknown or missing key, not JSON
    or not UTF-8); the message names the file and the key."""


class LinkedPathError(FolderWriteError):
    """A file hallubench would write (or append to, or replace) is a symbolic link: writing through it would change a
    file elsewhere, so nothing is written; the message names the link and where it points."""


class UnmarkedFolderError(ConfigError):
    """`--overwrite` (or `view --output-dir`) names a folder that hallubench did not make: it is never deleted."""


class JudgmentCacheError(ConfigError):
    """The judgment cache (`--cache`, judges/judgment_cache.py) is no SQLite cache hallubench can use: a folder, a
    damaged file, locked past the busy timeout. A full or read-only disk there is a FolderWriteError."""


class MixedOutputError(ConfigError):
    """A folder's files that are written together (a ranking, a run's results and charts) do not match the manifest
    of their last whole write: a writer was cut off while replacing them, or a file was replaced by hand."""


class UnfinishedRunError(ConfigError):
    """A run folder that is being written, or whose last run was interrupted or failed, cannot be read as a whole;
    the message names the command that finishes it."""


class MixedRunFolderError(ConfigError):
    """A run folder whose records (or results.json) come from more than one setting: model, limit, generation,
    media options or seed; the message names the two settings and what to do."""


class VerdictMismatchError(HallubenchError):
    """A run folder's results.json differs from what its per-answer verdicts re-aggregate to (`hallubench verify`);
    the message names each task and metric that differ."""


class RunInterrupted(HallubenchError):
    """A run stopped by SIGINT (Ctrl-C) or SIGTERM; the message says what was kept and how to resume."""

    exit_code = 130


class StaleRowsError(ConfigError):
    """`load_dataset` gave other rows than the folder's data files hold (stale cache, file edited after build)."""


class FolderBusy(ConfigError):
    """Another live process writes to this folder."""


class UnsafeCheckpointError(ConfigError):
    """A checkpoint whose pickled weights hold objects other than tensors (code that loading would run): refused
    unread, as torch's weights_only loading refuses it; the message names the checkpoint and its pickled files."""


class ModelUnusable(HallubenchError, RuntimeError):
    """No request can succeed (e.g. the server refuses the credentials): the run stops, it records nothing."""


class RetryBudgetSpent(ModelUnusable):
    """Requests of a model served over HTTP failed for its `retry_budget` seconds in all: the server looks down, the
    run stops."""


class GenerationError(HallubenchError, RuntimeError):
    """A conversation could not be answered (after any retries).

    `index` is its position in the `generate` call; `partial`, when an adapter sets it, holds the outputs
    of that call per conversation (None where it failed) so callers can keep the ones that succeeded.
    `outcomes`, set by `collect` when every conversation was tried on its own (with its own retries), holds each
    one's outputs or final GenerationError: callers must not try the failed ones again.
    """

    def __init__(self, message: str, index: int | None = None, partial: list[list[str] | None] | None = None):
        super().__init__(message)
        self.index = index
        self.partial = partial
        self.outcomes: list[list[str] | GenerationError] | None = None


class JudgeError(HallubenchError, RuntimeError):
    """A pair failed even when judged alone (raised only with strict=True)."""


class MediaError(HallubenchError):
    """Something is wrong with a media file; `path` is the file (or "<bytes>"). Each names the file it is about.

    Raised as `MediaError(path, message)`; `MediaError(message)` alone (path None) serves callers
    that report a problem with no single file, e.g. a dataset row that lacks one.
    """

    def __init__(self, path: str | Path, message: str | None = None):
        self.path = None if message is None else str(path)
        self.message = str(path) if message is None else message
        super().__init__(self.message if self.path is None else f"{self.path}: {self.message}")

    def __reduce__(self):  # picklable across processes (DataLoader workers) despite the custom init
        return type(self), (self.message,) if self.path is None else (self.path, self.message)


class MediaNotFoundError(MediaError, FileNotFoundError):
    """The file does not exist."""


class CorruptMediaError(MediaError):
    """The file exists but cannot be parsed or decoded (truncated, garbage, decoder crashed)."""


class ShortMediaError(CorruptMediaError):
    """The file decodes to clearly less than its header declares (a truncated download or copy): fewer frames, or
    fewer seconds. The sample is a media error, counted, never scored on what is left."""


class NoAudioTrackError(MediaError):
    """Audio was requested from a container that has no audio stream."""


class EmptyMediaError(MediaError):
    """The file is 0 bytes, or holds no frames / no samples (or no stream of the requested kind)."""


class MediaTimeoutError(MediaError, TimeoutError):
    """Decoding made no progress for `timeout` seconds (or ran past its total bound), or probing
    did not finish in time; the decoder process was killed."""


class MissingMediaError(MediaError):
    """The row has no file for media the task cannot do without."""


class MediumRemovedError(MediaError):
    """`--modality` removes a medium the row is asked about: the row is left out of the scores and counted
    (`n_without_media`), never asked without it."""


class ReferenceFilesError(HallubenchError):
    """The authors' released files that a reproduction reads are missing, or differ from their pinned sha256."""


class StaleResultsError(MixedRunFolderError):
    """A results.json that was not computed from the records beside it (edited or rewritten since it was scored);
    the message names both files and the command that scores the records again."""
