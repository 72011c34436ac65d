"""A run folder resumed over a dataset rebuilt since: its stored answers are scored with the rows read now.

A sample's key covers what the model was shown and how (prompt, settings, media options, seed), not what scoring
reads from the row (its reference, groups and metric inputs), nor which media files the row names. A rebuild that
corrects labels keeps every key, so a resumed run would find every sample finished and score the old labels under
the new dataset revision. Here each finished record is compared with the row it was made from:

- the scoring fields differ, the media are the same: the model's stored answer is still its answer to this input,
  so the record takes the current row's scoring fields and is scored with them (nothing is generated again);
- a medium the record saw is another file now: the stored answer is to another input, so the record is dropped
  and the sample is generated again.

Either way results.json then describes the dataset revision it records, and no folder holds two labelings.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from hallubench.harness.generate import base_record
from hallubench.harness.plan import WorkItem

SCORING_FIELDS = ("reference", "group", "metric_inputs")


@dataclass
class Reconciled:
    """The stored records a rebuilt dataset changes: `rescored` by key (with the current scoring fields) and the
    keys of those to generate again (`regenerate`: their media changed)."""

    rescored: dict[str, dict[str, Any]] = field(default_factory=dict)
    regenerate: list[str] = field(default_factory=list)

    def replacements(self) -> dict[str, dict[str, Any] | None]:
        """What store.merge puts in place of the stored records (None: dropped)."""
        return {**self.rescored, **dict.fromkeys(self.regenerate)}

    def summary(self, run_dir: Any) -> str | None:
        if not self.rescored and not self.regenerate:
            return None
        parts = []
        if self.rescored:
            ids = sorted(str(record["id"]) for record in self.rescored.values())
            parts.append(f"{len(ids)} stored answers are scored with the current references ({_few(ids)})")
        if self.regenerate:
            parts.append(f"{len(self.regenerate)} whose media changed are generated again")
        return (f"{run_dir} was scored on rows that the dataset no longer holds as they were (rebuilt since): "
                + "; ".join(parts))


def _few(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def _media_files(record: Mapping[str, Any]) -> dict[str, Any]:
    return {kind: seen.get("path") for kind, seen in (record.get("media") or {}).items() if isinstance(seen, Mapping)}


def _media_changed(item: WorkItem, stored: Mapping[str, Any]) -> bool:
    """Whether a medium the stored record saw is named differently by the row now."""
    spec = item.task.media
    columns = {"video": spec.video, "audio": spec.audio, "image": spec.image} if spec else {}
    return any(columns.get(kind) and item.row.get(columns[kind]) != path
               for kind, path in _media_files(stored).items())


def reconcile(items: list[WorkItem], stored: Mapping[str, Mapping[str, Any]], finished: set[str]) -> Reconciled:
    """How the finished stored records of `items` differ from the rows the items were planned from."""
    out = Reconciled()
    for item in items:
        if item.key not in finished:
            continue
        record = stored[item.key]
        if _media_changed(item, record):
            out.regenerate.append(item.key)
            continue
        current = base_record(item, None)
        fresh = json.loads(json.dumps({name: current[name] for name in SCORING_FIELDS}))  # as a JSON line reads back
        if any(record.get(name) != fresh[name] for name in SCORING_FIELDS):
            out.rescored[item.key] = {**record, **fresh}
    return out
