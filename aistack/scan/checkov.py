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
    #: Wall-clock time of the checkov process (about 5 s of it is checkov's import).
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

    from aistack.scan.kubernetes import kubernetes_documents, write_for_checkov

    plan = to_terraform_plan(graph)
    documents = [d for d in kubernetes_documents(graph) if d.builtin]
    names = {
        planned.address: planned.resource.name for planned in terraform_address_map(graph).values()
    }
    frameworks = (["terraform_plan"] if plan.get("resource_changes") else []) + (
        ["kubernetes"] if documents else []
    )
    if not frameworks:
        return CheckovResult(version="", passed=0, findings=[], resource_count=0)
    executable = checkov or find_checkov()
    with tempfile.TemporaryDirectory(prefix="aistack-scan-") as directory:
        if "terraform_plan" in frameworks:
            (Path(directory) / "plan.json").write_text(json.dumps(plan, indent=1))
        k8s_files = write_for_checkov(documents, Path(directory))
        command = [
            executable,
            "-d",
            directory,
            "--framework",
            *frameworks,
            "--skip-download",
            "-o",
            "json",
        ]
        started = time.monotonic()
        # checkov exits 1 when any check fails; the report on stdout says which.
        completed = subprocess.run(
            command,
            capture_output=True,
            text=True,
            cwd=directory,
            env={**os.environ, "LOG_LEVEL": "WARNING", "ANSI_COLORS_DISABLED": "1"},
            check=False,
        )
        seconds = time.monotonic() - started
    if completed.returncode not in (0, 1):
        raise CheckovFailedError(
            f"checkov exited {completed.returncode}: {completed.stderr.strip()[-2000:]}"
        )
    result = parse_report(completed.stdout, names, seconds=seconds, files=k8s_files)
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


@functools.cache
def _check_table(executable: str) -> tuple[tuple[str, str, str], ...]:
    """(check id, entity type, link) rows of `checkov --list`'s table, for the two
    frameworks aistack scans with (Terraform resource types, Kubernetes kinds)."""
    listing = subprocess.run(
        [executable, "--list", "--framework", "terraform", "kubernetes"],
        capture_output=True,
        text=True,
        check=False,
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
