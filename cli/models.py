"""`hallubench models [NAME]`: the model families the hf adapter knows (models/families.py) and the `--model-args`
each adapter takes (its typed config): a listing that fits 100 columns, one family's or adapter's detail
(`hallubench models qwen2_5_vl`, `hallubench models hf`), or `--json`."""
from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from hallubench.cli.listing import paragraph, table
from hallubench.config import NAME_OR_PATH
from hallubench.errors import ConfigError, did_you_mean

# What a key's value is, in words (hallubench/config.py's kinds); a plain choice says nothing.
KIND_WORDS = {"endpoint": "a server URL", "secret_env": "the environment variable that holds the key",
              "secret": "a credential", "local_path": "a file or folder here", "name_or_path": "a Hub id, a name it knows or a local path",
              "runs_code": "lets a checkpoint run its own code", "opaque": "passed on as given"}
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


def _takes(family: dict[str, Any]) -> str:
    return ", ".join(kind + ("*" if kind == "video" and family["video_as"] == "images" else "")
                     for kind in family["modalities"])


def _tested(family: dict[str, Any]) -> str:
    return "REFUSED" if family["unsupported"] else "tiny" if family["tested_with_tiny"] else "untested"


def _shown_name(field: dict[str, Any]) -> str:
    """The key a user types: lm-eval's `pretrained` for a checkpoint (the adapters read it as `model`)."""
    return "pretrained" if field["name"] == "model" and field["kind"] == NAME_OR_PATH else field["name"]


RUN_TIME = "(run time)"
RUN_TIME_NOTE = ("device (run time): the adapter runs here, on the run's --device, else the accelerate process's "
                 "device (one GPU per process, else cpu)")


def _shown_default(field: dict[str, Any]) -> str:
    if field["required"]:
        return "(required)"
    return RUN_TIME if field["name"] == "device" else repr(field["default"])


def _adapter_line(fields: list[dict[str, Any]]) -> str:
    return ", ".join(_shown_name(f) + (" (required)" if f["required"] else "") for f in fields)


def listing(families: list[dict[str, Any]], adapters: dict[str, list[dict[str, Any]]]) -> str:
    from hallubench.models import model_role

    rows = [["family", "takes", "tested", "model_type(s)"]]
    rows += [[f["name"], _takes(f), _tested(f), ", ".join(f["model_types"])] for f in families]
    chat = [[name, _adapter_line(fields)] for name, fields in adapters.items() if model_role(name) == "chat"]
    tools = [[name, _adapter_line(fields)] for name, fields in adapters.items() if model_role(name) != "chat"]
    return "\n".join([
        paragraph(f"{len(families)} model families (--model hf); any other model_type that transformers' "
                  "AutoModelForMultimodalLM, AutoModelForImageTextToText or AutoModelForCausalLM loads works too. "
                  "A family's notes, loading class and arguments: `hallubench models FAMILY`; an adapter's keys, "
                  "types and defaults: `hallubench models ADAPTER`; everything: `hallubench models --json`.",
                  hanging=""), "",
        table(rows, indent=""),
        "video*: no video processor, a video's frames go in as a run of images. tested: tiny = a tiny random",
        "checkpoint of the family runs in the tests; REFUSED = the adapter refuses it (its notes say why).", "",
        "Adapters: --model NAME --model-args key=value,...",
        *([table(chat)] if chat else []), "",
        "Tools a task step calls: --helper ROLE \"adapter=NAME,key=value,...\" (never --model)",
        *([table(tools)] if tools else []),
    ]).rstrip()


def family_detail(family: dict[str, Any]) -> str:
    fields = [("model_type", ", ".join(family["model_types"])), ("takes", _takes(family)),
              ("loads with", "REFUSED" if family["unsupported"] else family["auto_class"] or AUTO),
              ("arguments", ", ".join(family["arguments"]) or "-"),
              ("tested", family["tested_with_tiny"] and f"tiny {family['tested_with_tiny']} checkpoint"
               or f"untested: {family['untested'] or family['unsupported']}"),
              ("notes", (family["unsupported"] or family["notes"] or "-")
               + (" Some released checkpoints need trust_remote_code=true." if family["remote_code"] else "")),
              ("docs", family["docs"] or "-")]
    return "\n".join([f"{family['name']} (--model hf)",
                      *(paragraph(text, f"  {name + ':':<12}", " " * 14) for name, text in fields)])


def adapter_detail(name: str, fields: list[dict[str, Any]]) -> str:
    from hallubench.models import model_role

    how = (f"--model {name} --model-args key=value,..." if model_role(name) == "chat"
           else f"--helper ROLE \"adapter={name},key=value,...\"")
    rows = [["key", "type", "default", "holds"]]
    rows += [[_shown_name(f), f["type"], _shown_default(f), KIND_WORDS.get(f["kind"] or "", "")] for f in fields]
    note = [paragraph(RUN_TIME_NOTE, "  ", "  ")] if any(f["name"] == "device" for f in fields) else []
    return "\n".join([f"{name}: {how}", table(rows), *note])


def _detail(name: str, families: list[dict[str, Any]], adapters: dict[str, list[dict[str, Any]]]) -> str:
    wanted = name.lower()
    for family in families:
        if wanted == family["name"].lower() or wanted in family["model_types"]:
            return family_detail(family)
    if name in adapters:
        return adapter_detail(name, adapters[name])
    known = [*adapters, *(f["name"] for f in families), *(t for f in families for t in f["model_types"])]
    raise ConfigError(f"no model family, model_type or adapter {name!r}{did_you_mean(name, known)}; "
                      "`hallubench models` lists them")


def _models(args: argparse.Namespace) -> int:
    families, adapters = _families(args.resolve), _adapters()
    if args.json:
        print(json.dumps({"families": families, "adapters": adapters}, indent=2))
    elif args.names:
        print("\n\n".join(_detail(name, families, adapters) for name in args.names))
    else:
        print(listing(families, adapters))
    return 0


def register(subparsers: argparse._SubParsersAction, summary: str) -> None:
    parser = subparsers.add_parser("models", help=summary, description=summary)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="a family, a model_type or an adapter: print its detail instead of the listing")
    parser.add_argument("--json", action="store_true", help="print the families and adapter arguments as JSON")
    parser.add_argument("--resolve", action="store_true",
                        help=f"name the transformers class each family loads with where the table says '{AUTO}' "
                             "(imports transformers: a few seconds)")
    parser.set_defaults(func=_models)
