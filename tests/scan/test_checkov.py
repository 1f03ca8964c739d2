"""checkov over the example stacks as Terraform plans: it can fail, it judged every
resource, and nothing fails that the skip list does not explain."""

from __future__ import annotations

import json

import pytest

from aistack.scan import SkipList, to_terraform_plan
from aistack.scan.checkov import checked_types
from aistack.scan.kubernetes import kubernetes_documents
from aistack.scan.tfplan import terraform_address_map
from tests.scan.conftest import STACKS

#: The example stacks and the GCP programs a team would write: what the skip list is for
#: (not the mapping program's deliberately bad resources, nor the small programs).
EXAMPLES = {*STACKS, "gcp-foundation", "gcp-network", "gcp-gke"}


def test_checkov_reports_an_unencrypted_bucket_and_a_hop_limit_of_two(stack_scans):
    result = stack_scans["aws-plain"]  # small_programs.aws_bucket_and_template
    failed = {(f.check_id, f.resource) for f in result.findings}
    # CKV_AWS_145: S3 bucket not encrypted with KMS; CKV_AWS_341: IMDS hop limit above 1.
    assert {("CKV_AWS_145", "plain"), ("CKV_AWS_341", "open-imds")} <= failed
    assert result.resources == 2
    # A bucket and a template with nothing else: the default skip list explains none of it.
    assert SkipList.load().triage(result.findings).failed


@pytest.mark.parametrize(
    "stack",
    ["reference", "minimal-training", "gcp-foundation", "gcp-guardrails", "kubernetes"]
    + ["kubernetes-eks", "kubernetes-gke"],
)
def test_checkov_judged_every_resource_of_the_example_stack(
    stack,
    stack_scans,
    reference_graph,
    minimal_graph,
    gcp_foundation_graph,
    gcp_guardrails_graph,
    kubernetes_graph,
    kubernetes_eks_graph,
    kubernetes_gke_graph,
):
    graph = {
        "reference": reference_graph,
        "minimal-training": minimal_graph,
        "gcp-foundation": gcp_foundation_graph,
        "gcp-guardrails": gcp_guardrails_graph,
        "kubernetes": kubernetes_graph,
        "kubernetes-eks": kubernetes_eks_graph,
        "kubernetes-gke": kubernetes_gke_graph,
    }[stack]
    summary = stack_scans[stack].summary["checkov"]
    objects = [d for d in kubernetes_documents(graph) if d.builtin]
    if objects:
        # checkov counts a Job's pod template as a resource of its own, so at least these.
        assert summary["resources"] >= len(terraform_address_map(graph)) + len(objects)
    else:
        assert summary["resources"] == len(terraform_address_map(graph))
    assert summary["passed"] > {"gcp-foundation": 10, "kubernetes": 3}.get(stack, 50)


@pytest.mark.parametrize("stack", sorted(EXAMPLES))
def test_the_example_stack_has_no_finding_the_skip_list_does_not_explain(stack, stack_scans):
    triage = SkipList.load().triage(stack_scans[stack].findings)
    assert not triage.failed, [f"{f.check_id} {f.location}: {f.title}" for f in triage.failed]


def test_every_skip_and_pending_entry_still_matches_a_finding(stack_scans):
    """A pending entry whose defect is fixed (or a renamed resource) must be deleted."""
    examples = {name: scan for name, scan in stack_scans.items() if name in EXAMPLES}
    findings = [finding for scan in examples.values() for finding in scan.findings]
    assert SkipList.load().stale(findings) == []


def test_the_ecr_encryption_false_positive_of_the_audit_is_gone(stack_scans):
    ecr = [f for f in stack_scans["reference"].findings if f.check_id == "CKV_AWS_136"]
    assert ecr == []


def test_every_emitted_terraform_type_is_one_checkov_knows(
    reference_graph, minimal_graph, stack_scans
):
    """checkov's check list names Terraform types; a type we mistranslate matches none of
    its checks and would pass silently. (stack_scans: checked_types() then reads the
    session batch's check list.)"""
    known = checked_types()
    emitted = {
        resource["type"]
        for graph in (reference_graph, minimal_graph)
        for resource in to_terraform_plan(graph)["planned_values"]["root_module"]["resources"]
    }
    assert emitted - known == set()


def test_the_plan_is_valid_json_terraform_show_format(reference_graph):
    plan = json.loads(json.dumps(to_terraform_plan(reference_graph)))
    assert plan["format_version"].startswith("1.")
    for resource in plan["planned_values"]["root_module"]["resources"]:
        assert resource["mode"] == "managed"
        assert resource["address"] == f"{resource['type']}.{resource['name']}"
        assert resource["provider_name"] == "registry.terraform.io/hashicorp/aws"
