"""The budget guard function, tested with the real google-cloud clients (cases in
budget_guard_cases.py), each case reported here under its own name.

The cases run in a separate Python process, as the function does on Cloud Functions: the
google-cloud libraries and the Pulumi SDK cannot share one. Pulumi's provider server
(`pulumi.provider.server`, used by the component package's tests) registers
`google.rpc.Status` from its own `pulumi/runtime/proto/status_pb2.py` (as
"google/protobuf/status.proto"), and googleapis-common-protos' `google/rpc/status_pb2.py`,
which google-api-core imports, then fails with "Couldn't build proto file into descriptor
pool: duplicate symbol 'google.rpc.Status'", in either import order.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from tests._harness import session_jobs

ROOT = Path(__file__).resolve().parents[3]
CASES = Path(__file__).with_name("budget_guard_cases.py")


def _case_names() -> list[str]:
    tree = ast.parse(CASES.read_text())
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    ]


@pytest.fixture(scope="module")
def outcomes(request) -> dict[str, str | None]:
    """Each case's failure text (None: passed), from one child run per test session, a
    background job started with the session (tests/_harness/session_jobs.py)."""
    return session_jobs.result("budget-guard-cases", request.config)


def run_cases() -> dict[str, str | None]:
    """The session job "budget-guard-cases"."""
    with tempfile.TemporaryDirectory(prefix="aistack-budget-cases-") as directory:
        return _run_cases(Path(directory) / "cases.xml")


def _run_cases(report: Path) -> dict[str, str | None]:
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(CASES.relative_to(ROOT)),
        "-q",
        "-p",
        "no:aistack",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-p",
        "no:randomly",
        "-o",
        "addopts=--import-mode=importlib",
        f"--junitxml={report}",
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    if not report.exists():
        pytest.fail(f"the cases did not run:\n{done.stdout}\n{done.stderr}")
    found: dict[str, str | None] = {}
    for case in ElementTree.parse(report).iter("testcase"):
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        found[case.get("name", "")] = None if problem is None else (problem.text or "failed")
    return found


@pytest.mark.parametrize("case", _case_names())
def test_budget_guard_function(outcomes, case):
    assert case in outcomes, f"{case} did not run"
    assert outcomes[case] is None, outcomes[case]
