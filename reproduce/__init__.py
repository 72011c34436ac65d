"""`hallubench reproduce`: every published number we attempt, declared once (hallubench.registry.REPRODUCTIONS),
computed from the authors' released files (pinned in sources.json, checked by sha256) through the public API, and
printed published against ours. The docs page's table and the tests read the same declarations."""
from hallubench.registry import discover_modules

discover_modules(__name__, __path__, skip=("__main__",))
