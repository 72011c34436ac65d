"""The user-facing error types, at the bottom of the package: any layer may raise them, and the CLI prints
their message (which names the file, row or flag and says what to do) instead of a traceback.

Every one is a `HallubenchError`; the ones about what the user asked for are `ConfigError`s (a ValueError,
so callers of the Python API can catch either)."""
from __future__ import annotations


class HallubenchError(Exception):
    """Base of the errors whose message is meant for the user."""


class ConfigError(HallubenchError, ValueError):
    """A problem with what the user asked for (flag, YAML key, task name, data folder)."""


class RunFolderNotFoundError(ConfigError):
    """A run folder (or the samples it should hold) is not there."""


class NotARankingFolderError(ConfigError):
    """A folder given as a ranking lacks what `hallubench rank` writes (crosscheck.json, sentences.jsonl) or holds a bad one."""


class CorruptRecordError(ConfigError):
    """A line of a run folder's samples*.jsonl cannot be read as a sample record."""


class DatasetRowError(ConfigError):
    """A row of a built dataset cannot run as its task needs (a column its prompt uses is missing, a label its metric
    cannot score); found before any model loads. The message names the folder, task, row id and column."""


class MediaOutsideDatasetError(DatasetRowError):
    """A row names a media file that is not inside its dataset folder (an absolute path, `..`, a link out of it)."""


class RegistryError(HallubenchError, ValueError):
    """A plug-in (task, builder, parser, model, judge, metric) registered under a name already taken."""


class PluginImportError(RegistryError):
    """A plug-in cannot be imported: an `--include` file, folder or module, a `hallubench.plugins` entry point, or
    the "module:object" a plug-in was registered under."""


class BuildError(HallubenchError, ValueError):
    """Bad input or output location of a dataset build. The message names the file (and row) and what to do."""


class NothingLeftToBuildError(BuildError):
    """Every row of a release config was left out (`--skip-missing` skipped them all): no dataset to write."""


class RowError(HallubenchError):
    """One row of a release cannot be converted; the builder names the file and row, and skips it or stops."""


class PublishError(HallubenchError):
    """Publishing cannot go on (no run, no token, a Hub error); the message says what to do."""


class FolderWriteError(ConfigError):
    """A file of a run or ranking folder cannot be written (full or read-only disk, no permission); what was on
    disk before stays, and rerunning the same command resumes."""


class UnfinishedRunError(ConfigError):
    """A run folder that is being written, or whose last run was interrupted or failed, cannot be read as a whole;
    the message names the command that finishes it."""


class MixedRunFolderError(ConfigError):
    """A run folder whose records (or results.json) come from more than one setting: model, limit, generation,
    media options or seed; the message names the two settings and what to do."""


class RunInterrupted(HallubenchError):
    """A run stopped by SIGINT (Ctrl-C) or SIGTERM; the message says what was kept and how to resume."""
