"""Both validators over one stack, triaged by the skip list: what `aistack scan` prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aistack.engine.graph import StackGraph
from aistack.scan import gcp_iam, iam
from aistack.scan.checkov import CheckovResult, run_checkov, run_checkov_many
from aistack.scan.findings import DEFAULT_SKIPS, Finding, SkipList, Triage

__all__ = ["ScanResult", "scan", "scan_many"]


@dataclass
class ScanResult:
    project: str
    stack: str
    checkov: CheckovResult | None
    iam_documents: int
    iam_findings: list[Finding]
    triage: Triage = field(default_factory=Triage)
    #: Google IAM grants (members, bindings, policy bindings) and custom roles checked.
    gcp_grants: int = 0
    gcp_custom_roles: int = 0
    #: Kubernetes objects checked against their schemas (built-in kinds, custom resources),
    #: the versions the built-in kinds were checked for, and what did not validate.
    k8s_builtin: int = 0
    k8s_custom: int = 0
    k8s_versions: tuple[str, ...] = ()
    schema_findings: list[Finding] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        checkov = self.checkov.findings if self.checkov else []
        return checkov + self.iam_findings + self.schema_findings

    @property
    def ok(self) -> bool:
        """No finding beyond the skip list (pending entries included)."""
        return not self.triage.failed

    def as_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "stack": self.stack,
            "ok": self.ok,
            "checkov": (
                {
                    "version": self.checkov.version,
                    "resources": self.checkov.resource_count,
                    "passed": self.checkov.passed,
                    "failed": len(self.checkov.findings),
                }
                if self.checkov
                else None
            ),
            "iam": {
                "database": iam.database_version(),
                "documents": self.iam_documents,
                "failed": len(self.iam_findings),
            },
            **(
                {
                    "gcp_iam": {
                        "database": gcp_iam.default_data().version,
                        "grants": self.gcp_grants,
                        "custom_roles": self.gcp_custom_roles,
                        "failed": sum(f.check_id.startswith("GCP_") for f in self.iam_findings),
                    }
                }
                if self.gcp_grants or self.gcp_custom_roles
                else {}
            ),
            **(
                {
                    "kubernetes": {
                        "versions": list(self.k8s_versions),
                        "builtin_objects": self.k8s_builtin,
                        "custom_resources": self.k8s_custom,
                        "failed": len(self.schema_findings),
                    }
                }
                if self.k8s_builtin or self.k8s_custom
                else {}
            ),
            **self.triage.as_dict(),
        }


def scan(
    graph: StackGraph,
    *,
    skips: SkipList | Path | str | None = DEFAULT_SKIPS,
    checkov: bool = True,
    checkov_executable: str | None = None,
) -> ScanResult:
    """checkov over the stack (a Terraform plan, and the Kubernetes objects), the IAM check
    of every policy document, and the schema check of every Kubernetes object, split by the
    skip list (None: nothing skipped)."""
    checkov_result = run_checkov(graph, checkov=checkov_executable) if checkov else None
    return _scan_result(graph, checkov_result, _skip_list(skips))


def scan_many(
    graphs: list[StackGraph],
    *,
    skips: SkipList | Path | str | None = DEFAULT_SKIPS,
    checkov_executable: str | None = None,
) -> list[ScanResult]:
    """`scan` of each graph, with checkov run once for all of them (run_checkov_many)."""
    skip_list = _skip_list(skips)
    results = run_checkov_many(graphs, checkov=checkov_executable)
    return [_scan_result(g, r, skip_list) for g, r in zip(graphs, results, strict=True)]


def _skip_list(skips: SkipList | Path | str | None) -> SkipList:
    if isinstance(skips, SkipList):
        return skips
    return SkipList.load(skips) if skips is not None else SkipList(())


def _scan_result(
    graph: StackGraph, checkov_result: CheckovResult | None, skip_list: SkipList
) -> ScanResult:
    from aistack.contracts.k8s import SUPPORTED_KUBERNETES
    from aistack.scan.kubernetes import kubernetes_documents, schema_findings

    documents = iam.policy_documents(graph)
    k8s_documents = kubernetes_documents(graph)
    iam_findings = iam.check_graph(graph) + gcp_iam.check_graph(graph)
    result = ScanResult(
        project=graph.project,
        stack=graph.stack,
        checkov=checkov_result,
        iam_documents=len(documents),
        iam_findings=iam_findings,
        gcp_grants=len(gcp_iam.role_uses(graph)),
        gcp_custom_roles=len(gcp_iam.custom_roles(graph)),
        k8s_builtin=sum(d.builtin for d in k8s_documents),
        k8s_custom=sum(not d.builtin for d in k8s_documents),
        k8s_versions=SUPPORTED_KUBERNETES if k8s_documents else (),
        schema_findings=schema_findings(k8s_documents, SUPPORTED_KUBERNETES),
    )
    result.triage = skip_list.triage(result.findings)
    return result
