"""checkov's CKV_GCP checks over Google resources converted to a Terraform plan.

Each mapped type is registered compliant (`ok-*`) and violating (`bad-*`) in
tests/scan/gcp_programs.py; one real checkov run judges them all. A check that cannot read
its attribute (a wrong type, a Pulumi name Terraform does not use, a block written as an
object) reports neither, so each row asserts the check PASSED on one and FAILED on the
other. The attribute each check reads is in checkov's source,
checkov/terraform/checks/resource/gcp/<file> (checkov 3.3.30, tools/checkov/uv.lock).
"""

from __future__ import annotations

import pytest

from aistack import engine
from aistack.scan import to_terraform_plan
from aistack.scan.checkov import checked_types
from tests.scan import gcp_programs


@pytest.fixture(scope="module")
def mappings_graph():
    return engine.run(gcp_programs.mappings, config=gcp_programs.CONFIG)


@pytest.fixture(scope="module")
def mappings_result(stack_scans):
    """The program's checkov result, from the session's one checkov batch (conftest)."""
    return stack_scans["gcp-mappings"]


# (check id, resource suffix, what the check reads in the Terraform plan)
CHECKS = [
    ("CKV_GCP_29", "bucket", "google_storage_bucket.uniform_bucket_level_access"),
    ("CKV_GCP_114", "bucket", "google_storage_bucket.public_access_prevention"),
    ("CKV_GCP_78", "bucket", "google_storage_bucket.versioning[0].enabled (a block)"),
    ("CKV_GCP_62", "bucket", "google_storage_bucket.logging[0].log_bucket (a name reference)"),
    ("CKV_GCP_28", "bucket-reader", "google_storage_bucket_iam_member.member"),
    ("CKV_GCP_43", "key", "google_kms_crypto_key.rotation_period"),
    ("CKV_GCP_112", "key-user", "google_kms_crypto_key_iam_member.member"),
    # A graph check: it follows the member's crypto_key_id reference to the key.
    ("CKV2_GCP_6", "key", "google_kms_crypto_key <- google_kms_crypto_key_iam_member"),
    ("CKV_GCP_83", "topic", "google_pubsub_topic.kms_key_name (an id reference)"),
    ("CKV_GCP_99", "topic-publisher", "google_pubsub_topic_iam_member.member"),
    ("CKV_GCP_84", "repository", "google_artifact_registry_repository.kms_key_name"),
    ("CKV_GCP_101", "repository-reader", "google_artifact_registry_repository_iam_member"),
    ("CKV_GCP_117", "project-member", "google_project_iam_member.role (basic roles)"),
    ("CKV_GCP_118", "oidc", "google_iam_workload_identity_pool_provider.attribute_condition"),
    ("CKV_GCP_125", "github", "the provider's oidc[0].issuer_uri and attribute_condition"),
    ("CKV_GCP_124", "function", "google_cloudfunctions2_function.service_config[0]"),
    ("CKV_GCP_107", "function-invoker", "google_cloudfunctions2_function_iam_member.member"),
    ("CKV_GCP_74", "subnet", "google_compute_subnetwork.private_ip_google_access"),
    ("CKV_GCP_26", "subnet", "google_compute_subnetwork.log_config"),
    ("CKV_GCP_2", "firewall", "google_compute_firewall.allow[] (Pulumi: allows)"),
    ("CKV_GCP_39", "template", "google_compute_instance_template.shielded_instance_config"),
    ("CKV_GCP_40", "template", "network_interface[0].access_config (Pulumi: plurals)"),
    ("CKV_GCP_32", "template", "google_compute_instance_template.metadata (a map)"),
    ("CKV_GCP_64", "cluster", "google_container_cluster.private_cluster_config"),
    ("CKV_GCP_10", "pool-gpu", "google_container_node_pool.management[0].auto_upgrade"),
    ("CKV_GCP_69", "pool-gpu", "node_config[0].workload_metadata_config[0].mode"),
]


@pytest.mark.parametrize(
    ("check", "suffix", "reads"), CHECKS, ids=[f"{c}-{s}" for c, s, _ in CHECKS]
)
def test_the_check_passes_on_the_compliant_resource_and_fails_on_the_violating_one(
    mappings_result, check, suffix, reads
):
    failed = {(f.check_id, f.resource) for f in mappings_result.findings}
    assert (check, f"ok-{suffix}") in mappings_result.passed, reads
    assert (check, f"bad-{suffix}") in failed, reads
    assert (check, f"ok-{suffix}") not in failed


def test_every_google_resource_of_the_program_reached_checkov(mappings_graph, mappings_result):
    custom = [r for r in mappings_graph.resources if r.custom and r.type.startswith("gcp:")]
    assert mappings_result.resources == len(custom)


def test_emitted_google_types_that_checkov_checks_are_the_ones_it_names(
    mappings_graph, stack_scans
):
    """Types checkov has checks for must match its names exactly; the rest (budgets,
    quota preferences, routers, ...) no check reads, so only the bridge metadata vouches
    for them (test_tfplan_gcp.py). (stack_scans: checked_types() then reads the session
    batch's check list.)"""
    emitted = {
        r["type"]
        for r in to_terraform_plan(mappings_graph)["planned_values"]["root_module"]["resources"]
    }
    known = checked_types()
    expected_known = {
        "google_storage_bucket",
        "google_storage_bucket_iam_member",
        "google_kms_crypto_key",
        "google_kms_crypto_key_iam_member",
        "google_pubsub_topic",
        "google_pubsub_topic_iam_member",
        "google_artifact_registry_repository",
        "google_artifact_registry_repository_iam_member",
        "google_project_iam_member",
        "google_iam_workload_identity_pool_provider",
        "google_cloudfunctions2_function",
        "google_cloudfunctions2_function_iam_member",
        "google_compute_network",
        "google_compute_subnetwork",
        "google_compute_firewall",
        "google_compute_instance_template",
        "google_container_cluster",
        "google_container_node_pool",
    }
    assert expected_known <= emitted & known


def test_the_dataset_bucket_component_passes_the_storage_checks(stack_scans):
    """The real component, not a hand-written bucket: D1 versioning, never public, uniform
    access, usage logs to the logs bucket (not to itself), a 90-day key rotation."""
    passed = stack_scans["gcp-foundation"].passed
    for check in ("CKV_GCP_29", "CKV_GCP_114", "CKV_GCP_78", "CKV_GCP_62", "CKV_GCP_63"):
        assert (check, "data-bucket") in passed, check
    for check in ("CKV_GCP_29", "CKV_GCP_114", "CKV_GCP_78"):
        assert (check, "logs-bucket") in passed, check
    assert ("CKV_GCP_43", "data-key") in passed
    assert ("CKV_GCP_28", "data-read-trainer") in passed


def test_the_logs_bucket_access_log_finding_is_the_only_one_and_skipped(stack_scans):
    findings = stack_scans["gcp-foundation"].findings
    assert [(f.check_id, f.resource) for f in findings if f.tool == "checkov"] == [
        ("CKV_GCP_62", "logs-bucket")
    ]


FIREWALL_CHECKS = (
    "CKV_GCP_2",
    "CKV_GCP_3",
    "CKV_GCP_75",
    "CKV_GCP_77",
    "CKV_GCP_88",
    "CKV_GCP_106",
)
SUBNET_CHECKS = ("CKV_GCP_26", "CKV_GCP_74")


def test_the_network_component_passes_the_firewall_and_subnet_checks(stack_scans):
    """gcp.Network with NAT, a proxy-only subnet and IAP SSH: every firewall rule passes the
    unrestricted-ingress checks, every tier subnet the flow-log and Private Google Access
    checks, and nothing fails (no skip needed). CKV_GCP_76 (IPv6 Private Google Access)
    reads only IPV4_IPV6 subnets and reports nothing on these IPv4-only ones; the proxy-only
    subnet is outside CKV_GCP_26/74 by purpose (checkov's PURPOSE_EXCEPTIONS)."""
    scan = stack_scans["gcp-network"]
    assert [f for f in scan.findings if f.tool == "checkov"] == []
    rules = {r for c, r in scan.passed if c == "CKV_GCP_2"}
    assert {"net-training-ingress", "net-iap-ssh", "net-health-checks"} <= rules
    for check in FIREWALL_CHECKS:
        assert {r for c, r in scan.passed if c == check} == rules, check
    for check in SUBNET_CHECKS:
        assert {r for c, r in scan.passed if c == check} == {
            "net-training",
            "net-inference",
            "net-notebook",
        }, check
    assert not {r for c, r in scan.passed if c == "CKV_GCP_76"}


def test_the_gke_components_pass_checkovs_cluster_and_node_pool_checks(stack_scans):
    """The real GkeCluster and GpuNodePool: private nodes and endpoint, authorized
    networks, Dataplane V2 network policy, release channel, shielded and secure-boot
    nodes, the GKE metadata server, auto-repair and auto-upgrade, labels."""
    passed = stack_scans["gcp-gke"].passed
    for check in ("CKV_GCP_7", "CKV_GCP_12", "CKV_GCP_13", "CKV_GCP_18", "CKV_GCP_20",
                  "CKV_GCP_21", "CKV_GCP_23", "CKV_GCP_25", "CKV_GCP_61", "CKV_GCP_64",
                  "CKV_GCP_66", "CKV_GCP_68", "CKV_GCP_69", "CKV_GCP_70", "CKV_GCP_71",
                  "CKV_GCP_72"):  # fmt: skip
        assert (check, "train-cluster") in passed, check
    for pool in ("train-system", "l4-spot-pool"):
        for check in ("CKV_GCP_9", "CKV_GCP_10", "CKV_GCP_68", "CKV_GCP_69", "CKV_GCP_72"):
            assert (check, pool) in passed, (check, pool)


def test_the_gke_programs_only_checkov_finding_is_google_groups_rbac(stack_scans):
    findings = stack_scans["gcp-gke"].findings
    assert [(f.check_id, f.resource) for f in findings if f.tool == "checkov"] == [
        ("CKV_GCP_65", "train-cluster")
    ]


def test_the_mig_training_pool_has_no_checkov_finding_the_skip_list_does_not_explain(
    stack_scans,
):
    """gcp.TrainingPool's program (tests/scan/small_programs.py gcp_training_pool): checkov
    judges every resource, and its one finding is the logs bucket's own access logging,
    which the skip list explains (a logs bucket logging into itself would loop). checkov
    3.3.30 has no check on google_compute_region_instance_template (CKV_GCP_32/39/40 read
    google_compute_instance_template only): aistack's rules AIS-C6-17, AIS-T5-04 and
    AIS-D3-05 judge the template instead."""
    from aistack.scan import SkipList

    scan = stack_scans["gcp-mig"]
    assert not SkipList.load().triage(scan.findings).failed
    assert [(f.check_id, f.resource) for f in scan.findings if f.tool == "checkov"] == [
        ("CKV_GCP_62", "logs-bucket")
    ]
    # The pool's project grants are no broad roles, no service-account user or token creator.
    for grant in ("train-logwriter", "train-metricwriter", "train-watchdog-grant"):
        for check in ("CKV_GCP_41", "CKV_GCP_49", "CKV_GCP_117"):
            assert (check, grant) in scan.passed, (check, grant)
    assert ("CKV2_GCP_4", "train-log-sink") in scan.passed


def test_the_inference_tier_has_no_checkov_finding_the_skip_list_does_not_explain(stack_scans):
    """gcp.InferenceTier's program (tests/scan/small_programs.py gcp_inference_tier):
    checkov judges every resource; its one finding is the logs bucket's own access logging,
    which the skip list explains. checkov has no check on the regional load balancer
    resources, the regional security policy or the region instance template; aistack's
    rules AIS-S1-12, S3-05, S5-03, S6-03 and C6-18 judge them instead."""
    from aistack.scan import SkipList

    scan = stack_scans["gcp-serving"]
    assert not SkipList.load().triage(scan.findings).failed
    assert [(f.check_id, f.resource) for f in scan.findings if f.tool == "checkov"] == [
        ("CKV_GCP_62", "logs-bucket")
    ]
    for grant in ("serve-logwriter", "serve-metricwriter"):
        for check in ("CKV_GCP_41", "CKV_GCP_49", "CKV_GCP_117"):
            assert (check, grant) in scan.passed, (check, grant)
    assert ("CKV2_GCP_4", "serve-log-sink") in scan.passed
