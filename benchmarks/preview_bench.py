"""Benchmark of the offline preview (`make bench`): not a test, a measurement.

Prints, for the reference stack: wall time of `aistack preview`, wall time of a bare import
of the SDK modules the stack uses, their ratio, and the preview's peak memory. Targets as
the stack grows: ratio under 2, peak under 500 MB.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 3
BARE_IMPORT = "import pulumi, pulumi_aws, pydantic, typer, rich"
PREVIEW = "from aistack.cli import app; app(['preview', '.'], standalone_mode=False)"
# Peak resident memory of the child, read from the kernel when it exits.
MEASURE = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); "
    "subprocess.run([sys.executable, '-c', sys.argv[1]], check=True, "
    "stdout=subprocess.DEVNULL); "
    "print(time.perf_counter() - t, "
    "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def measure(code: str) -> tuple[float, float]:
    """(median wall seconds, max peak MB) over REPEATS fresh interpreters."""
    walls, peaks = [], []
    for _ in range(REPEATS):
        out = subprocess.run(
            [sys.executable, "-c", MEASURE, code],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": "140"},
        ).stdout.split()
        walls.append(float(out[0]))
        peaks.append(int(out[1]) / 1024)
    return statistics.median(walls), max(peaks)


def main() -> int:
    started = time.perf_counter()
    bare_wall, bare_peak = measure(BARE_IMPORT)
    preview_wall, preview_peak = measure(PREVIEW)
    ratio = preview_wall / bare_wall
    print(f"bare SDK import     {bare_wall:6.2f} s   peak {bare_peak:6.0f} MB")
    print(f"aistack preview     {preview_wall:6.2f} s   peak {preview_peak:6.0f} MB")
    print(f"ratio               {ratio:6.2f}     (target < 2)")
    print(f"peak memory         {preview_peak:6.0f} MB  (target < 500 MB)")
    took = time.perf_counter() - started
    print(f"[{REPEATS} runs each, median wall time; bench took {took:.0f} s]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
