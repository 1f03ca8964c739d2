"""gcp.GpuNodePool: 0 to N GPU nodes on Spot, on-demand or flex-start, tainted, NVMe, bounded."""

import pytest

from aistack import gcp
from aistack.engine.gcp_cloud import SimulatedGcpError, missing_api_dependencies
from aistack.errors import ConfigError
from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE, run_stack
from tests.gcp.test_gke_cluster import PROJECT, cluster_args

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("gcp-gpu_node_pool")


def stack(governance, pool=None, seen=None, **overrides):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        cluster = gcp.GkeCluster("train", cluster_args(governance), services=apis)
        args = {"governance": governance, "machineType": "g2-standard-8", "maxNodes": 4}
        made = gcp.GpuNodePool(pool or "l4", {**args, **overrides}, cluster=cluster)
        if seen is not None:
            seen["pool"] = made
            seen["cluster"] = cluster

    return program


@pytest.fixture(scope="module")
def default_graph():
    """The default Spot L4 pool on its cluster, built once for the module's tests that read
    it."""
    with shared(run_stack(stack(dict(GOVERNANCE)))) as graph:
        yield graph


@pytest.fixture(scope="module")
def on_demand_build():
    """The pool on on-demand capacity and its component (`seen`), built once for the two
    tests that read it (`seen` records the component; it does not change the program)."""
    seen: dict = {}
    with shared(run_stack(stack(dict(GOVERNANCE), seen=seen, market="on-demand"))) as graph:
        yield graph, seen


@pytest.fixture
def default_pool(default_graph):
    return default_graph.named("l4-pool")


def node_pool(run, governance, **overrides):
    return run(stack(governance, **overrides)).named("l4-pool")


def test_the_pool_scales_from_zero_to_its_explicit_maximum(default_pool):
    pool = default_pool
    assert pool.inputs["initialNodeCount"] == 0
    assert pool.inputs["autoscaling"] == {
        "totalMinNodeCount": 0,
        "totalMaxNodeCount": 4,
        "locationPolicy": "ANY",
    }


def test_a_max_is_required(run, governance):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        cluster = gcp.GkeCluster("train", cluster_args(governance), services=apis)
        gcp.GpuNodePool("l4", {"governance": governance, "machineType": "g2-standard-8"},
                        cluster=cluster)  # fmt: skip

    with pytest.raises(ConfigError) as error:
        run(program)
    assert "l4.maxNodes" in str(error.value)


def test_spot_nodes_carry_the_gpu_and_spot_taints_and_the_contract_labels(default_pool):
    pool = default_pool
    config = pool.inputs["nodeConfig"]
    assert config["spot"] is True
    assert config["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
        {"key": "cloud.google.com/gke-spot", "value": "true", "effect": "NO_SCHEDULE"},
    ]
    assert config["labels"] == {"aistack.dev/pool": "l4", "aistack.dev/capacity": "spot"}


def test_on_demand_nodes_carry_only_the_gpu_taint_and_balance_zones(on_demand_build):
    pool = on_demand_build[0].named("l4-pool")
    config = pool.inputs["nodeConfig"]
    assert config["spot"] is False
    assert [t["key"] for t in config["taints"]] == ["nvidia.com/gpu"]
    assert config["labels"]["aistack.dev/capacity"] == "on-demand"
    assert pool.inputs["autoscaling"]["locationPolicy"] == "BALANCED"


def test_the_gpus_are_declared_with_the_driver_gke_installs(default_pool):
    config = default_pool.inputs["nodeConfig"]
    assert config["guestAccelerators"] == [
        {
            "type": "nvidia-l4",
            "count": 1,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
        }
    ]


def test_h100_nodes_take_their_eight_gpus_and_sixteen_bundled_local_ssds(run, governance):
    config = node_pool(run, governance, machineType="a3-highgpu-8g").inputs["nodeConfig"]
    assert config["guestAccelerators"][0]["type"] == "nvidia-h100-80gb"
    assert config["guestAccelerators"][0]["count"] == 8
    assert config["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 16}


def test_local_ssd_backs_ephemeral_storage_by_default(default_pool):
    config = default_pool.inputs["nodeConfig"]
    # g2-standard-8 attaches exactly one local SSD (Compute Engine's valid counts).
    assert config["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 1}
    assert "localSsdCount" not in config  # the legacy hostPath disks are not a pod cache


def test_a_local_ssd_count_the_machine_cannot_attach_is_refused(run, governance):
    with pytest.raises(ConfigError) as error:
        run(stack(governance, localSsds=3))
    assert "l4.localSsds" in str(error.value)
    with pytest.raises(ConfigError) as error:
        run(stack(governance, machineType="a3-highgpu-8g", localSsds=2))
    assert "bundled" in str(error.value)


def test_the_simulated_gke_refuses_a_wrong_count_on_a_bundled_machine(run):
    import pulumi_gcp

    def program():
        pulumi_gcp.container.NodePool(
            "p",
            cluster="projects/p/locations/europe-west4/clusters/c",
            node_config={
                "machine_type": "a3-highgpu-8g",
                "ephemeral_storage_local_ssd_config": {"local_ssd_count": 4},
            },
        )

    with pytest.raises(SimulatedGcpError, match="16 local SSDs"):
        run(program)


def test_nodes_live_at_most_max_node_hours(run, governance, default_pool):
    assert default_pool.inputs["nodeConfig"]["maxRunDuration"] == "86400s"
    pool = node_pool(run, governance, maxNodeHours=1.5)
    assert pool.inputs["nodeConfig"]["maxRunDuration"] == "5400s"


def test_a_serving_pool_is_labelled_serving_and_its_nodes_live_on(run, governance, default_pool):
    """Serving nodes created together would all end after maxNodeHours, every replica with
    them; the label keeps the budget kill switch (which stops training pools) away."""
    assert default_pool.inputs["nodeConfig"]["resourceLabels"]["aistack-workload"] == "training"
    serving = node_pool(run, governance, workload="serving", market="on-demand")
    assert serving.inputs["nodeConfig"]["resourceLabels"]["aistack-workload"] == "serving"
    assert "maxRunDuration" not in serving.inputs["nodeConfig"]
    boxed = node_pool(run, governance, workload="serving", market="on-demand", maxNodeHours=48)
    assert boxed.inputs["nodeConfig"]["maxRunDuration"] == "172800s"


def test_nodes_are_shielded_run_the_gke_metadata_server_and_the_clusters_account(default_graph):
    graph = default_graph
    config = graph.named("l4-pool").inputs["nodeConfig"]
    assert config["shieldedInstanceConfig"] == {
        "enableSecureBoot": True,
        "enableIntegrityMonitoring": True,
    }
    assert config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert config["serviceAccount"] == graph.named("train-nodes").outputs["email"]
    assert config["imageType"] == "COS_CONTAINERD"
    assert graph.named("l4-pool").inputs["management"] == {
        "autoRepair": True,
        "autoUpgrade": True,
    }


def test_the_pool_runs_only_in_zones_offering_the_machine(run, governance, default_pool):
    pool = default_pool
    assert pool.inputs["nodeLocations"] == [
        "europe-west4-a",
        "europe-west4-b",
        "europe-west4-c",
    ]
    with pytest.raises(ConfigError) as error:
        run(stack(governance, zones=["europe-west4-z"]))
    assert "l4.zones.0" in str(error.value)


def test_a_machine_not_offered_in_the_clusters_region_is_refused(run, governance):
    # The catalog offers A3 Mega in us-east5 but no G2 there.
    governance = {**governance, "allowedRegions": ["us-east5"]}

    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        cluster = gcp.GkeCluster(
            "train", cluster_args(governance, region="us-east5"), services=apis
        )
        args = {"governance": governance, "machineType": "g2-standard-8", "maxNodes": 1}
        gcp.GpuNodePool("l4", args, cluster=cluster)

    with pytest.raises(ConfigError) as error:
        run(program)
    assert "l4.machineType" in str(error.value)


def test_a3_partial_shapes_are_not_sold_on_demand(run, governance):
    with pytest.raises(ConfigError) as error:
        run(stack(governance, machineType="a3-highgpu-4g", market="on-demand"))
    assert "l4.market" in str(error.value)


def test_flex_start_pools_start_empty_skip_reservations_and_repair(run, governance):
    pool = node_pool(run, governance, market="flex-start", queuedProvisioning=True)
    config = pool.inputs["nodeConfig"]
    assert config["flexStart"] is True
    assert config["spot"] is False
    assert config["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert pool.inputs["management"]["autoRepair"] is False
    assert pool.inputs["autoscaling"]["locationPolicy"] == "ANY"
    assert pool.inputs["queuedProvisioning"] == {"enabled": True}
    assert [t["key"] for t in config["taints"]] == ["nvidia.com/gpu"]


def test_flex_start_nodes_live_at_most_seven_days(run, governance):
    with pytest.raises(ConfigError) as error:
        run(stack(governance, market="flex-start", maxNodeHours=200))
    assert "168" in str(error.value)


def test_queued_provisioning_needs_flex_start(run, governance):
    with pytest.raises(ConfigError) as error:
        run(stack(governance, queuedProvisioning=True))
    assert "flex-start" in str(error.value)


def test_the_simulated_gke_refuses_spot_with_queued_provisioning(run):
    import pulumi_gcp

    def program():
        pulumi_gcp.container.NodePool(
            "p",
            cluster="projects/p/locations/europe-west4/clusters/c",
            queued_provisioning={"enabled": True},
            node_config={"machine_type": "g2-standard-8", "spot": True},
        )

    with pytest.raises(SimulatedGcpError, match="Spot"):
        run(program)


def test_kueue_flavors_follow_the_queue_pool_contract(run, governance):
    seen = {}
    run(stack(governance, seen=seen, machineType="g2-standard-48", maxNodes=3))
    assert seen["pool"].kueue_flavors() == [
        {
            "name": "l4-spot",
            "capacity": "spot",
            "nodeLabels": {
                "aistack.dev/pool": "l4",
                "aistack.dev/capacity": "spot",
                "cloud.google.com/gke-spot": "true",
            },
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                {
                    "key": "cloud.google.com/gke-spot",
                    "operator": "Equal",
                    "value": "true",
                    "effect": "NoSchedule",
                },
            ],
            "gpus": 12,  # 3 nodes x 4 L4
            "gpuResource": "nvidia.com/gpu",
            "ephemeralStorage": "4500G",  # 3 nodes x 4 local SSDs x 375 GB
        }
    ]


def test_the_flavor_selects_exactly_the_labels_the_nodes_carry(on_demand_build):
    graph, seen = on_demand_build
    labels = graph.named("l4-pool").inputs["nodeConfig"]["labels"]
    (flavor,) = seen["pool"].kueue_flavors()
    assert flavor["name"] == "l4-on-demand"
    assert flavor["nodeLabels"].items() <= labels.items()
    assert flavor["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_quota_needs_size_gpu_quota_from_the_maximum(run, governance):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        cluster = gcp.GkeCluster("train", cluster_args(governance), services=apis)
        pool = gcp.GpuNodePool(
            "l4", {"governance": governance, "machineType": "g2-standard-8", "maxNodes": 4},
            cluster=cluster,
        )  # fmt: skip
        gcp.GpuQuota(
            "quota",
            {"governance": governance, "contactEmail": "ml@example.com"},
            services=apis,
            pools=[pool],
        )
        assert isinstance(pool, gcp.HasCapacityNeeds)

    graph = run(program)
    wanted = {
        r.inputs["quotaId"]: r.inputs["quotaConfig"]["preferredValue"]
        for r in graph.of_type("gcp:cloudquota/sQuotaPreference:SQuotaPreference")
    }
    # 4 nodes + 1 surge node, one L4 each, on the Spot (PREEMPTIBLE-) quota.
    assert wanted["PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region"] == "5"
    assert "NVIDIA-L4-GPUS-per-project-region" not in wanted


def test_flex_start_counts_against_the_preemptible_quota(run, governance):
    seen = {}
    run(stack(governance, seen=seen, market="flex-start"))
    assert seen["pool"].quota_needs()[0].market == "spot"


def test_the_pool_waits_for_the_cluster_and_its_api(default_graph):
    graph = default_graph
    pool = graph.named("l4-pool")
    cluster = graph.named("train-cluster")
    assert cluster.urn in pool.dependencies
    assert pool.inputs["cluster"] == cluster.id
    assert pool.id == f"{cluster.id}/nodePools/l4"
    assert missing_api_dependencies(graph) == []


def test_the_node_lifetime_can_be_left_out_except_on_flex_start(run, governance):
    pool = node_pool(run, governance, maxNodeHours=None)
    assert "maxRunDuration" not in pool.inputs["nodeConfig"]
    with pytest.raises(ConfigError) as error:
        run(stack(governance, market="flex-start", maxNodeHours=None))
    assert "maxNodeHours" in str(error.value)
