"""The example stacks' graphs and their scans, computed once per test session.

checkov takes about 6 s per stack (5 of them its own import), so the scans run once and
are shared: under pytest-xdist the first worker computes them and the others read its
file (the filelock pattern pytest-xdist documents, with fcntl instead of filelock).
"""

from __future__ import annotations

import fcntl
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from aistack import engine
from aistack.scan import Finding, scan
from tests.scan import gcp_programs

ROOT = Path(__file__).resolve().parents[2]
STACKS = {
    "reference": ROOT,
    "minimal-training": ROOT / "stacks" / "minimal-training",
    "gcp-guardrails": ROOT / "stacks" / "gcp-guardrails",
}
#: Programs scanned as example stacks too: a team's first GCP stack.
PROGRAMS = {"gcp-foundation": gcp_programs.foundation, "gcp-gke": gcp_programs.gke}


@pytest.fixture(scope="session")
def reference_graph():
    return engine.run_project(STACKS["reference"], stack="dev")


@pytest.fixture(scope="session")
def minimal_graph():
    return engine.run_project(STACKS["minimal-training"], stack="dev")


@pytest.fixture(scope="session")
def gcp_guardrails_graph():
    return engine.run_project(STACKS["gcp-guardrails"], stack="dev")


@pytest.fixture(scope="session")
def gcp_foundation_graph():
    return engine.run(gcp_programs.foundation, config=gcp_programs.CONFIG)


def _compute() -> dict:
    graphs = {
        name: engine.run_project(directory, stack="dev") for name, directory in STACKS.items()
    }
    for name, program in PROGRAMS.items():
        graphs[name] = engine.run(program, config=gcp_programs.CONFIG)
    results = {}
    for name, graph in graphs.items():
        result = scan(graph, skips=None)
        results[name] = {
            "summary": result.as_dict(),
            "findings": [finding.as_dict() for finding in result.findings],
            "passed": sorted(result.checkov.passed_checks) if result.checkov else [],
        }
    return results


@dataclass(frozen=True)
class StackScan:
    summary: dict
    findings: list[Finding]
    #: (check id, resource) of every checkov check that passed.
    passed: frozenset[tuple[str, str]] = frozenset()


@pytest.fixture(scope="session")
def stack_scans(tmp_path_factory, worker_id) -> dict[str, StackScan]:
    """Each example stack's scan summary and every finding (skip list not applied)."""
    if worker_id == "master":
        data = _compute()
    else:
        shared = tmp_path_factory.getbasetemp().parent
        with open(shared / "aistack-scan.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            cache = shared / "aistack-scan.json"
            if cache.exists():
                data = json.loads(cache.read_text())
            else:
                data = _compute()
                cache.write_text(json.dumps(data))
    return {
        name: StackScan(
            item["summary"],
            [Finding(**finding) for finding in item["findings"]],
            frozenset((check, resource) for check, resource in item["passed"]),
        )
        for name, item in data.items()
    }
