"""Where the test suite's CPU goes (`make suite-profile`): a measurement, not a test (issue 17).

Runs the suite as `make test` runs it (`pytest -n auto`; without mypy beside it), with
this module loaded as a pytest plugin in every process of the session, and prints:

- the machine's speed (a fixed Python loop) before and after: on a shared machine it
  drifts by half within an hour, and every figure below follows it;
- the session's wall time and CPU: all of it (the kernel's count for the whole process
  tree), the xdist workers' (collecting, running tests, the subprocesses they start), and
  the rest (the controller and the session jobs: the checkov batch and service, the budget
  cases);
- the engine in the workers (the scans job's runs are among the jobs' CPU): runs,
  resources registered, CPU per resource; the runs that end in an error (a refusal pays for
  everything built before it) and the builds a worker repeats (the same resources with the
  same inputs and config, each run after the first), and of those the ones a test module
  repeats (shareable by a module fixture);
- the test modules that spend the most engine CPU;
- the floor on this machine: the session's CPU over its cores, the least wall time any
  scheduling of the same work could take.

    uv run --locked python benchmarks/suite_profile.py [PYTEST ARGS]
"""

from __future__ import annotations

import collections
import functools
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Where each process of the session writes what it measured (set by `main`).
OUT = "AISTACK_SUITE_PROFILE"
SPEED_LOOP = "x = 0\nfor i in range(20_000_000):\n    x += i"


# ---- the plugin, in every process of the session --------------------------------------------

_current_module = ["(outside a test)"]
_runs: list[dict[str, Any]] = []
_collected_at: list[float] = []


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _fingerprint(graph: Any) -> str:
    """The same resources with the same inputs under the same config: the same build."""
    rows = [(r.type, r.name, r.inputs) for r in graph.resources]
    text = json.dumps([rows, graph.config], sort_keys=True, default=repr)
    return hashlib.sha1(text.encode()).hexdigest()


def _timed(run: Any) -> Any:
    @functools.wraps(run)
    def timed_run(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        outcome, graph = "ok", None
        try:
            graph = run(*args, **kwargs)
            return graph
        except BaseException as error:
            outcome = type(error).__name__
            raise
        finally:
            seconds = time.process_time() - started
            _runs.append(
                {
                    "module": _current_module[0],
                    "outcome": outcome,
                    "cpu": seconds,
                    "resources": len(graph.resources) if graph is not None else 0,
                    "fingerprint": _fingerprint(graph) if graph is not None else None,
                }
            )

    return timed_run


def pytest_configure(config: Any) -> None:
    # Every caller reaches the engine through these two names (aistack.engine re-exports
    # the runner's), looked up when called: run_project calls the runner module's `run`.
    from aistack import engine
    from aistack.engine import runner

    runner.run = engine.run = _timed(runner.run)  # type: ignore[method-assign]


def pytest_collection_finish(session: Any) -> None:
    _collected_at.append(_cpu()[0])


@pytest.hookimpl(tryfirst=True)  # before the setup runs the module's fixtures
def pytest_runtest_setup(item: Any) -> None:
    _current_module[0] = item.nodeid.split("::")[0]


def pytest_sessionfinish(session: Any) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    out = os.environ.get(OUT)
    if worker is None or out is None:
        return
    own, children = _cpu()
    report = {
        "own": own,
        "children": children,
        "collection": _collected_at[0] if _collected_at else 0.0,
        "runs": _runs,
    }
    Path(out, f"{worker}.json").write_text(json.dumps(report))


# ---- the runner and its report --------------------------------------------------------------


def machine_speed() -> float:
    """Seconds of CPU a fixed loop takes in a fresh interpreter (1.3-2.4 s seen here)."""
    code = f"import time\nt = time.process_time()\n{SPEED_LOOP}\nprint(time.process_time() - t)"
    return float(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )


def run_suite(out: str, pytest_args: list[str]) -> tuple[int, float, float]:
    """The suite's exit code, wall seconds and CPU seconds (its whole process tree: every
    descendant that its parent waited for, which the session's processes all are)."""
    path = os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, OUT: out, "PYTHONPATH": path}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as `make test` runs it
    command = [sys.executable, "-m", "pytest", "-n", "auto", "-p", "suite_profile"]
    started = time.perf_counter()
    process = subprocess.Popen(
        [*command, *pytest_args], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    lines = [line.rstrip() for line in process.stdout]
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        print("\n".join(lines))  # what failed, whole
    print(f"pytest: {next((line for line in reversed(lines) if line), '')}")
    return process.returncode, time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def report(workers: dict[str, dict[str, Any]], wall: float, cpu: float) -> None:
    cores = os.cpu_count() or 1
    runs = [run for worker in workers.values() for run in worker["runs"]]
    engine = sum(run["cpu"] for run in runs)
    own = sum(w["own"] for w in workers.values())
    collection = sum(w["collection"] for w in workers.values())
    subprocesses = sum(w["children"] for w in workers.values())
    print(f"\nwall {wall:6.1f} s   CPU {cpu:6.1f} s on {cores} cores   floor {cpu / cores:5.1f} s")
    print(f"  workers ({len(workers)})           {own + subprocesses:6.1f} s")
    print(f"    collecting           {collection:6.1f} s")
    print(f"    the engine           {engine:6.1f} s")
    print(f"    tests' own work      {own - collection - engine:6.1f} s")
    print(f"    their subprocesses   {subprocesses:6.1f} s")
    print(f"  controller and jobs    {cpu - own - subprocesses:6.1f} s")

    built = [run for run in runs if run["outcome"] == "ok"]
    resources = sum(run["resources"] for run in built)
    built_cpu = sum(run["cpu"] for run in built)
    failed = [run for run in runs if run["outcome"] != "ok"]
    # A build is repeated where its worker made it before (another worker's copy could only
    # be shared through the disk); in its own module, a module fixture could share it.
    in_worker, in_module = [], []
    for worker in workers.values():
        seen: set[str] = set()
        seen_in_module: set[tuple[str, str]] = set()
        for run in worker["runs"]:
            if run["outcome"] != "ok":
                continue
            if run["fingerprint"] in seen:
                in_worker.append(run)
            if (run["module"], run["fingerprint"]) in seen_in_module:
                in_module.append(run)
            seen.add(run["fingerprint"])
            seen_in_module.add((run["module"], run["fingerprint"]))
    print(
        f"\nengine, in the workers: {len(runs)} runs, {resources} resources registered by the "
        f"{len(built)} "
        f"that finished, {built_cpu / max(resources, 1) * 1000:.2f} ms of CPU each "
        "(with the SDK modules a run is the first to import)"
    )
    outcomes = collections.Counter(run["outcome"] for run in failed)
    print(
        f"  ending in an error     {sum(r['cpu'] for r in failed):6.1f} s  {len(failed)} runs "
        f"({', '.join(f'{name} {n}' for name, n in outcomes.most_common())})"
    )
    print(
        f"  builds repeated        {sum(r['cpu'] for r in in_worker):6.1f} s  {len(in_worker)} runs"
        f" (in the same test module: {sum(r['cpu'] for r in in_module):.1f} s, "
        f"{len(in_module)} runs)"
    )
    by_module: collections.Counter[str] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    for run in runs:
        by_module[run["module"]] += run["cpu"]
        count[run["module"]] += 1
    print("\nengine CPU by test module:")
    for module, seconds in by_module.most_common(12):
        print(f"  {seconds:6.1f} s {count[module]:4d} runs  {module}")


def main(argv: list[str]) -> int:
    speed = machine_speed()
    with tempfile.TemporaryDirectory(prefix="aistack-suite-profile-") as out:
        code, wall, cpu = run_suite(out, argv)
        workers = {p.stem: json.loads(p.read_text()) for p in sorted(Path(out).glob("*.json"))}
    print(
        f"machine speed: {speed:.2f} s before, {machine_speed():.2f} s after "
        "(a fixed loop; lower is faster)"
    )
    if workers:
        report(workers, wall, cpu)
    else:
        print("no xdist worker reported: the profile needs the suite on workers (-n auto)")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
