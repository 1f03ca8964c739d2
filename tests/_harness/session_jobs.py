"""Expensive, deterministic inputs computed once per test session, in a background process
started as soon as the session's tests are known, so they overlap the rest of the suite.

Each job is a function returning JSON data (the checkov batch of every example stack, the
budget guard function's cases in their own interpreter). The session's controller (the
xdist controller, or the only process without xdist) starts the jobs its collected tests
need (tests/conftest.py), each as `python -m tests._harness.session_jobs NAME DIRECTORY`; a
fixture then waits for `DIRECTORY/NAME.json` (`result`). Before, the first xdist worker to
ask computed the data while the others sat waiting on its lock: half a minute of both
cores for checkov alone. Without a started job (a test run on its own, say) `result`
computes the data in the asking process, as then. A job may also hand something over
before it ends (`publish`, read with `published`): the checkov job's example previews.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Job:
    #: "module:function" computing the data (no arguments, JSON-serialisable result), or,
    #: for a service, "module:function" giving the command that starts it (given its
    #: spool directory).
    function: str
    #: Node id prefixes of the tests that may need it: no such test collected, no job.
    needed_by: tuple[str, ...]
    #: The fixtures that wait for it (none: every test of needed_by may use it).
    fixtures: tuple[str, ...]
    #: A service: it runs for the whole session, answering requests
    #: (tests/_harness/checkov_service.py).
    service: bool = False


JOBS = {
    "scans": Job(
        "tests.scan.conftest:compute_scans",
        ("tests/scan/",),
        ("stack_scans", "printed_check_list"),
    ),
    "budget-guard-cases": Job(
        "tests.gcp.functions.test_budget_guard_function:run_cases",
        ("tests/gcp/functions/test_budget_guard_function.py",),
        ("outcomes",),
    ),
    "checkov-service": Job(
        "tests._harness.session_jobs:checkov_service_command",
        (
            "tests/aws/test_karpenter_gpu_pool.py",
            "tests/k8s/test_checkov.py",
            "tests/k8s/test_image_policy.py",
            "tests/k8s/test_training_job_template.py",
            "tests/scan/test_cli_scan.py",
        ),
        (),
        service=True,
    ),
}

#: How long a test waits for a job before failing (the checkov batch takes about a minute
#: on a loaded 2-core machine).
TIMEOUT_SECONDS = 900


def shared_directory(config: pytest.Config) -> Path:
    """The session's directory every process of it sees: the controller's base temporary
    directory (an xdist worker's is a directory inside it)."""
    base = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    return base.parent if hasattr(config, "workerinput") else base


def start(config: pytest.Config, nodeids: list[str]) -> None:
    """Start, once per session, the jobs the collected tests need."""
    if hasattr(config, "workerinput") or config.stash.get(_STARTED, None) is not None:
        return
    if os.environ.get(_INSIDE_A_JOB):
        return  # a pytest a job runs (the budget guard's cases) starts no jobs of its own
    started: dict[str, subprocess.Popen[bytes]] = {}
    config.stash[_STARTED] = started
    directory = shared_directory(config)
    for name, job in JOBS.items():
        if not any(nodeid.startswith(job.needed_by) for nodeid in nodeids):
            continue
        log = open(directory / f"{name}.log", "wb")  # noqa: SIM115 (the child writes it)
        command = [sys.executable, "-m", "tests._harness.session_jobs", name, str(directory)]
        if job.service:
            spool = directory / name
            spool.mkdir()
            command = _function(name)(spool)
        started[name] = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, _INSIDE_A_JOB: name, _JOB_DIRECTORY: str(directory)},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        (directory / f"{name}.pid").write_text(str(started[name].pid))


def start_early(config: pytest.Config) -> None:
    """Start, as the session starts, the jobs its arguments can reach (the whole suite
    reaches all): the checkov batch then has the collection's time too. With -k or -m,
    the collected tests decide (`start`)."""
    if config.option.keyword or config.option.markexpr:
        return
    reached = []
    for argument in config.args:
        path = Path(argument.split("::")[0]).resolve()
        try:
            relative = path.relative_to(ROOT).as_posix()
        except ValueError:
            continue
        reached.append("" if relative == "." else relative)
    needed = [
        prefix
        for job in JOBS.values()
        for prefix in job.needed_by
        if any(prefix.startswith(r) or r.startswith(prefix.rstrip("/")) for r in reached)
    ]
    if needed:
        start(config, needed)


def needs_a_job(item: pytest.Item) -> bool:
    """Whether the test waits for a job's data (a service is ready within seconds)."""
    return any(_needs(item, job) for job in JOBS.values() if not job.service)


def needed_by_items(items: list[pytest.Item]) -> list[str]:
    """Node ids of the items that use a job, for `start`."""
    return [item.nodeid for item in items if any(_needs(item, job) for job in JOBS.values())]


def _needs(item: pytest.Item, job: Job) -> bool:
    fixtures = getattr(item, "fixturenames", ())
    return item.nodeid.startswith(job.needed_by) and (
        not job.fixtures or any(f in fixtures for f in job.fixtures)
    )


def stop(config: pytest.Config) -> None:
    """End the jobs still running when the session ends (an interrupted run)."""
    for process in (config.stash.get(_STARTED, None) or {}).values():
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


_STARTED = pytest.StashKey[dict]()
_INSIDE_A_JOB = "AISTACK_SESSION_JOB"
#: A job's process: the session's shared directory, where `publish` writes.
_JOB_DIRECTORY = "AISTACK_SESSION_JOB_DIRECTORY"


def service_spool(name: str) -> Path | None:
    """The running service's spool directory, or None (the session did not start it)."""
    config = _SESSION.get("config")
    if config is None:
        return None
    directory = shared_directory(config)
    return directory / name if (directory / f"{name}.pid").exists() else None


def checkov_service_command(spool: Path) -> list[str]:
    from aistack.scan.checkov import _interpreter_of, find_checkov

    interpreter = _interpreter_of(find_checkov()) or sys.executable
    service = Path(__file__).with_name("checkov_service.py")
    return [interpreter, "-I", str(service), str(spool), str(os.getpid())]


#: This process's session (tests/conftest.py sets it), for service_spool.
_SESSION: dict[str, pytest.Config] = {}


def configure(config: pytest.Config) -> None:
    _SESSION["config"] = config


def result(name: str, config: pytest.Config) -> Any:
    """The job's data: waited for if the session started the job, else computed here."""
    directory = shared_directory(config)
    if not (directory / f"{name}.pid").exists():
        return _function(name)()
    done, failed = directory / f"{name}.json", directory / f"{name}.error"
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while not done.exists():
        if failed.exists():
            pytest.fail(f"the session job {name!r} failed:\n{failed.read_text()}")
        if time.monotonic() > deadline:
            log = directory / f"{name}.log"
            pytest.fail(f"the session job {name!r} did not finish:\n{log.read_text()[-4000:]}")
        time.sleep(0.05)
    return json.loads(done.read_text())


def publish(name: str, data: bytes) -> None:
    """Inside a running job: hand `data` to the session's tests now, before the job's
    result (`published` reads it). Outside a job: nothing."""
    directory = os.environ.get(_JOB_DIRECTORY)
    if directory:
        _write_bytes(Path(directory) / name, data)


def published(name: str, job: str) -> bytes | None:
    """What the session's `job` published as `name`, waited for; None when the session did
    not start that job, or the job ended (or failed) without publishing it."""
    config = _SESSION.get("config")
    if config is None:
        return None
    directory = shared_directory(config)
    if not (directory / f"{job}.pid").exists():
        return None
    wanted = directory / name
    ended = (directory / f"{job}.json", directory / f"{job}.error")
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while not wanted.exists():
        if any(path.exists() for path in ended) or time.monotonic() > deadline:
            return None
        time.sleep(0.05)
    return wanted.read_bytes()


def _function(name: str) -> Any:
    module, function = JOBS[name].function.split(":")
    return getattr(importlib.import_module(module), function)


def _main(name: str, directory: Path) -> None:
    # A job computes its data once and exits, as a CLI command does (aistack.cli.main): the
    # collector's full passes, over everything its engine runs and imports keep, are off.
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 10**9)
    try:
        data = _function(name)()
    except BaseException:
        _write(directory / f"{name}.error", traceback.format_exc())
        raise
    _write(directory / f"{name}.json", json.dumps(data))


def _write(path: Path, text: str) -> None:
    _write_bytes(path, text.encode())


def _write_bytes(path: Path, data: bytes) -> None:
    # Written whole, then renamed: a waiting test never reads half a file.
    partial = path.with_name(path.name + f".{os.getpid()}.partial")
    partial.write_bytes(data)
    partial.replace(path)


if __name__ == "__main__":
    _main(sys.argv[1], Path(sys.argv[2]))
