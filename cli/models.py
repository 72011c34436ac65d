"""`hallubench models`: the model families the hf adapter knows (models/families.py) and the `--model-args`
each adapter takes (its typed config), as a table or `--json`."""
from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

AUTO = "auto mapping"  # the family names no class: the first of families.AUTO_CLASSES whose mapping has it


def _families(resolve: bool) -> list[dict[str, Any]]:
    from hallubench.models.families import auto_class_for_type, families

    rows = []
    for family in families():
        loads_with = family.auto_class or (auto_class_for_type(family.model_types[0]) if resolve else None)
        rows.append({"name": family.name, "model_types": list(family.model_types),
                     "modalities": list(family.modalities) or ["text"], "auto_class": loads_with,
                     "video_as": ("frames" if family.video == "video" else "images") if "video" in family.modalities
                     else None,
                     "arguments": list(family.arguments), "remote_code": family.remote_code,
                     "tested_with_tiny": family.tiny, "untested": family.untested, "unsupported": family.unsupported,
                     "notes": family.notes, "docs": family.docs})
    return rows


def _adapters() -> dict[str, list[dict[str, Any]]]:
    from hallubench.config import field_kinds, plain_type
    from hallubench.models import MODELS

    adapters = {}
    for name in sorted(MODELS):
        config = getattr(MODELS[name], "config", None)
        if config is None:
            continue
        kinds = field_kinds(config)  # what a field holds: endpoint, secret_env, name_or_path, ... (hallubench/config.py)
        adapters[name] = [{"name": f.name, "type": plain_type(f.type), "kind": kinds[f.name],
                           "default": None if f.default is dataclasses.MISSING else f.default,
                           "required": f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
                          for f in dataclasses.fields(config)]
    return adapters


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)


def _print(families: list[dict[str, Any]], adapters: dict[str, list[dict[str, Any]]]) -> None:
    rows = [["family", "model_type(s)", "takes", "loads with", "family args", "tiny test"]]
    for family in families:
        takes = [kind + (" (as images)" if kind == "video" and family["video_as"] == "images" else "")
                 for kind in family["modalities"]]
        rows.append([family["name"], ", ".join(family["model_types"]), ", ".join(takes),
                     "REFUSED" if family["unsupported"] else family["auto_class"] or AUTO,
                     ", ".join(family["arguments"]) or "-", family["tested_with_tiny"] or "untested (see notes)"])
    print(f"{len(families)} model families (--model hf); any other model_type that transformers' "
          "AutoModelForMultimodalLM, AutoModelForImageTextToText or AutoModelForCausalLM loads works too.\n")
    print(_table(rows))
    print("\nNotes:")
    for family in families:
        note = family["unsupported"] or family["notes"]
        remote = " Some released checkpoints need trust_remote_code=true." if family["remote_code"] else ""
        untested = f" Untested here: {family['untested']}." if family["untested"] else ""
        print(f"- {family['name']}: {note}{remote}{untested} {family['docs']}".replace("  ", " "))
    for name, fields in adapters.items():
        print(f"\n--model {name} --model-args (key=value,...):")
        print(_table([["key", "type", "kind", "default"]] + [
            [field["name"], field["type"], field["kind"] or "-",
             "(required)" if field["required"] else repr(field["default"])]
            for field in fields]))


def _models(args: argparse.Namespace) -> int:
    families, adapters = _families(args.resolve), _adapters()
    if args.json:
        print(json.dumps({"families": families, "adapters": adapters}, indent=2))
    else:
        _print(families, adapters)
    return 0


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    parser = subparsers.add_parser("models", help=summary, description=summary)
    parser.add_argument("--json", action="store_true", help="print the families and adapter arguments as JSON")
    parser.add_argument("--resolve", action="store_true",
                        help=f"name the transformers class each family loads with where the table says '{AUTO}' "
                             "(imports transformers: a few seconds)")
    parser.set_defaults(func=_models)
