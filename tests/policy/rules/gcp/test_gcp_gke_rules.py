"""GKE rules: GPU pools scale to zero (C5), metadata server and Workload Identity (C6),
local SSD caches (D3), node lifetime (T5), NetworkPolicy enforcement (S1)."""

import pulumi_gcp as gcp
import pytest

from aistack import gcp as aistack_gcp
from tests._harness.shared_graphs import shared
from tests.policy.rules.shared_verdicts import build, verdicts_of

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("policy-rules-gcp-gcp_gke_rules")

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
PROJECT = "team-ml-prod"
CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
NETWORK = {
    "network": f"projects/{PROJECT}/global/networks/ml",
    "subnetwork": f"projects/{PROJECT}/regions/europe-west4/subnetworks/train",
    "podsRangeName": "pods",
    "servicesRangeName": "services",
}
DEFAULT_SA = "123456789012-compute@developer.gserviceaccount.com"
CLUSTER_ID = f"projects/{PROJECT}/locations/europe-west4/clusters/legacy"


def _components():
    apis = aistack_gcp.ProjectServices("apis", {"project": PROJECT})
    cluster = aistack_gcp.GkeCluster(
        "train", {"region": "europe-west4", "governance": GOVERNANCE, **NETWORK}, services=apis
    )
    aistack_gcp.GpuNodePool(
        "l4",
        {"governance": GOVERNANCE, "machineType": "g2-standard-8", "maxNodes": 2},
        cluster=cluster,
    )


@pytest.fixture(scope="module")
def components_graph():
    """The components' stack, built once for the module's compliant tests."""
    with shared(build(_components, **CONFIG)) as graph:
        yield graph


def _legacy_pool(**node_config):
    """A GPU pool as teams often write it: fixed size, default account, GCE metadata."""
    gcp.container.NodePool(
        "legacy-gpu",
        cluster=CLUSTER_ID,
        location="europe-west4",
        node_count=1,
        node_config={"machine_type": "g2-standard-8", **node_config},
    )


def test_c5_the_components_gpu_pool_scales_to_zero(components_graph):
    assert verdicts_of("AIS-C5-07", components_graph) == {"l4-pool": "compliant"}


def test_c5_a_fixed_size_or_a_nonzero_minimum_gpu_pool_fails(verdicts):
    def program():
        _legacy_pool()
        gcp.container.NodePool(
            "warm-gpu",
            cluster=CLUSTER_ID,
            autoscaling={"total_min_node_count": 1, "total_max_node_count": 4},
            node_config={"machine_type": "a2-highgpu-1g"},
        )
        gcp.container.NodePool(
            "uncapped-gpu",
            cluster=CLUSTER_ID,
            autoscaling={"total_min_node_count": 0},
            node_config={"machine_type": "g2-standard-8"},
        )
        # Not a GPU pool: not judged.
        gcp.container.NodePool("cpu", cluster=CLUSTER_ID, node_count=1,
                               node_config={"machine_type": "e2-standard-4"})  # fmt: skip

    assert verdicts("AIS-C5-07", program, **CONFIG) == {
        "legacy-gpu": "non-compliant",
        "warm-gpu": "non-compliant",
        "uncapped-gpu": "non-compliant",
    }


def test_c6_the_components_nodes_use_the_gke_metadata_server_and_their_account(components_graph):
    assert verdicts_of("AIS-C6-14", components_graph) == {
        "train-cluster": "compliant",
        "train-system": "compliant",
        "l4-pool": "compliant",
    }


def test_c6_the_gce_metadata_server_or_the_default_account_fails(verdicts):
    def program():
        _legacy_pool(
            service_account="trainer@team-ml-prod.iam.gserviceaccount.com",
            workload_metadata_config={"mode": "GCE_METADATA"},
        )
        gcp.container.NodePool(
            "default-account",
            cluster=CLUSTER_ID,
            node_config={
                "machine_type": "e2-standard-4",
                "service_account": DEFAULT_SA,
                "workload_metadata_config": {"mode": "GKE_METADATA"},
            },
        )
        gcp.container.NodePool(
            "no-account",
            cluster=CLUSTER_ID,
            node_config={"workload_metadata_config": {"mode": "GKE_METADATA"}},
        )

    assert verdicts("AIS-C6-14", program, **CONFIG) == {
        "legacy-gpu": "non-compliant",
        "default-account": "non-compliant",
        "no-account": "non-compliant",
    }


def test_c6_the_components_cluster_enables_workload_identity(components_graph):
    assert verdicts_of("AIS-C6-15", components_graph) == {"train-cluster": "compliant"}


def test_c6_a_cluster_without_workload_identity_fails(verdicts):
    def program():
        gcp.container.Cluster("legacy", location="europe-west4", initial_node_count=1)

    assert verdicts("AIS-C6-15", program, **CONFIG) == {"legacy": "non-compliant"}


def test_d3_the_components_gpu_pool_caches_on_local_ssd(components_graph):
    assert verdicts_of("AIS-D3-04", components_graph) == {"l4-pool": "compliant"}


def test_d3_a_gpu_pool_on_the_boot_disk_or_hostpath_ssds_fails(verdicts):
    def program():
        _legacy_pool()
        # Legacy local SSDs are raw hostPath disks, not the pods' ephemeral storage.
        gcp.container.NodePool("hostpath-gpu", cluster=CLUSTER_ID,
                               node_config={"machine_type": "g2-standard-8",
                                            "local_ssd_count": 1})  # fmt: skip

    assert verdicts("AIS-D3-04", program, **CONFIG) == {
        "legacy-gpu": "non-compliant",
        "hostpath-gpu": "non-compliant",
    }


def test_t5_the_components_gpu_nodes_have_a_maximum_lifetime(components_graph):
    assert verdicts_of("AIS-T5-03", components_graph) == {"l4-pool": "compliant"}


def test_t5_a_gpu_pool_without_max_run_duration_fails(verdicts):
    def program():
        _legacy_pool()
        gcp.container.NodePool("zero-gpu", cluster=CLUSTER_ID,
                               node_config={"machine_type": "g2-standard-8",
                                            "max_run_duration": "0s"})  # fmt: skip

    assert verdicts("AIS-T5-03", program, **CONFIG) == {
        "legacy-gpu": "non-compliant",
        "zero-gpu": "non-compliant",
    }


def test_t5_a_serving_pool_lives_on_and_a_time_boxed_one_fails(verdicts):
    """Serving nodes created together would end together, and the model's every replica
    with them (../shared/research/k8s-fidelity-audit.md, defect 12)."""
    serving = {"aistack-workload": "serving"}

    def program():
        gcp.container.NodePool(
            "serve-gpu",
            cluster=CLUSTER_ID,
            node_config={"machine_type": "g2-standard-8", "resource_labels": serving},
        )
        gcp.container.NodePool("boxed-serve-gpu", cluster=CLUSTER_ID,
                               node_config={"machine_type": "g2-standard-8",
                                            "resource_labels": serving,
                                            "max_run_duration": "86400s"})  # fmt: skip

    assert verdicts("AIS-T5-03", program, **CONFIG) == {
        "serve-gpu": "compliant",
        "boxed-serve-gpu": "non-compliant",
    }


def test_s1_the_components_cluster_enforces_network_policy(components_graph):
    assert verdicts_of("AIS-S1-06", components_graph) == {"train-cluster": "compliant"}


def test_s1_a_cluster_without_an_enforcing_dataplane_fails_and_calico_passes(verdicts):
    def program():
        gcp.container.Cluster("legacy", location="europe-west4", initial_node_count=1)
        gcp.container.Cluster(
            "calico",
            location="europe-west4",
            initial_node_count=1,
            network_policy={"enabled": True, "provider": "CALICO"},
        )

    assert verdicts("AIS-S1-06", program, **CONFIG) == {
        "legacy": "non-compliant",
        "calico": "compliant",
    }


def test_c4_the_cluster_and_its_pools_declare_residency_in_their_resource_labels(components_graph):
    assert verdicts_of("AIS-C4-02", components_graph) == {
        "train-cluster": "compliant",
        "train-system": "compliant",
        "l4-pool": "compliant",
        "train-logs": "compliant",  # the cluster's log bucket, in its region
        "train-logs-keyring": "compliant",  # and the key it is encrypted with
        "train-logs-key": "compliant",
        "train-secrets-keyring": "compliant",  # the key Kubernetes Secrets are sealed with
        "train-secrets-key": "compliant",
        "train-nodes-disks-keyring": "compliant",  # and the nodes' boot disks' key
        "train-nodes-disks-key": "compliant",
    }


def test_c4_a_cluster_without_residency_labels_fails(verdicts):
    def program():
        gcp.container.Cluster("legacy", location="europe-west4", initial_node_count=1,
                              resource_labels={"team": "ml"})  # fmt: skip

    assert verdicts("AIS-C4-02", program, **CONFIG) == {"legacy": "non-compliant"}


# ---- T6: the cluster's logs kept in its region -------------------------------------------


def test_t6_04_the_cluster_s_logs_go_to_a_regional_bucket_that_keeps_them(components_graph):
    assert verdicts_of("AIS-T6-04", components_graph) == {"train-cluster": "compliant"}


def test_t6_04_a_cluster_whose_logs_stay_in_default_or_a_short_global_bucket_fails(verdicts):
    def program():
        gcp.container.Cluster("bare", name="bare", location="europe-west4")
        gcp.container.Cluster("short", name="short", location="europe-west4")
        gcp.logging.ProjectBucketConfig(
            "short-logs",
            project=PROJECT,
            bucket_id="short-logs",
            location="global",
            retention_days=7,
        )
        gcp.logging.ProjectSink(
            "short-sink",
            destination=f"logging.googleapis.com/projects/{PROJECT}/locations/global/buckets/short-logs",
            filter='resource.type="k8s_container" AND resource.labels.cluster_name="short"',
        )

    assert verdicts("AIS-T6-04", program, **CONFIG) == {
        "bare": "non-compliant",
        "short": "non-compliant",
    }
