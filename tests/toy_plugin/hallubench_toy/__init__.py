"""One of each kind of hallubench plug-in, outside the hallubench package: importing it registers them (its entry
point, or `--include` of this folder or of the folder above it)."""
from pathlib import Path

from hallubench.registry import register_metric

from . import adapter, bench, judge  # noqa: F401  (their imports register them)

# an evaluate metric is a stand-alone file, so its owner registers it
register_metric(Path(__file__).parent / "toy_agreement" / "toy_agreement.py")
