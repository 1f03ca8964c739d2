"""Kubernetes queue rules: C3 (a ClusterQueue's GPU quota is finite and within the pools'
maximum; stopPolicy left to the kill switch) and C5 (a namespace allowed GPUs submits
through a LocalQueue), each compliant with k8s.TrainingQueue and violated by the bare
Kueue objects a team might write instead."""

import pulumi_kubernetes as k8s
import pytest

from aistack import k8s as aistack_k8s

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
KUEUE = "kueue.x-k8s.io/v1beta2"
SPOT = {
    "name": "gpu-spot",
    "capacity": "spot",
    "nodeLabels": {"aistack.dev/pool": "gpu", "karpenter.sh/capacity-type": "spot"},
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "gpus": 8,
    "gpuResource": "nvidia.com/gpu",
}


def _team(gpus=4, tier="train"):
    return aistack_k8s.TeamNamespace(
        f"ml-{tier}", {"team": "ml", "gpus": gpus, "tier": tier, "governance": GOVERNANCE}
    )


def _queue(team, **overrides):
    aistack_k8s.TrainingQueue(
        "train", {"governance": GOVERNANCE, "namespaces": [team], "flavors": [SPOT], **overrides}
    )


def _bare_cluster_queue(gpu_quota="8", flavor="gpu-spot", selector=None, **spec):
    k8s.apiextensions.CustomResource(
        "bare-cq",
        api_version=KUEUE,
        kind="ClusterQueue",
        metadata={"name": "bare"},
        spec={
            "namespaceSelector": selector if selector is not None else {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": flavor,
                            "resources": [
                                {"name": "cpu", "nominalQuota": "64"},
                                {"name": "memory", "nominalQuota": "256Gi"},
                                {"name": "nvidia.com/gpu", "nominalQuota": gpu_quota},
                            ],
                        }
                    ],
                }
            ],
            **spec,
        },
    )


def _karpenter_pool(gpu_limit):
    k8s.apiextensions.CustomResource(
        "gpu-pool",
        api_version="karpenter.sh/v1",
        kind="NodePool",
        metadata={"name": "gpu"},
        spec={
            "template": {"metadata": {"labels": {"aistack.dev/pool": "gpu"}}, "spec": {}},
            "limits": {"cpu": "1000", "nvidia.com/gpu": gpu_limit},
        },
    )


def _bare_flavor(name="gpu-spot"):
    k8s.apiextensions.CustomResource(
        f"flavor-{name}",
        api_version=KUEUE,
        kind="ResourceFlavor",
        metadata={"name": name},
        spec={"nodeLabels": {"aistack.dev/pool": "gpu"}},
    )


# ---- C3-08: finite GPU quota within the pools' maximum ------------------------------------


def test_c3_08_a_training_queue_is_capped_at_its_pools_gpus(verdicts):
    assert verdicts("AIS-C3-08", lambda: _queue(_team())) == {"train-cluster-queue": "compliant"}


def test_c3_08_a_queue_within_its_karpenter_pools_limit_passes(verdicts):
    def program():
        _karpenter_pool("16")
        _bare_flavor()
        _bare_cluster_queue("16")

    assert verdicts("AIS-C3-08", program) == {"bare-cq": "compliant"}


@pytest.mark.parametrize(
    "program",
    [
        # ai-on-gke's DWS tutorial: nominalQuota 1000000000 # "Infinite" quota.
        lambda: _bare_cluster_queue("1000000000"),
        lambda: _bare_cluster_queue("1e12"),
        lambda: _bare_cluster_queue("lots"),
        # Above what the Karpenter pool behind the flavor may ever launch.
        lambda: (_karpenter_pool("8"), _bare_flavor(), _bare_cluster_queue("16")),
    ],
    ids=["infinite", "exponent", "not-a-number", "above-karpenter-limit"],
)
def test_c3_08_an_unbounded_or_oversized_gpu_quota_fails(verdicts, program):
    assert verdicts("AIS-C3-08", program) == {"bare-cq": "non-compliant"}


def _capacity_node_pool(capacity, gpu_limit):
    """One of aws.KarpenterGpuPool's NodePools: `gpu-<capacity>`, labelled with the pool
    and the capacity, so a Spot and an on-demand NodePool share aistack.dev/pool."""
    labels = {"aistack.dev/pool": "gpu", "aistack.dev/capacity": capacity}
    k8s.apiextensions.CustomResource(
        f"gpu-{capacity}",
        api_version="karpenter.sh/v1",
        kind="NodePool",
        metadata={"name": f"gpu-{capacity}"},
        spec={
            "template": {"metadata": {"labels": labels}, "spec": {}},
            "limits": {"cpu": "1000", "nvidia.com/gpu": gpu_limit},
        },
    )


def _capacity_flavor(capacity):
    labels = {
        "aistack.dev/pool": "gpu",
        "aistack.dev/capacity": capacity,
        "karpenter.sh/capacity-type": capacity,
    }
    k8s.apiextensions.CustomResource(
        f"flavor-gpu-{capacity}",
        api_version=KUEUE,
        kind="ResourceFlavor",
        metadata={"name": f"gpu-{capacity}"},
        spec={"nodeLabels": labels},
    )


def test_c3_08_each_flavor_is_held_to_its_own_capacitys_node_pool(verdicts):
    # Spot 8 and on-demand 2 GPUs of one pool: the Spot flavor's quota of 8 is within the
    # Spot NodePool's limit, not judged against the on-demand NodePool's 2.
    def program():
        _capacity_node_pool("spot", "8")
        _capacity_node_pool("on-demand", "2")
        _capacity_flavor("spot")
        _capacity_flavor("on-demand")
        _bare_cluster_queue("8", flavor="gpu-spot")

    assert verdicts("AIS-C3-08", program) == {"bare-cq": "compliant"}


def test_c3_08_a_flavor_above_its_capacitys_node_pool_fails(verdicts):
    def program():
        _capacity_node_pool("spot", "8")
        _capacity_node_pool("on-demand", "16")
        _capacity_flavor("spot")
        _capacity_flavor("on-demand")
        _bare_cluster_queue("16", flavor="gpu-spot")

    assert verdicts("AIS-C3-08", program) == {"bare-cq": "non-compliant"}


def test_c3_08_a_quota_above_the_flavors_declared_maximum_fails(verdicts):
    def program():
        _queue(_team())
        # The stack's own queue, edited by hand to admit more than the pool holds.
        _bare_cluster_queue("9")

    found = verdicts("AIS-C3-08", program)
    assert found == {"train-cluster-queue": "compliant", "bare-cq": "non-compliant"}


# ---- C3-09: stopPolicy left to the kill switch --------------------------------------------


@pytest.mark.parametrize("policy", [None, "HoldAndDrain"])
def test_c3_09_a_queue_leaves_stop_policy_to_the_kill_switch(verdicts, policy):
    extra = {"stopPolicy": policy} if policy else {}
    found = verdicts("AIS-C3-09", lambda: _queue(_team(), **extra))
    assert found == {"train-cluster-queue": "compliant"}


def test_c3_09_a_queue_pinning_stop_policy_none_fails(verdicts):
    found = verdicts("AIS-C3-09", lambda: _bare_cluster_queue(stopPolicy="None"))
    assert found == {"bare-cq": "non-compliant"}


# ---- C5-03: namespaces allowed GPUs submit through a LocalQueue ----------------------------


def test_c5_03_a_team_namespace_in_the_training_queue_passes(verdicts):
    assert verdicts("AIS-C5-03", lambda: _queue(_team())) == {"ml-train-namespace": "compliant"}


def test_c5_03_a_namespace_without_gpus_needs_no_queue(verdicts):
    assert verdicts("AIS-C5-03", lambda: _team(gpus=0)) == {"": "not-applicable"}


def test_c5_03_a_serving_namespace_is_not_queued(verdicts):
    # Model servers are Deployments that run until scaled, not jobs that wait their turn.
    assert verdicts("AIS-C5-03", lambda: _team(tier="serve")) == {"": "not-applicable"}


def test_c5_03_a_namespace_allowed_gpus_without_a_local_queue_fails(verdicts):
    assert verdicts("AIS-C5-03", _team) == {"ml-train-namespace": "non-compliant"}


def test_c5_03_a_local_queue_whose_cluster_queue_leaves_the_namespace_out_fails(verdicts):
    def program():
        _team()
        _bare_cluster_queue(
            selector={"matchLabels": {"kubernetes.io/metadata.name": "someone-else"}}
        )
        k8s.apiextensions.CustomResource(
            "local",
            api_version=KUEUE,
            kind="LocalQueue",
            metadata={"name": "training", "namespace": "ml-train"},
            spec={"clusterQueue": "bare"},
        )

    assert verdicts("AIS-C5-03", program) == {"ml-train-namespace": "non-compliant"}
