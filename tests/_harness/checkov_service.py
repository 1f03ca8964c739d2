"""checkov as a service of the test session: one checkov process that scans on request.

A checkov process spends about 5 s importing checkov before its first check. The tests
that run checkov on objects of their own (the Kubernetes namespace bundles of tests/k8s/)
ask this service instead of starting a process each: it is started with the session
(tests/_harness/session_jobs.py, job "checkov-service"), imports checkov while the suite starts,
and runs each request as aistack's checkov batch runs a directory
(aistack/scan/checkov_batch.py `scan`: a fresh Checkov and fresh runners per scan), whose
results equal a process of its own (tests/scan/test_checkov_batch.py). Requests and
answers are files in the service's spool directory. Without the service (a test run on
its own) `run` starts `checkov ARGV` as before.

Run by checkov's interpreter: `python -I checkov_service.py SPOOL PARENT_PID`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aistack.engine import StackGraph
    from aistack.scan.checkov import CheckovResult

SPOOL = "checkov-service"
#: The longest a request waits for its answer (a scan takes seconds).
TIMEOUT_SECONDS = 600


def run(argv: list[str], *, timeout: float = 300) -> tuple[int, str]:
    """`checkov ARGV`'s exit code and standard output, from the session's service if it
    runs, else from a process of its own."""
    from aistack.scan.checkov import find_checkov
    from tests._harness import session_jobs

    spool = session_jobs.service_spool("checkov-service")
    if spool is None:
        done = subprocess.run(
            [find_checkov(), *argv], capture_output=True, text=True, check=False, timeout=timeout
        )
        return done.returncode, done.stdout
    return _ask(spool, argv)


def executable(directory: Path) -> Path | None:
    """A `checkov` executable, written in `directory`, that the session's service answers:
    for a test that runs aistack as a user does (`aistack scan`, which starts checkov as a
    process), without each of its processes paying checkov's import. None when the session
    did not start the service."""
    from tests._harness import session_jobs

    spool = session_jobs.service_spool("checkov-service")
    if spool is None:
        return None
    script = directory / "checkov"
    script.write_text(
        f"#!{sys.executable}\n"
        "# checkov, answered by the test session's checkov service.\n"
        "import sys\n"
        "from pathlib import Path\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
        "from tests._harness.checkov_service import _ask\n"
        f"code, stdout = _ask(Path({str(spool)!r}), sys.argv[1:])\n"
        "sys.stdout.write(stdout)\n"
        "sys.exit(code)\n"
    )
    script.chmod(0o755)
    return script


def _ask(spool: Path, argv: list[str]) -> tuple[int, str]:
    """`checkov ARGV`'s exit code and standard output, from the service at `spool`."""
    name = uuid.uuid4().hex
    _write(spool / f"{name}.request", json.dumps({"argv": argv}))
    answer, stopped = spool / f"{name}.answer", spool / "stopped"
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while not answer.exists():
        if stopped.exists() or time.monotonic() > deadline:
            log = spool.with_suffix(".log")
            raise RuntimeError(f"the checkov service did not answer:\n{log.read_text()[-4000:]}")
        time.sleep(0.02)
    reply = json.loads(answer.read_text())
    answer.unlink()
    return reply["code"], reply["stdout"]


def scan(graph: StackGraph) -> CheckovResult:
    """`aistack.scan.run_checkov(graph)` with its checkov run by the session's service (else
    a process of its own): the same files written, the same arguments, the same report read
    back. Its guideline links, when a finding needs them, come from `checkov --list` run
    the same way (`seed_check_list`)."""
    from aistack.scan.checkov import (
        REPORT_ARGUMENTS,
        CheckovResult,
        _ScanJob,
        find_checkov,
        parse_report,
    )

    with tempfile.TemporaryDirectory(prefix="aistack-scan-") as directory:
        job = _ScanJob.write(graph, Path(directory))
        if not job.frameworks:
            return CheckovResult(version="", passed=0, findings=[], resource_count=0)
        started = time.monotonic()
        code, stdout = run(["-d", directory, "--framework", *job.frameworks, *REPORT_ARGUMENTS])
        seconds = time.monotonic() - started
    if code in (0, 1):
        report = parse_report(stdout, job.names, seconds=seconds, files=job.files)
        if any(not finding.guideline for finding in report.findings):
            seed_check_list()
    return job.result(code, stdout, "", seconds, find_checkov())


def seed_check_list() -> None:
    """What `checkov --list` prints, from the service, where aistack keeps the list a batch
    printed: guideline links (`aistack.scan.checkov.check_links`) then need no process."""
    from aistack.scan import checkov as checkov_module

    executable = checkov_module.find_checkov()
    if executable not in checkov_module._LISTINGS:
        _, listing = run(list(checkov_module._LIST_ARGUMENTS))
        checkov_module._LISTINGS.setdefault(executable, listing)


def _write(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    partial.replace(path)


def _serve(spool: Path, parent: int) -> None:
    import importlib.util

    batch_path = Path(__file__).resolve().parents[2] / "aistack" / "scan" / "checkov_batch.py"
    spec = importlib.util.spec_from_file_location("checkov_batch", batch_path)
    assert spec is not None and spec.loader is not None
    batch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(batch)
    batch.import_checkov()  # the import a scan would otherwise wait for

    try:
        while os.getppid() == parent:  # the session ended without stopping us: stop
            requests = sorted(spool.glob("*.request"))
            if not requests:
                time.sleep(0.02)
                continue
            for request in requests:
                argv = json.loads(request.read_text())["argv"]
                request.unlink()
                code, stdout = batch.scan(argv)
                _write(request.with_suffix(".answer"), json.dumps({"code": code, "stdout": stdout}))
    finally:
        (spool / "stopped").touch()


if __name__ == "__main__":
    _serve(Path(sys.argv[1]), int(sys.argv[2]))
