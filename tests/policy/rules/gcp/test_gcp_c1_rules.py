"""GCP C1 rules: GPU capacity covered by Cloud Quotas preferences (AIS-C1-02), and
preferences that name quota ids, are contactable and keep the safety checks (AIS-C1-03)."""

import pulumi_gcp as gcp
import pytest

from aistack import gcp as aistack_gcp
from aistack.engine.graph import Resource, StackGraph
from tests.policy.rules.shared_verdicts import findings_of

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
# pulumi-gcp's compute module warns about its own misspelt deprecated names on import.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

CONFIG = {"gcp:project": "team-ml-prod", "gcp:region": "europe-west4"}
SPOT = {"provisioning_model": "SPOT", "preemptible": True, "automatic_restart": False}


def _quota(max_nodes=2, **overrides):
    apis = aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"})
    aistack_gcp.GpuQuota(
        "gpus",
        {
            "governance": GOVERNANCE,
            "contactEmail": "ml@example.com",
            "needs": [
                {
                    "pool": "train",
                    "region": "europe-west4",
                    "machineTypes": ["a3-highgpu-8g"],
                    "maxNodes": max_nodes,
                    "market": "spot",
                }
            ],
            **overrides,
        },
        services=apis,
    )


def _instance(name="trainer", scheduling=SPOT, machine="a3-highgpu-8g"):
    gcp.compute.Instance(
        name,
        machine_type=machine,
        zone="europe-west4-b",
        boot_disk={"initialize_params": {"image": "projects/p/global/images/ml-2026-01"}},
        network_interfaces=[{"network": "default"}],
        scheduling=scheduling,
    )


def _pool(name="h100", max_per_zone=1, zones=("europe-west4-b", "europe-west4-c")):
    gcp.container.NodePool(
        name,
        cluster="projects/team-ml-prod/locations/europe-west4/clusters/ml",
        location="europe-west4",
        node_locations=list(zones),
        autoscaling={"min_node_count": 0, "max_node_count": max_per_zone},
        node_config={"machine_type": "a3-highgpu-8g", "spot": True},
    )


def _verdicts(verdicts, rule_id, program):
    return verdicts(rule_id, program, **CONFIG)


def test_c1_gpu_capacity_covered_by_gpu_quota_is_compliant(verdicts):
    def program():
        _quota(max_nodes=3)
        _instance()  # 1 x 8
        _pool()  # 1 per zone x 2 zones x 8

    assert _verdicts(verdicts, "AIS-C1-02", program) == {
        "trainer": "compliant",
        "h100": "compliant",
    }


def test_c1_gpu_capacity_without_any_quota_preference_fails(verdicts):
    assert _verdicts(verdicts, "AIS-C1-02", _instance) == {"trainer": "non-compliant"}


def test_c1_capacities_sharing_a_quota_are_summed_against_it(verdicts):
    def program():
        _quota(max_nodes=2)  # 16 GPUs
        _instance()  # 8
        _pool(max_per_zone=1)  # 16: 24 together

    assert _verdicts(verdicts, "AIS-C1-02", program) == {
        "trainer": "non-compliant",
        "h100": "non-compliant",
    }


def test_c1_an_on_demand_instance_is_not_covered_by_the_spot_quota(verdicts):
    def program():
        _quota(max_nodes=2)
        _instance(scheduling={"provisioning_model": "STANDARD"})

    assert _verdicts(verdicts, "AIS-C1-02", program) == {"trainer": "non-compliant"}


def test_c1_a_regional_grant_without_the_all_regions_ceiling_fails(verdicts):
    def program():
        _quota(max_nodes=1, includeGlobalCeiling=False)
        _instance()

    assert _verdicts(verdicts, "AIS-C1-02", program) == {"trainer": "non-compliant"}


def test_c1_cpu_machines_are_not_gpu_capacity(verdicts):
    assert _verdicts(verdicts, "AIS-C1-02", lambda: _instance(machine="n2-standard-8")) == {
        "": "not-applicable"
    }


def test_c1_gpu_quota_preferences_are_well_formed(verdicts):
    found = _verdicts(verdicts, "AIS-C1-03", _quota)
    assert found and set(found.values()) == {"compliant"}


@pytest.mark.parametrize(
    "overrides",
    [
        {},  # no contact e-mail (a value at the current 0 is not an increase)
        {"contact_email": "ml@example.com", "ignore_safety_checks": "QUOTA_DECREASE_BELOW_USAGE"},
    ],
)
def test_c1_a_preference_without_email_or_ignoring_safety_checks_fails(verdicts, overrides):
    def program():
        gcp.cloudquota.SQuotaPreference(
            "raw",
            parent="projects/team-ml-prod",
            service="compute.googleapis.com",
            quota_id="NVIDIA-L4-GPUS-per-project-region",
            dimensions={"region": "europe-west4"},
            quota_config={"preferred_value": "0"},
            **overrides,
        )

    assert _verdicts(verdicts, "AIS-C1-03", program) == {"raw": "non-compliant"}


def test_c1_a_metric_name_instead_of_a_quota_id_fails():
    # The simulated API refuses the create (404), so the graph is the one a preview of a
    # real program records before the API is called.
    pref = Resource(
        type="gcp:cloudquota/sQuotaPreference:SQuotaPreference",
        name="raw",
        urn="urn:pulumi:dev::p::gcp:cloudquota/sQuotaPreference:SQuotaPreference::raw",
        parent=None,
        dependencies=(),
        inputs={
            "service": "compute.googleapis.com",
            "quotaId": "NVIDIA_L4_GPUS",
            "contactEmail": "ml@example.com",
            "quotaConfig": {"preferredValue": "4"},
        },
        outputs={},
        custom=True,
    )
    findings = findings_of("AIS-C1-03", StackGraph("dev", "p", [pref], {}))
    assert [(f.resource_name, f.status) for f in findings] == [("raw", "non-compliant")]
    assert "not a Cloud Quotas quota id" in findings[0].message


def _mig(max_replicas):
    template = gcp.compute.RegionInstanceTemplate(
        "tpl",
        region="europe-west4",
        machine_type="a3-highgpu-8g",
        disks=[{"source_image": "projects/p/global/images/ml-2026-01", "boot": True}],
        network_interfaces=[{"network": "default"}],
        scheduling=SPOT,
    )
    mig = gcp.compute.RegionInstanceGroupManager(
        "workers",
        region="europe-west4",
        base_instance_name="worker",
        target_size=0,
        versions=[{"instance_template": template.self_link}],
    )
    gcp.compute.RegionAutoscaler(
        "workers-scale",
        region="europe-west4",
        target=mig.self_link,
        autoscaling_policy={"max_replicas": max_replicas, "min_replicas": 0},
    )


@pytest.mark.parametrize(("max_replicas", "status"), [(2, "compliant"), (3, "non-compliant")])
def test_c1_a_managed_instance_group_is_sized_at_its_autoscaler_maximum(
    verdicts, max_replicas, status
):
    def program():
        _quota(max_nodes=2)
        _mig(max_replicas)

    assert _verdicts(verdicts, "AIS-C1-02", program) == {"workers": status}


@pytest.mark.parametrize(("max_nodes", "verdict"), [(3, "compliant"), (2, "non-compliant")])
def test_c1_a_need_checked_by_gpu_quota_counts_as_filed_by_the_project_s_quota_stack(
    verdicts, max_nodes, verdict
):
    # mode 'check' files nothing (another stack files the project's one preference per
    # quota and dimensions) and records the need; it covers capacity up to what it sized.
    def program():
        _quota(max_nodes=max_nodes, mode="check")
        _instance()  # 1 x 8
        _pool()  # 1 per zone x 2 zones x 8: 24 GPUs together

    assert _verdicts(verdicts, "AIS-C1-02", program) == {"trainer": verdict, "h100": verdict}
