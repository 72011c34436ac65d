"""The one reader of a built dataset folder (a local folder, or a Hub dataset's snapshot): its card, its configs' data
files and their rows. Every other module reads a dataset folder through this one (tests/reliability/
test_untrusted_datasets.py walks the package to keep it so).

A dataset folder is data we did not write. Every path it names stays inside it, by the door's rule
(hallubench/confined.py, `Folder(folder, hub_snapshot=True)`, which row media keep too): the card file itself, and
every `data_files` pattern of every config of the card's `configs:`, checked as written (no URL, no absolute path, no
`..`) and again for every file it matches once links are followed (a Hub snapshot's links into its own blob store
are inside). `datasets` is then handed the checked files explicitly, never the folder, whose card it would follow on
its own.
"""
from __future__ import annotations

import glob
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

from hallubench.config import parse_yaml, read_text
from hallubench.confined import Folder
from hallubench.errors import ConfigError, DataFilesOutsideDatasetError, OutsideFolderError, StaleRowsError

CARD = "README.md"
DEFAULT_SPLIT = "train"  # the split `datasets` gives data_files written without one
# A scheme (hf://, https:, file:, s3://) or fsspec's chaining (zip://x::y): never a path in the folder.
URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:|::")
MAX_CARD_BYTES = 64 << 20  # a card is prose and a header; the largest real ones are a few MB
BUILDERS = {".parquet": "parquet", ".json": "json", ".jsonl": "json", ".csv": "csv", ".arrow": "arrow"}


def dataset_file(folder: str | Path, name: str) -> Path | None:
    """The file `name` of the dataset folder (its card, eval.yaml), links followed; None when there is none.
    DataFilesOutsideDatasetError when it leads outside the folder."""
    try:
        real = Folder(folder, hub_snapshot=True).path(name)
        os.stat(real)
    except OutsideFolderError:
        raise DataFilesOutsideDatasetError(f"{folder}: its {name} is a link to a file outside the dataset folder; a "
                                           "dataset's files stay inside it. Copy the real file into the folder.") from None
    except FileNotFoundError:
        return None
    except OSError as err:  # a link loop
        raise DataFilesOutsideDatasetError(f"{folder}: its {name} cannot be resolved ({err})") from None
    return real if real.is_file() else None


def parse_card(path: str | Path, where: str) -> dict[str, Any]:
    """The YAML header of the card file at `path` (empty when it has none), read as a `--config` is (bounded, no
    aliases: hallubench/config.parse_yaml); ConfigError naming `where` when it is not YAML."""
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    text = read_text(path, f"{where}: its {CARD}", MAX_CARD_BYTES)
    header = REGEX_YAML_BLOCK.search(text)
    try:
        meta = parse_yaml(header.group(2), f"{where}: its {CARD} header") if header else {}
    except ConfigError as err:
        raise ConfigError(f"{err}; rebuild it with `hallubench build`") from None
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise ConfigError(f"{where}: its {CARD} header is not a YAML mapping; rebuild it with `hallubench build`")
    return meta


def read_card(folder: str | Path) -> dict[str, Any]:
    """The YAML header of the folder's README.md (empty when there is none)."""
    card = dataset_file(folder, CARD)
    return parse_card(card, str(folder)) if card is not None else {}


def check_pattern(pattern: Any, where: str) -> str:
    """`pattern` when it is a path pattern relative to the dataset folder that cannot climb out of it as written:
    DataFilesOutsideDatasetError for a URL, an absolute path or a `..` part (`where` names folder and config)."""
    if not isinstance(pattern, str) or not pattern.strip():
        raise DataFilesOutsideDatasetError(f"{where}: data_files pattern {pattern!r} is not a path")
    parts = re.split(r"[\\/]", pattern)
    if URL.search(pattern) or pattern.startswith(("/", "\\", "~")) or ".." in parts:
        raise DataFilesOutsideDatasetError(
            f"{where}: data_files pattern {pattern!r} leads outside the dataset folder (a URL, an absolute path or "
            "`..`); a dataset's data files are paths relative to its folder and stay inside it. Fix the card's "
            "`configs:` or rebuild the dataset with `hallubench build`.")
    return pattern


def split_patterns(entries: Any, where: str) -> dict[str, list[str]]:
    """split -> its checked patterns, from a config's `data_files` in any form `datasets` reads in a card: a path, a
    list of paths (split "train"), or a list of `{split, path}` with `path` one pattern or a list of them."""
    if isinstance(entries, (str, dict)):
        entries = [entries]
    if not isinstance(entries, list):
        raise ConfigError(f"{where}: data_files is neither a path nor a list; rebuild it with `hallubench build`")
    out: dict[str, list[str]] = {}
    for entry in entries:
        split, paths = (DEFAULT_SPLIT, entry) if not isinstance(entry, dict) else (entry.get("split"), entry.get("path"))
        out.setdefault(str(split), []).extend(check_pattern(p, where) for p in (paths if isinstance(paths, list)
                                                                               else [paths]))
    return out


def card_configs(meta: dict[str, Any], where: str) -> dict[str, dict[str, list[str]]]:
    """config name -> split -> patterns, for every config of the card's `configs:`, every pattern checked."""
    configs = meta.get("configs") or []
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        raise ConfigError(f"{where}: its card's `configs:` is not a list of configs; rebuild it with `hallubench build`")
    return {str(c.get("config_name", "default")): split_patterns(c.get("data_files") or [],
                                                                 f"{where} config {c.get('config_name', 'default')!r}")
            for c in configs}


def hidden(path: str) -> bool:
    """Whether a part of `path` is hidden (`.name`) or special (`__name`), which a pattern matches only by naming."""
    return any(part.startswith((".", "__")) and part not in (".", "..") for part in path.split("/"))


def matched_files(folder: Path, pattern: str, where: str) -> list[Path]:
    """The files `pattern` matches in `folder` (hidden ones only when it names them, as in `datasets`), each once
    links are followed inside it; DataFilesOutsideDatasetError naming the pattern and the file otherwise."""
    files, door = [], Folder(folder, hub_snapshot=True)
    for path in sorted(folder.glob(pattern)):
        relative = path.relative_to(folder).as_posix()
        if hidden(relative) and not hidden(pattern):  # as `datasets` resolves a pattern
            continue
        try:
            real = door.path(relative)
            os.stat(real)
        except OutsideFolderError:
            raise DataFilesOutsideDatasetError(
                f"{where}: data_files pattern {pattern!r} matches {relative}, a link to a file outside the dataset "
                "folder; a dataset's data files stay inside it. Copy the real files into the folder or rebuild it.") from None
        except OSError as err:  # a link loop; a link to nothing
            raise DataFilesOutsideDatasetError(f"{where}: data_files pattern {pattern!r} matches {relative}, which "
                                               f"cannot be resolved ({err})") from None
        if real.is_file():
            files.append(path)
    return files


class DatasetFolder:
    """A dataset folder's card, read and checked once: every config's data files lie inside the folder."""

    def __init__(self, folder: str | Path):
        self.path = Path(folder)
        self.meta = read_card(self.path)
        if not self.meta:
            raise ConfigError(f"{self.path} has no dataset card ({CARD}); build it with `hallubench build`")
        self.configs = card_configs(self.meta, str(self.path))
        self.files = {(name, split): sorted({f for p in patterns
                                             for f in matched_files(self.path, p, f"{self.path} config {name!r}")})
                      for name, splits in self.configs.items() for split, patterns in splits.items()}

    def data_files(self, config: str, split: str, task: str | None = None) -> list[Path]:
        """The data files of `config`'s `split`; ConfigError naming the folder when there are none."""
        of = f" (task {task!r})" if task else ""
        if config not in self.configs:
            raise ConfigError(f"{self.path}: its card has no config {config!r}{of}; it has "
                              f"{', '.join(self.configs) or 'none'}. Rebuild it with `hallubench build`.")
        files = self.files.get((config, split)) or []
        if not files:
            raise ConfigError(f"{self.path}: no data file for config {config!r} split {split!r} (card patterns "
                              f"{self.configs[config].get(split, [])}); rebuild it with `hallubench build`")
        return files

    def info(self, config: str):
        """The `datasets.DatasetInfo` (features, split sizes) the card's `dataset_info` gives `config`, or None."""
        from datasets.info import DatasetInfosDict
        from huggingface_hub import DatasetCardData

        if not self.meta.get("dataset_info"):
            return None
        try:
            infos = DatasetInfosDict.from_dataset_card_data(DatasetCardData(dataset_info=self.meta["dataset_info"]))
        except (TypeError, ValueError, KeyError, AttributeError) as err:
            raise ConfigError(f"{self.path}: its card's dataset_info cannot be read ({err}); rebuild it with "
                              "`hallubench build`") from None
        return infos.get(config)

    def load(self, config: str, split: str):
        """The split as a `datasets.Dataset`, read from the checked data files given explicitly; StaleRowsError
        when the card's `dataset_info` declares another row count than the files hold."""
        import datasets
        import pyarrow.parquet as pq
        from datasets.exceptions import DatasetsError

        files = self.data_files(config, split)
        kinds = {BUILDERS.get(PurePosixPath(f.name).suffix.lower()) for f in files}
        if None in kinds or len(kinds) != 1:
            raise ConfigError(f"{self.path} config {config!r}: its data files ({', '.join(f.name for f in files)}) "
                              f"are not all of one format `datasets` reads ({', '.join(sorted(BUILDERS))}); rebuild it "
                              "with `hallubench build`")
        kind = kinds.pop()
        info = self.info(config)
        declared = info.splits[split].num_examples if info and info.splits and split in info.splits else None
        if kind == "parquet" and declared is not None and \
                declared != sum(pq.read_metadata(f).num_rows for f in files):
            raise StaleRowsError(
                f"{self.path} config {config!r}: its card ({CARD}, dataset_info) does not describe its data files "
                f"({', '.join(f.name for f in files)}): one was edited or replaced after `hallubench build` wrote the "
                f"card ({declared} rows declared). Rebuild the folder: `hallubench build ... --output-dir {self.path} "
                "--overwrite`.")
        # `datasets` pings a server with a download count for a packaged builder (parquet, json) on every load, even of
        # local files; a folder on disk is read without contacting anything.
        datasets.config.HF_UPDATE_DOWNLOAD_COUNTS = False
        try:
            # Escaped: `datasets` reads every data file as a glob pattern, and a folder may be named `run[1]`.
            return datasets.load_dataset(kind, data_files={split: [glob.escape(str(f.absolute())) for f in files]},
                                         split=split, features=info and info.features)
        except (DatasetsError, ValueError, TypeError) as err:
            raise ConfigError(f"{self.path} config {config!r}: datasets cannot load it ({type(err).__name__}: "
                              f"{err}); rebuild it with `hallubench build`") from None
