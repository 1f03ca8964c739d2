"""Run checkov over a stack converted to a Terraform plan, and read back what failed.

checkov runs as a subprocess, never imported: it pins `packaging<24` while pulumi 3.272
needs `>=26`, so the two cannot share one environment. The repository keeps checkov in its
own locked environment (`tools/checkov`, synced by `make env`); elsewhere set
`AISTACK_CHECKOV` or put `checkov` on PATH (`pipx install checkov`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aistack.engine.graph import StackGraph
from aistack.errors import AistackError
from aistack.scan.findings import Finding
from aistack.scan.tfplan import terraform_address_map, to_terraform_plan

__all__ = [
    "CheckovMissingError",
    "CheckovResult",
    "check_links",
    "checked_types",
    "find_checkov",
    "run_checkov",
    "run_checkov_many",
]

#: The repository's own checkov environment (a source checkout; absent in an installed wheel).
REPOSITORY_CHECKOV = Path(__file__).resolve().parents[2] / "tools/checkov/.venv/bin/checkov"


class CheckovMissingError(AistackError):
    """No checkov executable was found."""

    def __init__(self) -> None:
        super().__init__(
            "checkov is not installed. Fix: run `make env` in the aistack repository, "
            "`pipx install checkov`, or set AISTACK_CHECKOV to a checkov executable "
            "(it needs its own environment: checkov and pulumi pin incompatible packaging)."
        )


class CheckovFailedError(AistackError):
    """checkov ran but did not produce a report."""


@dataclass(frozen=True)
class CheckovResult:
    version: str
    passed: int
    findings: list[Finding]
    resource_count: int
    #: Wall-clock time of the scan (a checkov process of its own: about 5 s of it is
    #: checkov's import; in a batch, run_checkov_many, the import is not counted).
    seconds: float = 0.0
    #: (check id, Pulumi logical name) of every check that passed: a check that could not
    #: read its attribute reports neither pass nor fail, so tests assert on this too.
    passed_checks: frozenset[tuple[str, str]] = frozenset()


def find_checkov() -> str:
    """The checkov to run: AISTACK_CHECKOV, one beside this interpreter, the repository's
    tool environment, then PATH."""
    candidates = [
        os.environ.get("AISTACK_CHECKOV", ""),
        str(Path(sys.executable).parent / "checkov"),
        str(REPOSITORY_CHECKOV),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("checkov")
    if found:
        return found
    raise CheckovMissingError()


def run_checkov(graph: StackGraph, *, checkov: str | None = None) -> CheckovResult:
    """checkov over the stack in one process: its `terraform_plan` framework over the cloud
    resources as a Terraform plan, and its `kubernetes` framework over the Kubernetes
    objects (aistack.scan.kubernetes says how they are written); every failed check a
    Finding, named by the Pulumi logical name."""
    import time

    with tempfile.TemporaryDirectory(prefix="aistack-scan-") as directory:
        job = _ScanJob.write(graph, Path(directory))
        if not job.frameworks:
            return CheckovResult(version="", passed=0, findings=[], resource_count=0)
        executable = checkov or find_checkov()
        command = [executable, "-d", directory, "--framework", *job.frameworks]
        started = time.monotonic()
        completed = subprocess.run(
            [*command, *REPORT_ARGUMENTS],
            capture_output=True,
            text=True,
            cwd=directory,
            env=_checkov_environment(),
            check=False,
        )
        seconds = time.monotonic() - started
    return job.result(completed.returncode, completed.stdout, completed.stderr, seconds, executable)


def run_checkov_many(
    graphs: list[StackGraph], *, checkov: str | None = None
) -> list[CheckovResult]:
    """`run_checkov` for each graph, in one checkov process (aistack/scan/checkov_batch.py):
    checkov's import, most of a scan's time, is paid once (`seconds` then counts each
    scan without it). Falls back to one process per graph when checkov's interpreter
    cannot be told from its script."""
    executable = checkov or find_checkov()
    interpreter = _interpreter_of(executable)
    if interpreter is None:
        return [run_checkov(graph, checkov=executable) for graph in graphs]
    with tempfile.TemporaryDirectory(prefix="aistack-scan-") as root:
        jobs: list[_ScanJob] = []
        directories: list[str] = []
        for index, graph in enumerate(graphs):
            directory = Path(root) / f"stack-{index}"
            directory.mkdir()
            jobs.append(_ScanJob.write(graph, directory))
            if jobs[-1].frameworks:
                (directory / "frameworks").write_text(" ".join(jobs[-1].frameworks))
                directories.append(str(directory))
        if not directories:
            return [CheckovResult(version="", passed=0, findings=[], resource_count=0)] * len(jobs)
        reports = Path(root) / "reports"
        reports.mkdir()
        # -I: the script's directory (aistack/scan, whose kubernetes.py would shadow the
        # kubernetes package checkov imports) stays off sys.path.
        batch = [interpreter, "-I", str(Path(__file__).with_name("checkov_batch.py"))]
        batch += [",".join(_LIST_ARGUMENTS)]
        completed = subprocess.run(
            [*batch, str(reports), *directories],
            capture_output=True,
            text=True,
            cwd=root,
            env=_checkov_environment(),
            check=False,
        )
        if completed.returncode != 0:
            raise CheckovFailedError(
                f"checkov's batch exited {completed.returncode}: {completed.stderr.strip()[-2000:]}"
            )
        # The batch printed the check list too (its guideline links), saving a process.
        _LISTINGS.setdefault(executable, (reports / "list.txt").read_text())
        results: list[CheckovResult] = []
        position = 0
        for job in jobs:
            if not job.frameworks:
                results.append(CheckovResult(version="", passed=0, findings=[], resource_count=0))
                continue
            code = int((reports / f"{position}.rc").read_text())
            stdout = (reports / f"{position}.json").read_text()
            seconds = float((reports / f"{position}.seconds").read_text())
            results.append(job.result(code, stdout, completed.stderr, seconds, executable))
            position += 1
    return results


def _checkov_environment() -> dict[str, str]:
    return {**os.environ, "LOG_LEVEL": "WARNING", "ANSI_COLORS_DISABLED": "1"}


def _interpreter_of(executable: str) -> str | None:
    """The Python a console script runs with (its `#!` line), if it is one."""
    try:
        with open(executable, "rb") as script:
            first = script.readline(512).decode(errors="replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    interpreter = first[2:].strip().split()[0]
    return interpreter if "python" in Path(interpreter).name else None


@dataclass(frozen=True)
class _ScanJob:
    """One stack written for checkov: the frameworks it needs and how to name findings."""

    frameworks: tuple[str, ...]
    #: Terraform address -> Pulumi logical name.
    names: dict[str, str]
    #: checkov's `file_path` of each Kubernetes document -> Pulumi logical name.
    files: dict[str, str]

    @classmethod
    def write(cls, graph: StackGraph, directory: Path) -> _ScanJob:
        from aistack.scan.kubernetes import kubernetes_documents, write_for_checkov

        plan = to_terraform_plan(graph)
        documents = [d for d in kubernetes_documents(graph) if d.builtin]
        names = {
            planned.address: planned.resource.name
            for planned in terraform_address_map(graph).values()
        }
        frameworks = (["terraform_plan"] if plan.get("resource_changes") else []) + (
            ["kubernetes"] if documents else []
        )
        if "terraform_plan" in frameworks:
            (directory / "plan.json").write_text(json.dumps(plan, indent=1))
        files = write_for_checkov(documents, directory)
        return cls(tuple(frameworks), names, files)

    def result(
        self, code: int, stdout: str, stderr: str, seconds: float, executable: str
    ) -> CheckovResult:
        # checkov exits 1 when any check fails; the report says which.
        if code not in (0, 1):
            raise CheckovFailedError(f"checkov exited {code}: {stderr.strip()[-2000:]}")
        result = parse_report(stdout, self.names, seconds=seconds, files=self.files)
        if any(not finding.guideline for finding in result.findings):
            # With --skip-download checkov has no guideline URLs; its check list links each
            # check's source, which says what it reads and why.
            links = check_links(executable)
            findings = [
                finding
                if finding.guideline
                else dataclasses.replace(finding, guideline=links.get(finding.check_id, ""))
                for finding in result.findings
            ]
            result = dataclasses.replace(result, findings=findings)
        return result


#: How every scan asks checkov for its report (checkov_batch.py passes the same): JSON,
#: no guideline download (offline), and `--compact`, which leaves out each check's
#: `code_block` and `connected_node`, lines of the scanned files that aistack never reads
#: (findings name the Pulumi resource): the nine example stacks' reports are 5 MB instead
#: of 40, and a batch of them takes a tenth less CPU.
REPORT_ARGUMENTS = ("--skip-download", "--compact", "-o", "json")

#: `checkov --list` output per executable, when a batch has already printed it.
_LISTINGS: dict[str, str] = {}
#: The frameworks aistack scans with: Terraform resource types and Kubernetes kinds.
_LIST_ARGUMENTS = ("--list", "--framework", "terraform", "kubernetes")


@functools.cache
def _check_table(executable: str) -> tuple[tuple[str, str, str], ...]:
    """(check id, entity type, link) rows of `checkov --list`'s table."""
    listing = _LISTINGS.get(executable)
    if listing is None:
        listing = subprocess.run(
            [executable, *_LIST_ARGUMENTS], capture_output=True, text=True, check=False
        ).stdout
    rows = []
    for line in listing.splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) > 7 and cells[2].startswith("CKV"):
            rows.append((cells[2], cells[4], cells[7]))
    return tuple(rows)


def check_links(executable: str) -> dict[str, str]:
    """Check id -> the link `checkov --list` gives for it (the check's source)."""
    links: dict[str, str] = {}
    for check_id, _, link in _check_table(executable):
        if link.startswith("http"):
            links.setdefault(check_id, link)
    return links


def checked_types(executable: str | None = None) -> set[str]:
    """Every Terraform type some checkov check (resource or graph) is written for."""
    return {entity for _, entity, _ in _check_table(executable or find_checkov())}


def parse_report(
    stdout: str,
    names: dict[str, str],
    *,
    seconds: float = 0.0,
    files: dict[str, str] | None = None,
) -> CheckovResult:
    """checkov's JSON report (one framework: an object; several: a list of them).
    `names` maps Terraform addresses, `files` the Kubernetes documents' file paths, to
    Pulumi logical names."""
    files = files or {}

    def logical_name(check: dict[str, Any]) -> str:
        address = str(check.get("resource", ""))
        if address in names:
            return names[address]
        if check.get("file_path") in files:
            return files[check["file_path"]]
        return address.partition(".")[2]

    try:
        report: Any = json.loads(stdout)
    except json.JSONDecodeError as error:
        raise CheckovFailedError(f"checkov printed no JSON report: {stdout[:500]!r}") from error
    reports = report if isinstance(report, list) else [report]
    findings: list[Finding] = []
    passed_checks: set[tuple[str, str]] = set()
    passed = resources = 0
    version = ""
    for item in reports:
        summary = item.get("summary", {})
        passed += int(summary.get("passed", 0))
        resources += int(summary.get("resource_count", 0))
        version = version or str(summary.get("checkov_version", ""))
        for check in item.get("results", {}).get("passed_checks", []):
            passed_checks.add((str(check.get("check_id", "")), logical_name(check)))
        for check in item.get("results", {}).get("failed_checks", []):
            findings.append(
                Finding(
                    tool="checkov",
                    check_id=str(check.get("check_id", "")),
                    resource=logical_name(check),
                    location=str(check.get("resource", "")),
                    title=str(check.get("check_name", "")),
                    guideline=str(check.get("guideline") or ""),
                )
            )
    findings.sort(key=lambda f: (f.check_id, f.resource))
    return CheckovResult(
        version=version,
        passed=passed,
        findings=findings,
        resource_count=resources,
        seconds=seconds,
        passed_checks=frozenset(passed_checks),
    )
