"""Rules on serving (gcp.InferenceTier): isolation (S1), identity (C6), throttle (S3),
alerts (S5), weighted versions (S6), explicit versions (S7), request logging (G2),
approvers (G3), quality alerts (G4). Each: the component's stack complies, a hand-written
one that misses the point fails."""

import pulumi_gcp as gcp
import pytest

from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE
from tests.gcp.test_inference_tier import PROJECT, stack
from tests.policy.rules.shared_verdicts import build, verdicts_of

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("policy-rules-gcp-gcp_serving_rules")

CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
SUBNET = f"projects/{PROJECT}/regions/europe-west4/subnetworks/flat"
TRAINER = "trainer@team-ml-prod.iam.gserviceaccount.com"
TEMPLATES = {"serve-1-4-0-template": "compliant", "serve-1-3-2-template": "compliant"}


def components(**overrides):
    return stack(dict(GOVERNANCE), **overrides)


def hand_written(version="latest", labels=None, metadata=None):
    """A serving template as often written: public IP, shared account, no labels; a
    backend without Cloud Armor; a URL map with one default service; no alerts."""

    def program():
        gcp.compute.RegionInstanceTemplate(
            "legacy-train",
            region="europe-west4",
            machine_type="g2-standard-8",
            disks=[{"boot": True, "source_image": "projects/p/global/images/x"}],
            network_interfaces=[{"subnetwork": SUBNET}],
            service_account={"email": TRAINER, "scopes": ["cloud-platform"]},
        )
        gcp.compute.RegionInstanceTemplate(
            "legacy-serve",
            region="europe-west4",
            machine_type="g2-standard-8",
            disks=[{"boot": True, "source_image": "projects/p/global/images/x"}],
            network_interfaces=[{"subnetwork": SUBNET, "access_configs": [{}]}],
            service_account={"email": TRAINER, "scopes": ["cloud-platform"]},
            labels={"aistack-workload": "inference", **(labels or {})},
            metadata={"aistack-model-version": version, **(metadata or {})},
        )
        backend = gcp.compute.RegionBackendService(
            "legacy-backend", region="europe-west4", load_balancing_scheme="INTERNAL_MANAGED"
        )
        gcp.compute.RegionUrlMap("legacy-urlmap", region="europe-west4",
                                 default_service=backend.id)  # fmt: skip

    return program


@pytest.fixture(scope="module")
def components_graph():
    """The component's stack, built once for the module's compliant tests."""
    with shared(build(components(), **CONFIG)) as graph:
        yield graph


@pytest.fixture(scope="module")
def legacy_graph():
    """The hand-written serving stack as is, built once for the tests that judge it."""
    with shared(build(hand_written(), **CONFIG)) as graph:
        yield graph


def test_s1_the_tiers_vms_are_private_in_the_inference_subnet(components_graph):
    assert verdicts_of("AIS-S1-12", components_graph) == TEMPLATES


def test_s1_a_serving_vm_with_a_public_ip_in_a_flat_subnet_fails(legacy_graph):
    assert verdicts_of("AIS-S1-12", legacy_graph) == {"legacy-serve": "non-compliant"}


def test_c6_the_tier_runs_as_its_own_account(components_graph):
    assert verdicts_of("AIS-C6-18", components_graph) == TEMPLATES


def test_c6_serving_as_the_training_account_fails(legacy_graph):
    assert verdicts_of("AIS-C6-18", legacy_graph) == {"legacy-serve": "non-compliant"}


def test_s3_the_tiers_backends_are_throttled_with_429(components_graph):
    assert verdicts_of("AIS-S3-05", components_graph) == {
        "serve-1-4-0-backend": "compliant", "serve-1-3-2-backend": "compliant"
    }  # fmt: skip


def test_s3_a_managed_backend_without_cloud_armor_fails(legacy_graph):
    assert verdicts_of("AIS-S3-05", legacy_graph) == {"legacy-backend": "non-compliant"}


def test_s5_the_tier_alerts_on_p99_latency_and_5xx(components_graph):
    assert verdicts_of("AIS-S5-03", components_graph) == {"serve-urlmap": "compliant"}


def test_s5_a_weighted_url_map_without_alerts_fails(verdicts):
    def program():
        backend = gcp.compute.RegionBackendService(
            "b", region="europe-west4", load_balancing_scheme="INTERNAL_MANAGED"
        )
        gcp.compute.RegionUrlMap("bare-urlmap", region="europe-west4", default_route_action={
            "weighted_backend_services": [{"backend_service": backend.id, "weight": 100}]
        })  # fmt: skip

    assert verdicts("AIS-S5-03", program, **CONFIG) == {"bare-urlmap": "non-compliant"}


def test_s6_the_tier_weights_its_versions(components_graph):
    assert verdicts_of("AIS-S6-03", components_graph) == {"serve-urlmap": "compliant"}


def test_s6_a_single_default_service_fails(legacy_graph):
    assert verdicts_of("AIS-S6-03", legacy_graph) == {"legacy-urlmap": "non-compliant"}


def test_s7_the_tier_serves_explicit_versions(components_graph):
    assert verdicts_of("AIS-S7-04", components_graph) == TEMPLATES


def test_s7_serving_latest_fails(legacy_graph):
    assert verdicts_of("AIS-S7-04", legacy_graph) == {"legacy-serve": "non-compliant"}


def test_g2_the_tier_labels_its_logging_choice(components_graph):
    assert verdicts_of("AIS-G2-03", components_graph) == TEMPLATES


def test_g2_no_choice_or_full_without_classification_fails(verdicts, legacy_graph):
    assert verdicts_of("AIS-G2-03", legacy_graph) == {"legacy-serve": "non-compliant"}
    full = hand_written(labels={"aistack-request-logging": "full"})
    assert verdicts("AIS-G2-03", full, **CONFIG) == {"legacy-serve": "non-compliant"}


def test_g3_prod_versions_of_the_tier_carry_their_approver(verdicts):
    prod = {**GOVERNANCE, "environment": "prod"}
    versions = [{"version": "1.4.0", "weight": 100, "approvedBy": "lead@example.com"}]
    assert verdicts("AIS-G3-03", stack(prod, versions=versions), **CONFIG) == {
        "serve-1-4-0-template": "compliant"
    }


def test_g3_approved_versions_pass_outside_prod_and_unapproved_ones_are_not_judged(verdicts):
    versions = [
        {"version": "1.4.0", "weight": 100, "approvedBy": "lead@example.com"},
        {"version": "1.3.2", "weight": 0},
    ]
    assert verdicts("AIS-G3-03", stack(dict(GOVERNANCE), versions=versions), **CONFIG) == {
        "serve-1-4-0-template": "compliant"
    }


def test_g3_a_prod_version_without_an_approver_fails(verdicts):
    prod = hand_written(labels={"aistack-environment": "prod"})
    assert verdicts("AIS-G3-03", prod, **CONFIG) == {"legacy-serve": "non-compliant"}


def test_g4_the_tier_alerts_on_model_quality(components_graph):
    assert verdicts_of("AIS-G4-03", components_graph) == TEMPLATES


def test_g4_a_serving_template_without_a_quality_alert_fails(legacy_graph):
    assert verdicts_of("AIS-G4-03", legacy_graph) == {"legacy-serve": "non-compliant"}
