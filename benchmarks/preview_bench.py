"""Benchmark of the offline preview (`make bench`): not a test, a measurement (issue 17).

For each example stack (`.`, the reference stack, and `stacks/minimal-training`) it prints
the wall time of `aistack preview`, the wall time of a bare import of the SDK modules that
preview loads (the import floor: no engine can be faster than loading the SDK), their ratio
and the preview's peak memory. Then the engine's growth: one component (DatasetBucket, 9
resources) repeated 10, 100 and 1,000 times in one program, and 100 times again.

Wall time and CPU time are both shown: on a machine shared with other work, wall time
stretches and CPU time does not, but both follow the machine's speed, which can drift by
half within an hour. So the floor and the preview are measured in turns and the ratio is
the median of the turns' ratios, and the growth compares 1,000 copies with the mean of the
100 copies measured before and after them. Targets (judged on wall time): ratio at most
1.3; 1,000 repetitions at most 11x the time of 100 (linear); a preview's peak under 500 MB.

    uv run --locked python benchmarks/preview_bench.py [--quick]

`--quick` runs each measurement once and the growth only to 100 (for a look while working).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STACKS = (".", "stacks/minimal-training")
REPEATS = 3
RATIO_TARGET = 1.3
GROWTH_TARGET = 11.0
PEAK_TARGET_MB = 500


def preview_code(stack: str) -> str:
    # The console script's entry point, as `aistack preview` runs it (it exits the process).
    return f"from aistack.cli import main; main(['preview', {stack!r}])"


# Which SDK modules the preview really loads: pulumi_aws registers every service module
# lazily, so only those whose type is no longer the lazy placeholder were imported.
LOADED_SDK_MODULES = (
    "import sys, io, contextlib\n"
    "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
    "    {preview}\n"
    "print(' '.join(sorted(n for n, m in list(sys.modules.items())\n"
    "    if n.split('.')[0] in ('pulumi', 'pulumi_aws', 'pulumi_gcp', 'pulumi_kubernetes')\n"
    "    and n.count('.') <= 1 and type(m).__name__ != '_LazyModule')))"
)
# Wall time, CPU time (user + system) and peak resident memory of the child, read from the
# kernel when it exits. CPU time is what to compare on a shared machine: other processes
# stretch wall time, not it.
MEASURE = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); "
    "subprocess.run([sys.executable, '-c', sys.argv[1]], check=True, "
    "stdout=subprocess.DEVNULL); "
    "r = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(time.perf_counter() - t, r.ru_utime + r.ru_stime, r.ru_maxrss)"
)
# One program of `n` copies of the same component, timed after a warm-up run of one copy
# (so the SDK's imports are not counted), median of `repeats` (1,000 copies run once, so the
# median rather than the best keeps the comparison fair); prints seconds, resources, MB.
GROWTH = """
import json, resource, statistics, sys, time
from aistack import engine
from aistack import aws as aistack_aws
n, repeats = int(sys.argv[1]), int(sys.argv[2])
governance = {"owner": "ml", "costCenter": "ml-1", "allowedRegions": ["us-east-1"]}
def program(count):
    return lambda: [
        aistack_aws.DatasetBucket(
            f"bucket{i}", {"kind": "checkpoints", "region": "us-east-1", "governance": governance}
        )
        for i in range(count)
    ]
config = {"aws:region": "us-east-1"}
engine.run(program(1), config=config)
times, cpu = [], []
for _ in range(repeats):
    started, started_cpu = time.perf_counter(), time.process_time()
    graph = engine.run(program(n), config=config)
    times.append(time.perf_counter() - started)
    cpu.append(time.process_time() - started_cpu)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({
    "seconds": statistics.median(times), "cpu": statistics.median(cpu),
    "resources": len(graph), "peak_mb": peak,
}))
"""


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "140", "PYTHONWARNINGS": "ignore"}


def _python(*arguments: str) -> str:
    """What a fresh interpreter, run from the repository with these arguments, prints."""
    return subprocess.run(
        [sys.executable, *arguments],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        env=_env(),
    ).stdout


def _once(code: str) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak MB) of one fresh interpreter running `code`."""
    out = _python("-c", MEASURE, code).split()
    return float(out[0]), float(out[1]), int(out[2]) / 1024


def measure_against_floor(code: str, floor_code: str, repeats: int) -> dict[str, float]:
    """The preview and its import floor, measured in turns, and their ratios per turn.

    A shared machine's speed drifts over a minute (this one's floor moved between 2 s and
    4 s within an hour): measured one after the other, the two medians would compare
    different machines. Each turn runs the floor, then the preview; the ratio reported is
    the median of the turns' ratios."""
    turns = [(_once(floor_code), _once(code)) for _ in range(repeats)]
    floors, previews = [turn[0] for turn in turns], [turn[1] for turn in turns]
    return {
        "preview": statistics.median(p[0] for p in previews),
        "preview_cpu": statistics.median(p[1] for p in previews),
        "floor": statistics.median(f[0] for f in floors),
        "floor_cpu": statistics.median(f[1] for f in floors),
        "ratio": statistics.median(p[0] / f[0] for f, p in turns),
        "cpu_ratio": statistics.median(p[1] / f[1] for f, p in turns),
        "peak": max(p[2] for p in previews),
    }


def sdk_modules(stack: str) -> list[str]:
    return _python("-c", LOADED_SDK_MODULES.format(preview=preview_code(stack))).split()


def import_floor_code(modules: list[str]) -> str:
    # Touching an attribute is what loads a lazily registered module. The heap is frozen
    # at the end, as the console script freezes it (aistack.cli.main): Python's exit then
    # skips its last collection over every object, which is no part of loading the SDK.
    return (
        "import gc, importlib, pydantic, typer, rich\n"
        + "".join(f"hasattr(importlib.import_module({m!r}), '_load')\n" for m in modules)
        + "gc.freeze()\n"
    )


def growth(n: int, repeats: int) -> dict[str, float]:
    out = _python("-c", GROWTH, str(n), str(repeats))
    return json.loads(out.strip().splitlines()[-1])


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    repeats = 1 if quick else REPEATS
    started = time.perf_counter()
    print(
        f"{'stack':26} {'preview':>8} {'floor':>7} {'ratio':>6}   "
        f"{'CPU: preview':>12} {'floor':>6} {'ratio':>6} {'peak':>8}  SDK modules"
    )
    missed = []
    for stack in STACKS:
        modules = sdk_modules(stack)
        m = measure_against_floor(preview_code(stack), import_floor_code(modules), repeats)
        preview, preview_cpu, floor, floor_cpu = (
            m["preview"],
            m["preview_cpu"],
            m["floor"],
            m["floor_cpu"],
        )
        ratio, cpu_ratio, peak = m["ratio"], m["cpu_ratio"], m["peak"]
        aws = sum(m.startswith("pulumi_aws.") for m in modules)
        print(
            f"{stack:26} {preview:7.2f}s {floor:6.2f}s {ratio:6.2f}   "
            f"{preview_cpu:11.2f}s {floor_cpu:5.2f}s {cpu_ratio:6.2f} {peak:6.0f}MB  "
            f"{len(modules)} ({aws} pulumi_aws)"
        )
        if ratio > RATIO_TARGET:
            missed.append(f"{stack} ratio {ratio:.2f} > {RATIO_TARGET}")
        if peak >= PEAK_TARGET_MB:
            missed.append(f"{stack} peak {peak:.0f} MB >= {PEAK_TARGET_MB} MB")
    print()
    print(
        f"{'DatasetBucket x n':26} {'engine':>8} {'per copy':>9} {'CPU':>7} "
        f"{'resources':>9} {'peak':>8}"
    )
    counts = (10, 100) if quick else (10, 100, 1000)
    results = {}
    for n in counts:
        result = growth(n, repeats if n < 1000 else 1)
        results[n] = result
        print(
            f"{'n = ' + format(n, ','):26} {result['seconds']:7.2f}s "
            f"{1000 * result['seconds'] / n:7.1f}ms {result['cpu']:6.2f}s "
            f"{result['resources']:9.0f} "
            f"{result['peak_mb']:6.0f}MB"
        )
    if 1000 in results:
        # 100 copies again after the 1,000: against the mean of the two, a machine whose
        # speed drifted during the long run does not pass for the engine's growth.
        again = growth(100, repeats)
        print(
            f"{'n = 100, again':26} {again['seconds']:7.2f}s "
            f"{10 * again['seconds']:7.1f}ms {again['cpu']:6.2f}s "
            f"{again['resources']:9.0f} {again['peak_mb']:6.0f}MB"
        )
        base = statistics.mean([results[100]["seconds"], again["seconds"]])
        base_cpu = statistics.mean([results[100]["cpu"], again["cpu"]])
        factor = results[1000]["seconds"] / base
        cpu_factor = results[1000]["cpu"] / base_cpu
        print(
            f"growth 100 -> 1,000 copies: {factor:.1f}x the time, {cpu_factor:.1f}x the CPU "
            f"(target <= {GROWTH_TARGET}x)"
        )
        if factor > GROWTH_TARGET:
            missed.append(f"growth {factor:.1f}x > {GROWTH_TARGET}x")
    print()
    print(
        f"targets: ratio <= {RATIO_TARGET}, growth <= {GROWTH_TARGET}x, "
        f"preview peak < {PEAK_TARGET_MB} MB: " + ("all met" if not missed else "; ".join(missed))
    )
    took = time.perf_counter() - started
    print(f"[{repeats} run(s) each, median wall time; bench took {took:.0f} s]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
