"""Workbench notebook rules: idle shutdown within bounds (C5), no external IP (S1), an
account of its own (C6), data in the notebook's region (D2)."""

import pulumi_gcp as gcp
import pytest

from aistack import gcp as aistack_gcp
from tests._harness.shared_graphs import shared
from tests.policy.rules.shared_verdicts import build, verdicts_of

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("policy-rules-gcp-gcp_notebook_rules")

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4", "us-central1"]}
PROJECT = "team-ml-prod"
CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
DEFAULT_SA = "123456789012-compute@developer.gserviceaccount.com"
OWN_SA = f"nb-user@{PROJECT}.iam.gserviceaccount.com"
DATASET = {"name": "imagenet", "version": "1", "source": "https://example.com", "licence": "MIT"}


def _components():
    apis = aistack_gcp.ProjectServices("apis", {"project": PROJECT})
    ids = aistack_gcp.WorkloadIdentity("ids", {"governance": GOVERNANCE}, services=apis)
    data = aistack_gcp.DatasetBucket(
        "data",
        {"kind": "dataset", "region": "europe-west4", "governance": GOVERNANCE, "dataset": DATASET},
        services=apis,
    )
    net = aistack_gcp.Network(
        "net",
        {
            "governance": GOVERNANCE,
            "region": "europe-west4",
            "trainingMachineTypes": ["g2-standard-8"],
            "notebook": True,
        },
        services=apis,
        identity=ids,
    )
    aistack_gcp.Notebook("nb", {"governance": GOVERNANCE}, services=apis, network=net, bucket=data)


@pytest.fixture(scope="module")
def components_graph():
    """The components' stack, built once for the module's compliant tests."""
    with shared(build(_components, **CONFIG)) as graph:
        yield graph


def _workbench(name, *, metadata=None, location="europe-west4-a", **setup):
    gcp.workbench.Instance(
        name,
        name=name,
        location=location,
        gce_setup={"machine_type": "e2-standard-4", "metadata": metadata, **setup},
    )


# ---- C5: idle shutdown ------------------------------------------------------------------


def test_c5_the_components_notebook_stops_after_an_hour_idle(components_graph):
    assert verdicts_of("AIS-C5-08", components_graph) == {"nb-instance": "compliant"}


def test_c5_unset_off_bounds_and_long_idle_timeouts_fail(verdicts):
    def program():
        _workbench("unset")
        _workbench("too-long", metadata={"idle-timeout-seconds": "28800"})
        _workbench("no-guest", metadata={"idle-timeout-seconds": "3600",
                                         "enable-guest-attributes": "false"})  # fmt: skip
        _workbench("fine", metadata={"idle-timeout-seconds": "1800"})

    assert verdicts("AIS-C5-08", program, **CONFIG) == {
        "unset": "non-compliant",
        "too-long": "non-compliant",
        "no-guest": "non-compliant",
        "fine": "compliant",
    }


@pytest.mark.parametrize("seconds", ["300", "90000"])
def test_c5_timeouts_workbench_does_not_offer_fail(verdicts, seconds):
    def program():
        _workbench("odd", metadata={"idle-timeout-seconds": seconds})

    assert verdicts("AIS-C5-08", program, **CONFIG) == {"odd": "non-compliant"}


# ---- S1: no external IP ------------------------------------------------------------------


def test_s1_the_components_notebook_has_no_external_ip(components_graph):
    assert verdicts_of("AIS-S1-10", components_graph) == {"nb-instance": "compliant"}


def test_s1_a_notebook_without_disable_public_ip_or_with_an_access_config_fails(verdicts):
    def program():
        _workbench("default-ip")
        _workbench(
            "static-ip",
            disable_public_ip=True,
            network_interfaces=[{"access_configs": [{"external_ip": "34.1.2.3"}]}],
        )
        _workbench("private", disable_public_ip=True)

    assert verdicts("AIS-S1-10", program, **CONFIG) == {
        "default-ip": "non-compliant",
        "static-ip": "non-compliant",
        "private": "compliant",
    }


# ---- C6: an account of its own -----------------------------------------------------------


def test_c6_the_components_notebook_runs_as_its_own_account(components_graph):
    assert verdicts_of("AIS-C6-16", components_graph) == {"nb-instance": "compliant"}


def test_c6_default_unset_or_shared_accounts_fail(verdicts):
    def program():
        _workbench("unset")
        _workbench("default", service_accounts=[{"email": DEFAULT_SA}])
        shared = f"trainer@{PROJECT}.iam.gserviceaccount.com"
        gcp.container.NodePool(
            "gpu",
            cluster=f"projects/{PROJECT}/locations/europe-west4/clusters/c",
            node_config={"machine_type": "g2-standard-8", "service_account": shared},
        )
        _workbench("shared", service_accounts=[{"email": shared}])
        _workbench("own", service_accounts=[{"email": OWN_SA}])

    assert verdicts("AIS-C6-16", program, **CONFIG) == {
        "unset": "non-compliant",
        "default": "non-compliant",
        "shared": "non-compliant",
        "own": "compliant",
    }


# ---- D2: data in the notebook's region ---------------------------------------------------


def test_d2_the_components_notebook_reads_its_own_regions_bucket(components_graph):
    assert verdicts_of("AIS-D2-02", components_graph) == {"nb-instance": "compliant"}


def test_d2_a_notebook_granted_a_bucket_in_another_region_fails(verdicts):
    def program():
        far = gcp.storage.Bucket("far", location="US-CENTRAL1")
        near = gcp.storage.Bucket("near", location="EUROPE-WEST4")
        for bucket in (far, near):
            gcp.storage.BucketIAMMember(
                f"{bucket._name}-read",
                bucket=bucket.name,
                role="roles/storage.objectViewer",
                member=f"serviceAccount:{OWN_SA}",
            )
        _workbench("nb", service_accounts=[{"email": OWN_SA}])

    assert verdicts("AIS-D2-02", program, **CONFIG) == {"nb": "non-compliant"}


def test_d2_a_notebook_reading_only_its_regions_bucket_passes(verdicts):
    def program():
        near = gcp.storage.Bucket("near", location="EUROPE-WEST4")
        gcp.storage.BucketIAMMember(
            "near-read",
            bucket=near.name,
            role="roles/storage.objectViewer",
            member=f"serviceAccount:{OWN_SA}",
        )
        _workbench("nb", service_accounts=[{"email": OWN_SA}])

    assert verdicts("AIS-D2-02", program, **CONFIG) == {"nb": "compliant"}


# ---- C4: the notebook's disks stay in the allowed regions --------------------------------


def test_c4_the_components_notebook_sits_in_an_allowed_regions_zone(components_graph):
    found = verdicts_of("AIS-C4-02", components_graph)
    assert found["nb-instance"] == "compliant"


def test_c4_a_notebook_in_a_zone_outside_the_allowed_regions_fails(verdicts):
    labels = {"aistack-allowed-regions": "europe-west4"}

    def program():
        gcp.workbench.Instance("far", name="far", location="us-east1-b", labels=labels)
        gcp.workbench.Instance("near", name="near", location="europe-west4-b", labels=labels)

    assert verdicts("AIS-C4-02", program, **CONFIG) == {
        "far": "non-compliant",
        "near": "compliant",
    }


# ---- C1: a GPU notebook needs GPU quota too ---------------------------------------------


def test_c1_a_gpu_notebook_counts_as_gpu_capacity(verdicts):
    def program():
        _workbench("gpu-nb", **{"machine_type": "g2-standard-8"})

    found = verdicts("AIS-C1-02", program, **CONFIG)
    assert found == {"gpu-nb": "non-compliant"}


def test_c1_a_gpu_notebook_with_gcp_gpu_quota_passes(verdicts):
    def program():
        apis = aistack_gcp.ProjectServices("apis", {"project": PROJECT})
        ids = aistack_gcp.WorkloadIdentity("ids", {"governance": GOVERNANCE}, services=apis)
        net = aistack_gcp.Network(
            "net",
            {"governance": GOVERNANCE, "region": "europe-west4",
             "trainingMachineTypes": ["g2-standard-8"], "notebook": True},
            services=apis, identity=ids,
        )  # fmt: skip
        nb = aistack_gcp.Notebook(
            "nb", {"governance": GOVERNANCE, "machineType": "g2-standard-8"},
            services=apis, network=net,
        )  # fmt: skip
        aistack_gcp.GpuQuota(
            "quota", {"governance": GOVERNANCE, "contactEmail": "ml@example.com"},
            services=apis, pools=[nb],
        )  # fmt: skip

    assert verdicts("AIS-C1-02", program, **CONFIG) == {"nb-instance": "compliant"}
