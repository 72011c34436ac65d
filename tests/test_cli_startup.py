"""`hallubench COMMAND --help` must not pull in the heavy libraries (each costs seconds to import): the CLI
imports only the module of the command being run, and what those import defers torch, evaluate and friends
to first use. Timing lives in tests/perf/bench_startup.py; this checks the cause, which does not vary with load."""
import subprocess
import sys

import pytest

from hallubench.cli.main import COMMANDS

HEAVY = ("torch", "transformers", "accelerate", "evaluate", "datasets", "scipy.stats", "pandas")
# `build` lists the registered builders, which are datasets.GeneratorBasedBuilder subclasses.
ALLOWED = {"build": {"datasets", "pandas"}}

PROBE = """
import contextlib, io, sys
from hallubench.cli.main import main
try:
    with contextlib.redirect_stdout(io.StringIO()):
        main(sys.argv[1:])
except SystemExit:
    pass
print(",".join(m for m in {heavy!r} if m in sys.modules))
"""


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_imports_no_heavy_library(command):
    argv = [command, "--help"] if command else ["--help"]
    done = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv], capture_output=True, text=True,
                          check=True)
    loaded = set(filter(None, done.stdout.strip().split(",")))
    assert loaded <= ALLOWED.get(command, set()), f"hallubench {command} --help imports {sorted(loaded)}"
