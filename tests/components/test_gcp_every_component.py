"""The GCP and Kubernetes components that landed after GcpDatasetBucket, through the
provider: a TypeScript-shaped program (camelCase, numbers as floats) wires each to
GcpProjectServices by the plain project and the `enabledServices` Output, a GKE cluster by
its id, a logs bucket by its name and Google service accounts by their e-mails, and gets
the graph the Python API builds for the same arguments. Dependencies are a superset: one
Output carries every API the ProjectServices enables, where a Python resource waits for the
few it uses."""

import contextlib

import pulumi
import pulumi_gcp
import pytest
from pulumi.provider.experimental.component import ComponentInitError

from aistack import engine, gcp, k8s
from aistack.engine.gcp_cloud import missing_api_dependencies
from aistack.errors import ConfigError
from tests._harness.shared_graphs import shared
from tests.components.test_construct import _floats
from tests.gcp.conftest import GOVERNANCE, PROJECT

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("components-gcp_every_component")

CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
SERVICES = {"project": PROJECT}
LOGS = {"kind": "logs", "region": "europe-west4", "governance": GOVERNANCE}
KSA = [{"namespace": "team-a", "serviceAccount": "trainer"}]

IDENTITY = {
    "governance": GOVERNANCE,
    "accountPrefix": "team-ml",
    "workloads": [
        {
            "name": "training",
            "kubernetesServiceAccounts": KSA,
            "projectRoles": ["roles/logging.logWriter"],
        },
        {"name": "inference"},
    ],
    "github": {"repository": "acme/ml-platform", "branches": ["main"], "idSuffix": "2"},
}
AUDIT = {"governance": GOVERNANCE, "region": "europe-west4", "retentionDays": 730}
REGISTRY = {
    "governance": GOVERNANCE,
    "region": "europe-west4",
    "keepRecentVersions": 5,
    "releaseTagPrefixes": ["v"],
}
BUDGET = {
    "governance": GOVERNANCE,
    "region": "europe-west4",
    "billingAccount": "01A2B3-C4D5E6-F7A8B9",
    "monthlyLimit": 3000,
    "dailyLimit": 120.5,
    "alertEmails": ["ml-team@example.com"],
    "killSwitch": True,
}
QUOTA = {
    "governance": GOVERNANCE,
    "contactEmail": "ml-platform@example.com",
    "headroomPercent": 25,
    "needs": [
        {
            "pool": "train",
            "region": "europe-west4",
            "machineTypes": ["a3-highgpu-8g"],
            "maxNodes": 2,
            "market": "spot",
        }
    ],
}
NETWORK = {
    "governance": GOVERNANCE,
    "region": "europe-west4",
    "trainingMachineTypes": ["a3-highgpu-8g"],
    "inferenceMachineTypes": ["g2-standard-8"],
    "nat": True,
    "proxyOnlySubnet": True,
    "gatewayPort": 9000,
}
ACCOUNTS = {
    "training": f"trainer@{PROJECT}.iam.gserviceaccount.com",
    "inference": f"server@{PROJECT}.iam.gserviceaccount.com",
}
TEAM = {
    "team": "ml",
    "gpus": 8,
    "governance": {**GOVERNANCE, "owner": "ml-platform@example.com"},
    "serviceAccounts": [
        {"name": "trainer", "identity": "gke-workload-identity"},
        {"name": "notebook"},
    ],
}


def _cluster(apis_ready):
    """A GKE cluster with Workload Identity: the pool the Kubernetes bindings name."""
    return pulumi_gcp.container.Cluster(
        "gke",
        location="europe-west4",
        initial_node_count=1,
        workload_identity_config={"workload_pool": f"{PROJECT}.svc.id.goog"},
        opts=pulumi.ResourceOptions(depends_on=apis_ready),
    )


# ---- the two programs, per component ----------------------------------------------------------


def _python(token, args):
    """The Python API: component objects passed as keywords."""

    def program():
        apis = gcp.ProjectServices("apis", SERVICES)
        if token == "GcpWorkloadIdentity":
            cluster = _cluster(apis.enabling("container.googleapis.com"))
            gcp.WorkloadIdentity("it", args, services=apis, cluster=cluster)
        elif token == "GcpContainerRegistry":
            gcp.ContainerRegistry("it", args, services=apis)
        elif token == "GcpAuditLogs":
            gcp.AuditLogs("it", args, services=apis)
        elif token == "GcpBudgetGuard":
            logs = gcp.DatasetBucket("logs", LOGS, services=apis)
            gcp.BudgetGuard("it", args, services=apis, access_logs=logs)
        elif token == "GcpGpuQuota":
            gcp.GpuQuota("it", args, services=apis)
        elif token == "GcpNetwork":
            gcp.Network("it", args, services=apis, service_accounts=ACCOUNTS)
        else:
            identity = gcp.WorkloadIdentity(
                "ids", {"governance": GOVERNANCE, "accountPrefix": "team-ml"}, services=apis
            )
            k8s.TeamNamespace("it", args, identities={"trainer": identity.email("training")})

    return program


def _through_provider(provider, token, args, state=None):
    """A TypeScript program: the same components through `construct`, wired by Outputs."""

    def construct(name, component, inputs):
        return provider.construct(name, f"aistack:index:{component}", inputs, None).state

    def program():
        services = construct("apis", "GcpProjectServices", _floats(SERVICES))
        wiring = {"project": PROJECT, "enabledServices": services["enabledServices"]}
        inputs = _floats(args)
        if token == "GcpWorkloadIdentity":
            ready = pulumi.Output.from_input(services["enabledServices"]).apply(lambda _: None)
            wiring["clusterId"] = _cluster([ready]).id
        elif token == "GcpBudgetGuard":
            logs = construct("logs", "GcpDatasetBucket", {**_floats(LOGS), **wiring})
            wiring["accessLogsBucketName"] = logs["bucketName"]
        elif token == "GcpNetwork":
            wiring["serviceAccounts"] = ACCOUNTS
        elif token == "K8sTeamNamespace":
            identity = construct(
                "ids",
                "GcpWorkloadIdentity",
                {**_floats({"governance": GOVERNANCE, "accountPrefix": "team-ml"}), **wiring},
            )
            # `identity.emails.apply(e => e["training"])` in TypeScript.
            email = pulumi.Output.from_input(identity["emails"]).apply(lambda e: e["training"])
            wiring = {"identities": {"trainer": email}}
        result = construct("it", token, {**inputs, **wiring})
        if state is not None:
            state.update(result)

    return program


#: token -> (arguments, outputs the construct result must carry)
CASES = {
    "GcpWorkloadIdentity": (IDENTITY, {"emails", "members", "githubProviderName"}),
    "GcpContainerRegistry": (REGISTRY, {"repositoryId", "repositoryUrl", "kmsKeyName"}),
    "GcpAuditLogs": (AUDIT, set()),
    "GcpBudgetGuard": (
        BUDGET,
        {"budgetName", "topicId", "functionName", "stateBucketName", "notificationChannelIds"},
    ),
    "GcpGpuQuota": (QUOTA, {"requestedGpus", "summaries", "grantedValues", "reconciling"}),
    "GcpNetwork": (
        NETWORK,
        {"networkSelfLink", "subnetSelfLinks", "podsRangeName", "plannedZones", "offeredZones"},
    ),
    "K8sTeamNamespace": (TEAM, {"namespaceName", "serviceAccountNames"}),
}


@pytest.fixture(scope="module")
def via_provider(provider):
    """`via_provider(token)`: the graph of the token's CASES arguments through the provider
    and the construct result's state, built once per token for the module (shared)."""
    built: dict = {}
    with contextlib.ExitStack() as graphs:

        def build(token):
            if token not in built:
                state: dict = {}
                program = _through_provider(provider, token, CASES[token][0], state)
                graph = graphs.enter_context(shared(engine.run(program, config=CONFIG)))
                built[token] = (graph, state)
            return built[token]

        yield build


def _by_urn(graph):
    return {r.urn: r for r in graph}


@pytest.mark.parametrize("token", list(CASES))
def test_component_through_the_provider_registers_the_python_graph(via_provider, token):
    args, outputs = CASES[token]
    graph, state = via_provider(token)
    via_python = engine.run(_python(token, args), config=CONFIG)

    ours, theirs = _by_urn(graph), _by_urn(via_python)
    assert sorted(ours) == sorted(theirs)
    for urn, resource in ours.items():
        assert resource.parent == theirs[urn].parent, urn
        assert resource.inputs == theirs[urn].inputs, urn
        assert set(resource.dependencies) >= set(theirs[urn].dependencies), urn
    assert graph.named("it").type == f"aistack:index:{token}"
    assert not missing_api_dependencies(graph)
    assert outputs <= set(state), outputs - set(state)


def test_kubernetes_bindings_wait_for_the_cluster_given_by_id(via_provider):
    graph, _ = via_provider("GcpWorkloadIdentity")  # IDENTITY
    binding = graph.named("it-training-ksa-team-a-trainer")
    assert graph.named("gke").urn in binding.dependencies
    assert binding.inputs["member"] == f"serviceAccount:{PROJECT}.svc.id.goog[team-a/trainer]"


def test_budget_state_bucket_logs_to_the_bucket_given_by_name(via_provider):
    graph, _ = via_provider("GcpBudgetGuard")  # BUDGET
    [state_bucket] = [
        r for r in graph.of_type("gcp:storage/bucket:Bucket") if r.parent == graph.named("it").urn
    ]
    logging = state_bucket.get("logging")
    assert logging["logBucket"] == graph.named("logs-bucket").outputs["name"]
    assert logging["logObjectPrefix"] == "usage/it"


def test_team_service_account_is_annotated_with_the_email_output(via_provider):
    graph, _ = via_provider("K8sTeamNamespace")  # TEAM
    account = graph.named("it-sa-trainer")
    annotations = account.inputs["metadata"]["annotations"]
    assert (
        annotations["iam.gke.io/gcp-service-account"]
        == (graph.named("ids-training").outputs["email"])
    )


# ---- bad input: the Python caller's ConfigError -------------------------------------------------

BAD = {
    # A Kubernetes binding with neither a cluster nor workloadPoolExists (the pool
    # <project>.svc.id.goog would not exist), and a workload listed twice.
    "GcpWorkloadIdentity": {
        "governance": GOVERNANCE,
        "accountPrefix": "team-ml",
        "workloads": [
            {"name": "training", "kubernetesServiceAccounts": KSA},
            {"name": "training"},
        ],
    },
    "GcpContainerRegistry": {**REGISTRY, "region": "us-east1", "keepRecentVersions": 4.5},
    "GcpAuditLogs": {**AUDIT, "region": "us-east1", "retentionDays": 30.5},
    "GcpBudgetGuard": {**BUDGET, "dailyLimit": 5000},
    "GcpGpuQuota": {
        **QUOTA,
        "contactEmail": "nobody",
        "needs": [{**QUOTA["needs"][0], "maxNodes": 2.5}],
    },
    "GcpNetwork": {**NETWORK, "region": "us-east1", "gatewayPort": 80.5},
    "K8sTeamNamespace": {**TEAM, "gpus": 4.5},
}


def _error(build):
    with pytest.raises(Exception) as caught:
        engine.run(build, config=CONFIG)
    error = caught.value
    return error.inner if isinstance(error, ComponentInitError) else error


@pytest.mark.parametrize("token", list(BAD))
def test_bad_input_is_the_python_callers_config_error(provider, token):
    bad = BAD[token]
    if token == "GcpWorkloadIdentity":
        # Neither program passes a cluster: both must refuse the bindings.
        def python():
            gcp.WorkloadIdentity("it", bad, services=gcp.ProjectServices("apis", SERVICES))

        def through_provider():
            services = provider.construct(
                "apis", "aistack:index:GcpProjectServices", _floats(SERVICES), None
            ).state
            wiring = {"project": PROJECT, "enabledServices": services["enabledServices"]}
            provider.construct(
                "it", "aistack:index:GcpWorkloadIdentity", {**_floats(bad), **wiring}, None
            )

        from_python, from_provider = _error(python), _error(through_provider)
        assert "it.workloads.training.kubernetesServiceAccounts" in str(from_provider)
    else:
        from_python = _error(_python(token, bad))
        from_provider = _error(_through_provider(provider, token, bad))
    assert isinstance(from_provider, ConfigError), from_provider
    assert str(from_provider) == str(from_python)
    assert "it." in str(from_provider)


def test_identities_naming_no_service_account_are_refused_as_in_python(provider):
    def through_provider():
        provider.construct(
            "it",
            "aistack:index:K8sTeamNamespace",
            {**_floats(TEAM), "identities": {"trainr": pulumi.Output.from_input("x@y.z")}},
            None,
        )

    def python():
        k8s.TeamNamespace("it", TEAM, identities={"trainr": pulumi.Output.from_input("x@y.z")})

    from_provider, from_python = _error(through_provider), _error(python)
    assert isinstance(from_provider, ConfigError)
    assert str(from_provider) == str(from_python)
    assert "it.identities.trainr" in str(from_provider)
