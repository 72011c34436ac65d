"""hallubench: measure hallucination in audio, video and image language models.

    import hallubench
    results = hallubench.run(model="hf", model_args="pretrained=PATH", tasks="cmm", data_dir="mini", limit=4)
    leaderboard = hallubench.rank(["runs/a", "runs/b"])

`run`, `plan`, `rank` and `build` live in hallubench.api and are imported on first use (PEP 562), so
`import hallubench` imports no torch, datasets or transformers. Every other module is a subpackage
(setup.cfg's package_dir maps each `hallubench.<name>` to its top-level folder).
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["build", "plan", "rank", "run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("hallubench.api"), name)
    raise AttributeError(f"module 'hallubench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
