"""gcp.GkeCluster: private, Workload Identity, Dataplane V2, GPU metrics, least-privilege nodes."""

import pytest

from aistack import gcp
from aistack.engine.gcp_cloud import SimulatedGcpError, missing_api_dependencies
from aistack.errors import ConfigError
from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE, run_stack

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("gcp-gke_cluster")

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
PROJECT = "team-ml-prod"
NETWORK = {
    "network": f"projects/{PROJECT}/global/networks/ml",
    "subnetwork": f"projects/{PROJECT}/regions/europe-west4/subnetworks/train",
    "podsRangeName": "pods",
    "servicesRangeName": "services",
}


def cluster_args(governance, **overrides):
    return {"region": "europe-west4", "governance": governance, **NETWORK, **overrides}


def stack(governance, datasets=(), **overrides):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        buckets = [
            gcp.DatasetBucket(
                f"data-{region}",
                {"kind": "checkpoints", "region": region, "governance": governance},
                services=apis,
            )
            for region in datasets
        ]
        gcp.GkeCluster("train", cluster_args(governance, **overrides), services=apis,
                       datasets=buckets)  # fmt: skip

    return program


@pytest.fixture(scope="module")
def default_graph():
    """The default cluster, built once for the module's tests that read it."""
    with shared(run_stack(stack(dict(GOVERNANCE)))) as graph:
        yield graph


def test_nodes_are_private_and_the_control_plane_has_no_public_endpoint(default_graph):
    cluster = default_graph.named("train-cluster")
    private = cluster.inputs["privateClusterConfig"]
    assert private["enablePrivateNodes"] is True
    assert private["enablePrivateEndpoint"] is True
    assert private["masterIpv4CidrBlock"] == "172.16.0.0/28"
    authorized = cluster.inputs["masterAuthorizedNetworksConfig"]
    assert authorized["gcpPublicCidrsAccessEnabled"] is False
    assert authorized.get("cidrBlocks", []) == []
    # The simulated GKE answers a private endpoint inside the master range.
    assert cluster.outputs["endpoint"] == "172.16.0.2"


def test_a_public_endpoint_is_opened_only_to_the_authorized_networks(run, governance):
    office = {"cidrBlock": "34.90.0.0/24", "displayName": "office"}
    cluster = run(stack(governance, allowPublicEndpoint=True, authorizedNetworks=[office])).named(
        "train-cluster"
    )
    assert cluster.inputs["privateClusterConfig"]["enablePrivateEndpoint"] is False
    assert cluster.inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [office]


def test_a_public_endpoint_without_authorized_networks_is_refused(run, governance):
    with pytest.raises(ConfigError) as error:
        run(stack(governance, allowPublicEndpoint=True))
    assert "train.authorizedNetworks" in str(error.value)


@pytest.mark.parametrize("cidr", ["0.0.0.0/0", "not-a-cidr"])
def test_the_internet_or_a_malformed_range_is_no_authorized_network(run, governance, cidr):
    with pytest.raises(ConfigError) as error:
        run(stack(governance, authorizedNetworks=[{"cidrBlock": cidr}]))
    assert "authorizedNetworks" in str(error.value)


def test_a_public_range_on_a_private_endpoint_is_refused(run, governance):
    with pytest.raises(ConfigError) as error:
        run(stack(governance, authorizedNetworks=[{"cidrBlock": "34.90.0.0/24"}]))
    assert "train.authorizedNetworks.0.cidrBlock" in str(error.value)


def test_workload_identity_uses_the_projects_pool(default_graph):
    cluster = default_graph.named("train-cluster")
    assert cluster.inputs["workloadIdentityConfig"] == {"workloadPool": f"{PROJECT}.svc.id.goog"}


def test_dataplane_v2_enforces_network_policy_without_the_calico_addon(default_graph):
    cluster = default_graph.named("train-cluster")
    assert cluster.inputs["datapathProvider"] == "ADVANCED_DATAPATH"
    assert cluster.inputs["networkPolicy"]["enabled"] is False


def test_gke_refuses_the_calico_addon_on_dataplane_v2(run):
    import pulumi_gcp

    def program():
        pulumi_gcp.container.Cluster(
            "c",
            location="europe-west4",
            initial_node_count=1,
            datapath_provider="ADVANCED_DATAPATH",
            network_policy={"enabled": True},
        )

    with pytest.raises(SimulatedGcpError, match="ADVANCED_DATAPATH is not allowed"):
        run(program)


def test_gke_refuses_removing_the_default_pool_without_an_initial_node(run):
    import pulumi_gcp

    def program():
        pulumi_gcp.container.Cluster(
            "c", location="europe-west4", remove_default_node_pool=True, initial_node_count=0
        )

    with pytest.raises(SimulatedGcpError, match="initial_node_count"):
        run(program)


def test_the_default_pool_is_removed_and_a_small_system_pool_runs_the_operators(default_graph):
    graph = default_graph
    cluster = graph.named("train-cluster")
    assert cluster.inputs["removeDefaultNodePool"] is True
    assert cluster.inputs["initialNodeCount"] == 1
    system = graph.named("train-system")
    assert system.inputs["cluster"] == cluster.id
    assert system.inputs["autoscaling"]["totalMinNodeCount"] == 1
    assert system.inputs["autoscaling"]["totalMaxNodeCount"] == 3
    assert "taints" not in system.inputs["nodeConfig"]
    assert system.id == f"{cluster.id}/nodePools/system"


def test_managed_prometheus_collects_dcgm_gpu_metrics_and_workload_logs_are_kept(default_graph):
    cluster = default_graph.named("train-cluster")
    monitoring = cluster.inputs["monitoringConfig"]
    assert monitoring["managedPrometheus"]["enabled"] is True
    assert "DCGM" in monitoring["enableComponents"]
    assert cluster.inputs["loggingConfig"]["enableComponents"] == [
        "SYSTEM_COMPONENTS",
        "WORKLOADS",
    ]


def test_gateway_api_gcs_fuse_cost_allocation_and_hardening_are_on(default_graph):
    cluster = default_graph.named("train-cluster")
    assert cluster.inputs["gatewayApiConfig"] == {"channel": "CHANNEL_STANDARD"}
    assert cluster.inputs["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
    assert cluster.inputs["costManagementConfig"] == {"enabled": True}
    assert cluster.inputs["releaseChannel"] == {"channel": "REGULAR"}
    assert cluster.inputs["enableShieldedNodes"] is True
    assert cluster.inputs["deletionProtection"] is True
    assert cluster.inputs["masterAuth"]["clientCertificateConfig"] == {
        "issueClientCertificate": False
    }


def test_secrets_are_encrypted_by_default_with_a_key_the_gke_agent_may_use(run, governance):
    # GKE docs, "Encrypt secrets at the application layer": the GKE service agent
    # (service-<NUMBER>@container-engine-robot) needs Encrypter/Decrypter on the key,
    # in the cluster's location, before the cluster names it.
    graph = run(stack(governance))
    cluster = graph.named("train-cluster")
    encryption = cluster.inputs["databaseEncryption"]
    assert encryption["state"] == "ENCRYPTED"
    assert "/locations/europe-west4/keyRings/" in encryption["keyName"]
    grant = graph.named("train-secrets-key-gke")
    assert grant.inputs["cryptoKeyId"] == encryption["keyName"]
    assert grant.inputs["member"].endswith("@container-engine-robot.iam.gserviceaccount.com")
    assert grant.urn in cluster.dependencies


def test_google_managed_secrets_are_an_explicit_opt_out(run, governance):
    cluster = run(stack(governance, allowGoogleManagedSecrets=True)).named("train-cluster")
    assert "databaseEncryption" not in cluster.inputs


def test_secrets_are_encrypted_with_the_given_key(run, governance):
    key = f"projects/{PROJECT}/locations/europe-west4/keyRings/gke/cryptoKeys/secrets"
    cluster = run(stack(governance, secretsKmsKey=key)).named("train-cluster")
    assert cluster.inputs["databaseEncryption"] == {"state": "ENCRYPTED", "keyName": key}


def test_nodes_run_as_a_dedicated_account_with_only_the_node_roles(default_graph):
    graph = default_graph
    account = graph.named("train-nodes")
    email = account.outputs["email"]
    grants = [r for r in graph.of_type("gcp:projects/iAMMember:IAMMember")]
    assert sorted(g.inputs["role"] for g in grants) == sorted(gcp.gke_cluster.NODE_ROLES)
    assert {g.inputs["member"] for g in grants} == {f"serviceAccount:{email}"}
    cluster = graph.named("train-cluster")
    assert cluster.inputs["nodeConfig"]["serviceAccount"] == email
    assert graph.named("train-system").inputs["nodeConfig"]["serviceAccount"] == email
    # The cluster waits for the grants: GKE checks the node account when it makes nodes.
    assert {g.urn for g in grants} <= set(cluster.dependencies)


def test_every_resource_waits_for_its_api(default_graph):
    graph = default_graph
    assert missing_api_dependencies(graph) == []
    services = {s.inputs["service"] for s in graph.of_type("gcp:projects/service:Service")}
    assert {"container.googleapis.com", "binaryauthorization.googleapis.com"} <= services


def test_the_cluster_outputs_what_a_kubernetes_provider_needs(run, governance):
    seen = {}

    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        cluster = gcp.GkeCluster("train", cluster_args(governance), services=apis)
        cluster.kubeconfig().apply(lambda v: seen.setdefault("kubeconfig", v))
        cluster.cluster_id.apply(lambda v: seen.setdefault("id", v))

    run(program)
    assert seen["id"] == f"projects/{PROJECT}/locations/europe-west4/clusters/train-13d1dc"
    assert "server: https://172.16.0.2" in seen["kubeconfig"]
    assert "command: gke-gcloud-auth-plugin" in seen["kubeconfig"]
    assert "certificate-authority-data: LS0t" in seen["kubeconfig"]


def test_the_region_must_be_allowed_and_equal_the_datasets(run, governance):
    with pytest.raises(ConfigError) as error:
        run(stack(governance, datasets=["us-central1"]))
    assert "train.datasets.0" in str(error.value)
    with pytest.raises(ConfigError) as error:
        run(stack(governance, region="asia-northeast1"))
    assert "train.region" in str(error.value)


def test_a_dataset_in_the_clusters_region_is_accepted(run, governance):
    assert run(stack(governance, datasets=["europe-west4"])).named("train-cluster")


def test_a_name_gke_refuses_is_a_config_error(run, governance):
    with pytest.raises(ConfigError) as error:
        run(stack(governance, clusterName="Train_Cluster"))
    assert "train.clusterName" in str(error.value)


def test_the_simulated_gke_refuses_a_name_over_40_characters(run):
    import pulumi_gcp

    def program():
        pulumi_gcp.container.Cluster("c", name="a" * 41, location="europe-west4",
                                     initial_node_count=1)  # fmt: skip

    with pytest.raises(SimulatedGcpError, match="at most 40"):
        run(program)


def test_workload_identity_bindings_wait_for_the_cluster_that_creates_the_pool(run, governance):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        cluster = gcp.GkeCluster("train", cluster_args(governance), services=apis)
        gcp.WorkloadIdentity(
            "ml",
            {
                "governance": governance,
                "accountPrefix": "team-ml",
                "workloads": [
                    {
                        "name": "training",
                        "kubernetesServiceAccounts": [
                            {"namespace": "team-a", "serviceAccount": "trainer"}
                        ],
                    }
                ],
            },
            services=apis,
            cluster=cluster,
        )

    graph = run(program)
    binding = graph.named("ml-training-ksa-team-a-trainer")
    # Depending on the component is depending on its children, the cluster among them.
    assert graph.named("train-cluster").urn in binding.dependencies
    assert binding.inputs["member"] == f"serviceAccount:{PROJECT}.svc.id.goog[team-a/trainer]"


def test_every_pool_s_boot_disks_use_the_cluster_s_node_key(run, governance):
    # GKE docs, "Use customer-managed encryption keys (CMEK) in GKE": node boot disks take
    # a key the Compute Engine service agent may use; pools wait for its grant.
    graph = run(stack(governance))
    grant = graph.named("train-nodes-disks-key-compute")
    assert grant.inputs["member"].endswith("@compute-system.iam.gserviceaccount.com")
    system = graph.named("train-system")
    assert system.inputs["nodeConfig"]["bootDiskKmsKey"] == grant.inputs["cryptoKeyId"]
    cluster = graph.named("train-cluster")
    assert cluster.inputs["nodeConfig"]["bootDiskKmsKey"] == grant.inputs["cryptoKeyId"]
    assert grant.urn in cluster.dependencies
