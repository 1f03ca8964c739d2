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
PREVIEW = "from aistack.cli import app; app(['preview', '.'], standalone_mode=False)"
# Which SDK modules the preview really loads: pulumi_aws registers every service module
# lazily, so only those whose type is no longer the lazy placeholder were imported.
LOADED_SDK_MODULES = (
    "import sys, io, contextlib\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    f"    {PREVIEW}\n"
    "print(' '.join(sorted(n for n, m in list(sys.modules.items())\n"
    "    if n.split('.')[0] in ('pulumi', 'pulumi_aws', 'pulumi_gcp', 'pulumi_kubernetes')\n"
    "    and n.count('.') <= 1 and type(m).__name__ != '_LazyModule')))"
)
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


def sdk_modules() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", LOADED_SDK_MODULES],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return out


def main() -> int:
    started = time.perf_counter()
    modules = sdk_modules()
    # Touching an attribute is what loads a lazily registered module.
    bare_import = "import importlib, pydantic, typer, rich\n" + "".join(
        f"hasattr(importlib.import_module({m!r}), '_load')\n" for m in modules
    )
    bare_wall, bare_peak = measure(bare_import)
    preview_wall, preview_peak = measure(PREVIEW)
    ratio = preview_wall / bare_wall
    aws_modules = [m for m in modules if m.startswith("pulumi_aws.")]
    print(f"SDK modules the preview loads: {len(modules)} ({len(aws_modules)} pulumi_aws)")
    print(f"bare SDK import     {bare_wall:6.2f} s   peak {bare_peak:6.0f} MB")
    print(f"aistack preview     {preview_wall:6.2f} s   peak {preview_peak:6.0f} MB")
    print(f"ratio               {ratio:6.2f}     (target < 2)")
    print(f"peak memory         {preview_peak:6.0f} MB  (target < 500 MB)")
    took = time.perf_counter() - started
    print(f"[{REPEATS} runs each, median wall time; bench took {took:.0f} s]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
