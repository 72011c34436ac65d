"""The static site of a CrossCheck ranking and its run folders: a leaderboard page per board, a page per
(board, item) with every sentence coloured by its CrossCheck score, and a page per run folder with every sample.

    from hallubench.view import build_site
    site = build_site("runs/cc/ranking", ["runs/cc/runs/a"], "site")   # open site/index.html

Plain HTML/CSS/JS from Jinja2 templates (autoescaped), no server and no network at view time.
"""
from importlib import import_module

_EXPORTS = {"build_site": "site", "push_site": "space", "serve": "serve"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
