"""SAC3 (Zhang et al., 2023): Tables 3 and 4 from the authors' released judge strings (intuit/sac3 `dataset/`),
through the `sac3` evaluate module. Values in %."""
from __future__ import annotations

import ast
import functools
from typing import Any

from hallubench.registry import register_reproduction
from hallubench.reproduce.reproduction import Cell, Reproduction, load_metric

PAPER = "SAC3"
FILES = {
    "prime": "sac3/prime-500-SC.json",
    "senator": "sac3/senator-500-SC.json",
    "hotpotqa": "sac3/hotpotQA_250_eval_labeled-SC.json",
    "nq_open": "sac3/nq_open_250_eval_labeled-SC.json",
}


def _as_list(value: Any) -> list:
    """`self_SC`/`perb_SC` hold a list, or the Python repr of one in some releases (read as a literal: no code runs)."""
    return value if isinstance(value, list) else ast.literal_eval(value)


def load_set(references: Any, name: str) -> dict[str, list]:
    """A released set as the sac3 metric's inputs. prime and senator carry no label: every target answer there is
    hallucinated; elsewhere `label` "True" means the answer is correct."""
    items = references.read_json(FILES[name])
    return {"self_judgments": [_as_list(item["self_SC"]) for item in items],
            "perturbed_judgments": [_as_list(item["perb_SC"]) for item in items],
            "labels": [item.get("label", "False") == "False" for item in items]}


@functools.cache
def scored(references: Any, name: str) -> dict[str, Any]:
    return load_metric("sac3").compute(**load_set(references, name))


def table3(references: Any, key: str) -> dict[str, float]:
    return {f"{method} {name}": scored(references, name)[key][score] * 100
            for name in ("prime", "senator") for method, score in (("SC2", "sc2"), ("SAC3-Q", "sac3_q"))}


def table4(references: Any) -> dict[str, float]:
    return {f"{kind} {method} {name}": scored(references, name)[key][score] * 100
            for kind, key in (("score", "auroc"), ("confidence", "confidence_auroc"))
            for name in ("hotpotqa", "nq_open") for method, score in (("SC2", "sc2"), ("SAC3-Q", "sac3_q"))}


def _cells(published: dict[str, tuple[float, float]]) -> tuple[Cell, ...]:
    return tuple(Cell(label, value, ours, decimals=1) for label, (value, ours) in published.items())


BINARY = (FILES["prime"], FILES["senator"])
for reproduction in (
    Reproduction(
        "sac3-table3-binary", PAPER, "Table 3, binary, SC2 / SAC3-Q", BINARY,
        _cells({"SC2 prime": (48.2, 48.2), "SAC3-Q prime": (93.2, 93.2), "SC2 senator": (29.6, 29.6),
                "SAC3-Q senator": (97.0, 97.0)}),
        functools.partial(table3, key="accuracy"),
        source="`sac3/` judge strings (C = 0 for \"Yes\") through the `sac3` metric, and through the `sac3_prime` / "
               "`sac3_senator` tasks' own scoring (tests/test_sac3.py)"),
    Reproduction(
        "sac3-table3-confidence", PAPER, "Table 3, \"Confidence\"", BINARY,
        _cells({"SC2 prime": (51.0, 51.0), "SAC3-Q prime": (96.4, 96.4), "SC2 senator": (30.6, 30.6),
                "SAC3-Q senator": (97.4, 97.4)}),
        functools.partial(table3, key="confidence_accuracy"),
        source="the same strings' verbalized probabilities, the `sac3` metric's `confidence_accuracy` (p for a "
               "\"No\", 1 − p for a \"Yes\", averaged, > 0.5 flags)"),
    Reproduction(
        "sac3-table4-auroc", PAPER, "Table 4 (AUROC), SC2 / SAC3-Q, HotpotQA-halu / NQ-open-halu",
        (FILES["hotpotqa"], FILES["nq_open"]),
        _cells({"score SC2 hotpotqa": (74.2, 69.9), "score SAC3-Q hotpotqa": (81.3, 68.1),
                "score SC2 nq_open": (70.5, 72.3), "score SAC3-Q nq_open": (77.2, 74.3),
                "confidence SC2 hotpotqa": (77.0, 77.6), "confidence SAC3-Q hotpotqa": (81.4, 71.2),
                "confidence SC2 nq_open": (72.7, 78.3), "confidence SAC3-Q nq_open": (78.5, 77.6)}),
        table4,
        source="the released labelled sets' judge strings through the `sac3` metric (`auroc`, `confidence_auroc`); "
               "the released strings give SAC3-Q no better than SC2 on HotpotQA, against the paper's +7 points, so "
               "they are likely not the run behind the table (the paper does not say which). The verifier rows need "
               "Falcon-7b / Guanaco-33b outputs, not released"),
    Reproduction(
        "sac3-live-model", PAPER, "Tables 3-5 with a live model", status="not run",
        published_text="see [SAC3](../methods/sac3.md)",
        source="needs gpt-3.5-turbo (API) and GPU verifiers"),
):
    register_reproduction(reproduction)
