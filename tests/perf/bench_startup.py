"""How fast `hallubench --help` and every subcommand's `--help` answer, against a bare interpreter start.

Run: python tests/perf/bench_startup.py   (not collected by pytest: the name is not test_*)

Each command runs REPEATS times in a fresh process, interleaved with the baseline `python -c pass`;
printed are the best wall times, the ratio to the baseline, and whether the command is under the 1 s
target. A slow one names its most expensive imports (python -X importtime) so the cause is visible.
"""
from __future__ import annotations

import subprocess
import sys
import time

from hallubench.cli.main import COMMANDS

REPEATS = 3
TARGET_S = 1.0


def _wall(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _heaviest_imports(argv: list[str], n: int = 3) -> str:
    done = subprocess.run([sys.executable, "-X", "importtime", *argv[1:]], capture_output=True, text=True)
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].strip()))
    top = [name for _, name in sorted(rows, reverse=True) if not name.startswith("hallubench")][:n]
    return ", ".join(top)


def main() -> None:
    commands = {"hallubench --help": [sys.executable, "-m", "hallubench", "--help"]}
    commands.update({f"hallubench {name} --help": [sys.executable, "-m", "hallubench", name, "--help"]
                     for name in COMMANDS})
    baseline = [sys.executable, "-c", "pass"]
    best = {label: float("inf") for label in commands}
    best_base = float("inf")
    for _ in range(REPEATS):
        for label, argv in commands.items():
            best_base = min(best_base, _wall(baseline))
            best[label] = min(best[label], _wall(argv))
    print(f"baseline `python -c pass`: {best_base * 1000:.0f} ms (best of {REPEATS})\n")
    print(f"| command | best wall | × baseline | under {TARGET_S:g} s |")
    print("| --- | --- | --- | --- |")
    slow = []
    for label, seconds in best.items():
        ok = seconds < TARGET_S
        print(f"| `{label}` | {seconds * 1000:.0f} ms | {seconds / best_base:.1f} | {'yes' if ok else 'NO'} |")
        if not ok:
            slow.append(label)
    for label in slow:
        print(f"\n{label}: heaviest imports: {_heaviest_imports(commands[label])}")


if __name__ == "__main__":
    main()
