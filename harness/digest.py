"""What a results.json was computed from, as digests its readers check (harness/run_state.py `read_run_folder`).

`run.records_digest` in results.json holds, per task, `{"samples": D, "steps": D}`: D is `sha256:<hex>` over the
sample records the task's scores were computed from (each record's canonical JSON: sorted keys, no spaces, without
the fields scoring writes, records.SCORED_FIELDS, so that it protects what generation wrote; `hallubench verify`
checks those against the metric) and
over the `steps.jsonl` records those samples' steps name (multi-step tasks; absent otherwise). The per-record
hashes are sorted before they are hashed together, so the digest does not depend on line order or on which rank
file a record was in, and changes with any byte of any record's content.
"""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from typing import Any, Iterable, Mapping

from hallubench.harness.records import SCORED_FIELDS

PREFIX = "sha256:"
SAMPLES, STEPS = "samples", "steps"


def canonical(record: Mapping[str, Any]) -> bytes:
    generated = {name: value for name, value in record.items() if name not in SCORED_FIELDS}
    return json.dumps(generated, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def records_digest(records: Iterable[Mapping[str, Any]]) -> str:
    """`sha256:<hex>` of a set of records: independent of their order, not of their content."""
    hashes = sorted(hashlib.sha256(canonical(record)).hexdigest() for record in records)
    return PREFIX + hashlib.sha256("\n".join(hashes).encode()).hexdigest()


def step_keys(record: Mapping[str, Any]) -> list[str]:
    """The keys of the steps.jsonl records a multi-step sample was made from."""
    return [str(step.get("key")) for step in (record.get("steps") or {}).values() if isinstance(step, Mapping)]


def scored_digests(records: Iterable[Mapping[str, Any]],
                   steps: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """Task -> {"samples": digest of its records, "steps": digest of the steps records they name (if any)}.

    `steps` is the folder's steps records by key; a named key it lacks counts as an empty record, so a journal
    that lost a step no longer matches."""
    by_task: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        by_task[str(record["task"])].append(record)
    digests: dict[str, dict[str, str]] = {}
    for task, held in sorted(by_task.items()):
        digests[task] = {SAMPLES: records_digest(held)}
        named = [key for record in held for key in step_keys(record)]
        if named:
            digests[task][STEPS] = records_digest(steps.get(key, {"missing": key}) for key in named)
    return digests
