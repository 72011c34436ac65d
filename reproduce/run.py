"""`reproduce(...)`: the named reproductions (all by default) computed from checked reference files, with a
progress bar; the CLI's `hallubench reproduce` calls it."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hallubench.errors import ConfigError
from hallubench.registry import REPRODUCTIONS
from hallubench.reproduce.references import pins, references


def selected(names: Sequence[str] | None) -> list[str]:
    """`names` checked against the registry (all of them, in registry order, when none is given)."""
    for name in names or ():
        if name not in REPRODUCTIONS:
            raise ConfigError(REPRODUCTIONS.unknown(name))
    return list(names or REPRODUCTIONS)


def fetch(names: Sequence[str] | None = None, references_dir: Path | str | None = None,
          everything: bool = False, progress: bool = True) -> Any:
    """The reference folder with every file the named reproductions read (every pinned file with `everything`)
    present and checked, fetched into the cache where missing."""
    from tqdm.auto import tqdm

    refs = references(references_dir)
    files = list(pins()) if everything else list(dict.fromkeys(
        local for name in selected(names) for local in REPRODUCTIONS[name].files))
    with tqdm(total=len(files), desc="reference files", unit="file", disable=not progress) as bar:
        refs.ensure(files, progress=lambda name: bar.update())
    return refs


def reproduce(names: Sequence[str] | None = None, references_dir: Path | str | None = None,
              progress: bool = True) -> list[dict[str, Any]]:
    """Each named reproduction's cells computed (published, ours, verdict), in registry order."""
    from tqdm.auto import tqdm

    chosen = selected(names)
    refs = fetch(chosen, references_dir, progress=progress)
    return [REPRODUCTIONS[name].run(refs)
            for name in tqdm(chosen, desc="reproductions", unit="table", disable=not progress)]
