"""The example stacks' graphs and their scans, computed once per test session.

checkov takes about 6 s per stack (5 of them its own import), so the scans run once, in
one checkov process (scan_many), and are shared: a background job of the session computes
them while the other tests run (tests/_harness/session_jobs.py), and every xdist worker reads its
file.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from aistack import engine
from aistack.scan import Finding, SkipList, run_checkov, scan_many
from aistack.scan import checkov as checkov_module
from aistack.scan.checkov import find_checkov
from aistack.scan.runner import _scan_result
from tests._harness import previews, session_jobs
from tests.scan import gcp_programs, small_programs

ROOT = Path(__file__).resolve().parents[2]
STACKS = {
    "reference": ROOT,
    "minimal-training": ROOT / "stacks" / "minimal-training",
    "gcp-guardrails": ROOT / "stacks" / "gcp-guardrails",
    "kubernetes": ROOT / "stacks" / "kubernetes",
    "kubernetes-eks": ROOT / "stacks" / "kubernetes-eks",
    # Its objects are its namespaces' quota and policies; the charts' objects are Helm's at
    # deploy time, which neither checkov nor the schemas see.
    "kubernetes-operators": ROOT / "stacks" / "kubernetes-operators",
    "kubernetes-gke": ROOT / "stacks" / "kubernetes-gke",
    "gcp-training": ROOT / "stacks" / "gcp-training",
    "gcp": ROOT / "stacks" / "gcp",
}
#: Programs scanned in the same checkov batch, with their config: a team's first GCP stack
#: (an example stack too), one compliant and one violating resource per mapped Google type
#: (test_checkov_gcp.py), and the small programs of small_programs.py.
PROGRAMS = {
    "gcp-foundation": (gcp_programs.foundation, gcp_programs.CONFIG),
    "gcp-mappings": (gcp_programs.mappings, gcp_programs.CONFIG),
    "gcp-network": (gcp_programs.network, gcp_programs.CONFIG),
    "gcp-gke": (gcp_programs.gke, gcp_programs.CONFIG),
    "gcp-notebook": (gcp_programs.notebook, gcp_programs.CONFIG),
    "aws-plain": (small_programs.aws_bucket_and_template, small_programs.AWS_CONFIG),
    "k8s-namespaces": (small_programs.kubernetes_namespaces, {}),
    "k8s-jobset": (small_programs.kubernetes_jobset, {}),
    "gcp-mig": (small_programs.gcp_training_pool, small_programs.GCP_CONFIG),
    "gcp-serving": (small_programs.gcp_inference_tier, small_programs.GCP_CONFIG),
    # Last, so that its scan follows every other in the batch's process.
    "aws-and-k8s": (small_programs.aws_and_kubernetes, small_programs.AWS_CONFIG),
}
#: Where the shared data keeps the batch's check list, and the one `checkov --list` prints.
CHECK_LIST = "check list"
PRINTED_CHECK_LIST = "printed check list"
#: Scanned once more, each in a checkov process of its own, to prove the batch equal: one
#: program with both frameworks (Terraform plan and Kubernetes), scanned after every other
#: in the batch, where what a scan left in checkov's runners would show. One process
#: rather than one per framework: each costs about 3 s of CPU importing checkov.
ALONE = ("aws-and-k8s",)


@pytest.fixture(scope="session")
def reference_graph():
    return previews.run_project(STACKS["reference"], stack="dev")


@pytest.fixture(scope="session")
def minimal_graph():
    return previews.run_project(STACKS["minimal-training"], stack="dev")


@pytest.fixture(scope="session")
def gcp_guardrails_graph():
    return previews.run_project(STACKS["gcp-guardrails"], stack="dev")


@pytest.fixture(scope="session")
def kubernetes_graph():
    return previews.run_project(STACKS["kubernetes"], stack="dev")


@pytest.fixture(scope="session")
def kubernetes_eks_graph():
    return previews.run_project(STACKS["kubernetes-eks"], stack="dev")


@pytest.fixture(scope="session")
def kubernetes_gke_graph():
    return previews.run_project(STACKS["kubernetes-gke"], stack="dev")


@pytest.fixture(scope="session")
def gcp_foundation_graph():
    return engine.run(gcp_programs.foundation, config=gcp_programs.CONFIG)


def _record(result) -> dict:
    return {
        "summary": result.as_dict(),
        "findings": [finding.as_dict() for finding in result.findings],
        "passed": sorted(result.checkov.passed_checks) if result.checkov else [],
        "resources": result.checkov.resource_count if result.checkov else 0,
    }


def compute_scans() -> dict:
    """The session job "scans": every example stack and program in one checkov batch, and,
    beside it (checkov processes of their own, for the tests that compare), the ALONE
    programs scanned alone and the check list `checkov --list` prints."""
    graphs = {
        name: engine.run_project(directory, stack="dev") for name, directory in STACKS.items()
    }
    # The workers preview the example stacks from these runs (tests/_harness/previews.py).
    previews.publish({STACKS[name].resolve(): graphs[name] for name in STACKS})
    for name, (program, config) in PROGRAMS.items():
        graphs[name] = engine.run(program, config=config)
    executable = find_checkov()
    with ThreadPoolExecutor(max_workers=len(ALONE) + 1) as pool:
        printed = pool.submit(
            subprocess.run,
            [executable, *checkov_module._LIST_ARGUMENTS],
            capture_output=True,
            text=True,
            check=False,
        )
        scans = scan_many(list(graphs.values()), skips=None)
        results = {name: _record(result) for name, result in zip(graphs, scans, strict=True)}
        # After the batch, which printed the check list their guideline links are read
        # from: scanned before it, each would start a `checkov --list` of its own.
        alone = {name: pool.submit(run_checkov, graphs[name]) for name in ALONE}
        for name in ALONE:
            # What scan(graph, skips=None) returns, its checkov process run beside the batch.
            own = _scan_result(graphs[name], alone[name].result(), SkipList(()))
            results[f"{name} alone"] = _record(own)
        listing = printed.result().stdout
    # The check list the batch printed (checkov --list), for every worker: checked_types()
    # and the guideline links then need no checkov process of their own.
    return {
        "scans": results,
        CHECK_LIST: checkov_module._LISTINGS[executable],
        PRINTED_CHECK_LIST: listing,
    }


@dataclass(frozen=True)
class StackScan:
    summary: dict
    findings: list[Finding]
    #: (check id, resource) of every checkov check that passed.
    passed: frozenset[tuple[str, str]] = frozenset()
    #: How many resources checkov judged.
    resources: int = 0


@pytest.fixture(scope="session")
def stack_scans(request) -> dict[str, StackScan]:
    """Each example stack's and program's scan summary and every finding (skip list not
    applied), from one checkov batch; `<name> alone` for the ALONE programs' own scans."""
    data = session_jobs.result("scans", request.config)
    # This worker's check list is the batch's (see compute_scans).
    checkov_module._LISTINGS.setdefault(find_checkov(), data[CHECK_LIST])
    return {
        name: StackScan(
            item["summary"],
            [Finding(**finding) for finding in item["findings"]],
            frozenset((check, resource) for check, resource in item["passed"]),
            item["resources"],
        )
        for name, item in data["scans"].items()
    }


@pytest.fixture(scope="session")
def printed_check_list(request, stack_scans) -> str:
    """What `checkov --list` printed, in a process of its own beside the session's batch."""
    return session_jobs.result("scans", request.config)[PRINTED_CHECK_LIST]
