"""The static site of run folders and/or a CrossCheck ranking: a models x benchmarks board (with the papers'
published tables beside it), a leaderboard per board of the ranking, a page per (board, item) with every sentence
coloured by its CrossCheck score, and a page per run folder with its results table and every sample's verdict.

    from hallubench.view import build_site
    site = build_site(None, ["runs/llava", "runs/qwen"], "site")        # run folders alone; open site/index.html
    site = build_site("runs/cc/ranking", ["runs/cc/runs/a"], "site")   # a ranking and a run folder

Plain HTML/CSS/JS from Jinja2 templates (autoescaped), no server and no network at view time.
"""
from importlib import import_module

_EXPORTS = {"build_site": "site", "push_site": "space", "serve": "serve"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
