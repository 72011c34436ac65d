"""kill -9 in the middle of a run: start `python -m hallubench ARGV` and SIGKILL it once its step journal holds a
marker (the multi-step tests' resume checks)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def kill_when_journalled(argv: list[str], env: dict[str, str], journal: Path, marker: bytes,
                         timeout: float = 300) -> None:
    """Run the command and SIGKILL its process group as soon as `journal` contains `marker`; AssertionError when the
    run ends first."""
    proc = subprocess.Popen([sys.executable, "-m", "hallubench", *argv], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        if journal.exists() and marker in journal.read_bytes():
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
