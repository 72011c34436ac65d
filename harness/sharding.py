"""Which process handles which sample, and the seed each sample generates with.

Both depend only on stable ids, never on process rank or order, so a run gives the same per-sample
outputs with any number of processes.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Sequence, TypeVar

T = TypeVar("T")


def stable_hash(*parts: Any) -> str:
    """Hex sha256 of the JSON encoding of `parts` (sorted keys): the same on every machine and run."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def sample_seed(run_seed: int, task: str, sample_id: str) -> int:
    """The generation seed of one sample: a 31-bit integer from the run seed, task name and sample id."""
    return int(stable_hash(run_seed, task, sample_id)[:8], 16) & 0x7FFFFFFF


def shard(items: Sequence[T], rank: int, world_size: int) -> list[T]:
    """Round-robin share of `items` (already in a stable order) for process `rank` of `world_size`."""
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is outside 0..{world_size - 1}")
    return list(items[rank::world_size])
