"""k8s.TeamNamespace: Pod Security restricted pinned, a hard quota, defaults so pods are
admitted, default-deny networking, keyless ServiceAccounts, one ConfigError for bad args."""

import pulumi
import pytest

from aistack import k8s
from aistack.errors import ConfigError
from aistack.queries.k8s import NETWORK_POLICY, SERVICE_ACCOUNT, manifest
from tests.k8s.conftest import GSA, ROLE_ARN


def _team(run, args, **kwargs):
    return run(lambda: k8s.TeamNamespace("ml-train", args, **kwargs))


def _policy(graph, role):
    return graph.named(f"ml-train-{role}").inputs["spec"]


def test_the_namespace_enforces_pod_security_restricted_at_a_pinned_version(run, team_args):
    labels = _team(run, team_args).named("ml-train-namespace").inputs["metadata"]["labels"]
    # Kubernetes docs, "Enforce Pod Security Standards with Namespace Labels": one level and
    # one version label per mode.
    for mode in ("enforce", "warn", "audit"):
        assert labels[f"pod-security.kubernetes.io/{mode}"] == "restricted"
        assert labels[f"pod-security.kubernetes.io/{mode}-version"] == "v1.30"


@pytest.mark.parametrize("version", ["latest", "1.30", "v2.0"])
def test_an_unpinned_or_malformed_pod_security_version_is_refused(run, team_args, version):
    with pytest.raises(ConfigError) as error:
        _team(run, {**team_args, "podSecurityVersion": version})
    assert error.value.fields == ["ml-train.podSecurityVersion"]


def test_a_component_name_that_is_no_namespace_name_is_a_config_error_first(run, team_args):
    """The component's name becomes the namespace's: one ConfigError naming the field and
    the rule, with the other bad fields, before the API server would refuse it."""
    recorded = []

    def program():
        k8s.TeamNamespace("ML_Train", {**team_args, "podSecurityVersion": "latest"})
        recorded.append("after")

    with pytest.raises(ConfigError) as error:
        run(program)
    assert sorted(error.value.fields) == ["ML_Train.namespace", "ML_Train.podSecurityVersion"]
    assert "RFC 1123 label" in str(error.value) and "'ml-train'" in str(error.value)
    assert recorded == []
    # An explicit namespace makes any component name fine.
    graph = run(lambda: k8s.TeamNamespace("ML_Train", {**team_args, "namespace": "ml-train"}))
    assert graph.named("ML_Train-namespace").inputs["metadata"]["name"] == "ml-train"


def test_the_quota_caps_gpus_cpu_memory_pods_and_refuses_load_balancers(run, team_args):
    hard = _team(run, team_args).named("ml-train-quota").inputs["spec"]["hard"]
    assert hard == {
        # Extended resources take the requests. prefix only (Kubernetes docs, "Resource
        # Quotas", resource quota for extended resources).
        "requests.nvidia.com/gpu": "8",
        "requests.cpu": "64",
        "requests.memory": "256Gi",
        "pods": "100",
        "services.loadbalancers": "0",
        "services.nodeports": "0",
    }


def test_another_device_plugin_is_quotad_under_its_own_resource_name(run, team_args):
    args = {**team_args, "gpuResource": "amd.com/gpu", "gpus": 2}
    hard = _team(run, args).named("ml-train-quota").inputs["spec"]["hard"]
    assert hard["requests.amd.com/gpu"] == "2"
    assert "requests.nvidia.com/gpu" not in hard


def test_containers_without_requests_get_defaults_so_the_quota_admits_them(run, team_args):
    # Kubernetes docs, "Resource Quotas": with a requests.cpu/memory quota, a pod that sets
    # no requests is refused unless a LimitRange supplies defaults.
    limits = _team(run, team_args).named("ml-train-limits").inputs["spec"]["limits"]
    assert limits == [
        {
            "type": "Container",
            "defaultRequest": {"cpu": "250m", "memory": "512Mi"},
            "default": {"memory": "2Gi"},
        }
    ]


def test_every_pod_is_denied_ingress_and_egress_unless_a_policy_allows_it(run, team_args):
    graph = _team(run, team_args)
    deny = _policy(graph, "default-deny")
    assert deny == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    dns = _policy(graph, "allow-dns")["egress"][0]
    assert dns["to"] == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    ]
    assert {(p["protocol"], p["port"]) for p in dns["ports"]} == {("UDP", 53), ("TCP", 53)}
    same = _policy(graph, "allow-same-namespace")
    assert same["ingress"] == [{"from": [{"podSelector": {}}]}]
    assert same["egress"] == [{"to": [{"podSelector": {}}]}]
    # No path out of the cluster by default beyond the identity endpoint.
    assert "ml-train-allow-egress" not in {r.name for r in graph.of_type(NETWORK_POLICY)}


def test_the_dns_allow_selects_kube_system_by_the_label_the_api_server_sets(run, team_args):
    graph = _team(run, team_args)
    namespace = graph.named("ml-train-namespace")
    assert namespace.outputs["metadata"]["labels"]["kubernetes.io/metadata.name"] == "ml-train"


def test_gke_workload_identity_annotates_the_account_and_opens_the_metadata_server(run, team_args):
    graph = _team(run, team_args)
    account = graph.named("ml-train-sa-trainer")
    assert account.inputs["metadata"]["annotations"] == {"iam.gke.io/gcp-service-account": GSA}
    assert account.inputs["automountServiceAccountToken"] is False
    egress = _policy(graph, "allow-cloud-identity")["egress"]
    assert {(e["to"][0]["ipBlock"]["cidr"], e["ports"][0]["port"]) for e in egress} == {
        ("169.254.169.254/32", 80),
        ("169.254.169.252/32", 987),
        ("169.254.169.252/32", 988),
    }


def test_irsa_annotates_the_role_and_pod_identity_leaves_the_account_bare(run, governance):
    args = {
        "team": "ml",
        "gpus": 0,
        "governance": governance,
        "serviceAccounts": [
            {"name": "server", "identity": "eks-irsa", "awsRoleArn": ROLE_ARN},
            {"name": "trainer", "identity": "eks-pod-identity", "awsRoleArn": ROLE_ARN},
        ],
        "allowEgress": [{"cidr": "10.0.32.0/24", "purpose": "STS VPC endpoint"}],
    }
    graph = _team(run, args)
    server = graph.named("ml-train-sa-server").inputs["metadata"]["annotations"]
    assert server == {"eks.amazonaws.com/role-arn": ROLE_ARN}
    trainer = graph.named("ml-train-sa-trainer").inputs["metadata"]["annotations"]
    assert "eks.amazonaws.com/role-arn" not in trainer
    egress = _policy(graph, "allow-cloud-identity")["egress"]
    assert ("169.254.170.23/32", 80) in {
        (e["to"][0]["ipBlock"]["cidr"], e["ports"][0]["port"]) for e in egress
    }
    listed = _policy(graph, "allow-egress")["egress"]
    assert listed == [
        {"to": [{"ipBlock": {"cidr": "10.0.32.0/24"}}], "ports": [{"protocol": "TCP", "port": 443}]}
    ]


def test_the_identity_can_be_wired_as_an_output_from_the_cloud_component(run, governance):
    args = {
        "team": "ml",
        "gpus": 1,
        "governance": governance,
        "serviceAccounts": [{"name": "trainer", "identity": "gke-workload-identity"}],
    }
    graph = run(
        lambda: k8s.TeamNamespace(
            "ml-train", args, identities={"trainer": pulumi.Output.from_input(GSA)}
        )
    )
    annotations = graph.named("ml-train-sa-trainer").inputs["metadata"]["annotations"]
    assert annotations == {"iam.gke.io/gcp-service-account": GSA}


def test_a_workload_that_calls_the_api_gets_its_token_and_no_other_does(run, governance):
    args = {
        "team": "ml",
        "gpus": 0,
        "governance": governance,
        "serviceAccounts": [{"name": "operator", "needsApiToken": True}, {"name": "trainer"}],
    }
    graph = _team(run, args)
    automount = {
        r.inputs["metadata"]["name"]: r.inputs["automountServiceAccountToken"]
        for r in graph.of_type(SERVICE_ACCOUNT)
    }
    assert automount == {"operator": True, "trainer": False}
    # Without a cloud identity there is no identity endpoint to reach.
    assert "ml-train-allow-cloud-identity" not in {r.name for r in graph.of_type(NETWORK_POLICY)}


def test_governance_is_labelled_within_kubernetes_rules_and_annotated_exactly(run, team_args):
    metadata = _team(run, team_args).named("ml-train-namespace").inputs["metadata"]
    assert metadata["labels"]["aistack.dev/owner"] == "ml-platform-example.com"
    assert metadata["labels"]["aistack.dev/allowed-regions"] == "europe-west4_us-central1"
    assert metadata["labels"]["aistack.dev/team"] == "ml"
    assert metadata["annotations"]["aistack.dev/owner"] == "ml-platform@example.com"
    assert metadata["annotations"]["aistack.dev/allowed-regions"] == "europe-west4 us-central1"


def test_every_child_waits_for_the_namespace_and_lives_in_it(run, team_args):
    graph = _team(run, team_args)
    component = graph.named("ml-train")
    namespace = graph.named("ml-train-namespace")
    children = [r for r in graph.descendants(component) if r is not namespace]
    assert len(children) == 7  # quota, limits, 4 policies, 1 account
    for child in children:
        assert namespace.urn in child.dependencies, child.name
        assert manifest(child)["metadata"]["namespace"] == "ml-train"


def test_the_namespace_outlives_destroy_unless_allowed_and_is_protected_in_prod(
    run, team_args, governance
):
    namespace = _team(run, team_args).named("ml-train-namespace")
    assert namespace.retain_on_delete and not namespace.protect
    prod = {**team_args, "governance": {**governance, "environment": "prod"}}
    assert _team(run, prod).named("ml-train-namespace").protect
    free = _team(run, {**team_args, "allowDestroy": True}).named("ml-train-namespace")
    assert not free.retain_on_delete


def test_every_bad_argument_is_reported_in_one_error_before_anything_exists(governance):
    from aistack import engine

    registered = []

    def program():
        try:
            k8s.TeamNamespace(
                "ml-train",
                {
                    "team": "ml",
                    "namespace": "ML_Train",
                    "gpus": 4,
                    "cpu": "lots",
                    "memory": "-4Gi",
                    "governance": governance,
                    "serviceAccounts": [
                        {"name": "default"},
                        {"name": "trainer", "identity": "gke-workload-identity"},
                        {"name": "server", "identity": "eks-irsa", "awsRoleArn": ROLE_ARN},
                    ],
                },
                identities={"notebook": "x"},
            )
        except ConfigError as error:
            registered.append(error)

    graph = engine.run(program)
    assert [r.type for r in graph.resources] == []
    assert sorted(registered[0].fields) == sorted(
        [
            "ml-train.namespace",
            "ml-train.cpu",
            "ml-train.memory",
            "ml-train.serviceAccounts.0.name",
            "ml-train.serviceAccounts.1.gcpServiceAccount",
            "ml-train.identities.notebook",
            "ml-train.allowEgress",
        ]
    )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"defaultMemoryRequest": "4Gi", "defaultMemoryLimit": "2Gi"}, "defaultMemoryRequest"),
        ({"cpu": "100m"}, "defaultCpuRequest"),
        ({"gpuResource": "kubernetes.io/gpu"}, "gpuResource"),
        ({"gpus": -1}, "gpus"),
        ({"serviceAccounts": [{"name": "a"}, {"name": "a"}]}, "serviceAccounts.1.name"),
        (
            {"serviceAccounts": [{"name": "a", "awsRoleArn": ROLE_ARN}]},
            "serviceAccounts.0.identity",
        ),
        (
            {
                "serviceAccounts": [
                    {
                        "name": "a",
                        "identity": "gke-workload-identity",
                        "gcpServiceAccount": GSA,
                        "awsRoleArn": ROLE_ARN,
                    }
                ]
            },
            "serviceAccounts.0.awsRoleArn",
        ),
        (
            {"serviceAccounts": [{"name": "a", "identity": "eks-irsa", "awsRoleArn": "arn:x"}]},
            "serviceAccounts.0.awsRoleArn",
        ),
        ({"team": "ml team"}, "team"),
        ({"cpu": "8 cores"}, "cpu"),
        ({"allowEgress": [{"cidr": "10.0.0.300/8", "purpose": "x"}]}, "allowEgress.0.cidr"),
    ],
)
def test_settings_the_api_server_or_the_quota_would_refuse_are_config_errors(
    run, team_args, change, field
):
    with pytest.raises(ConfigError) as error:
        _team(run, {**team_args, **change})
    assert error.value.fields == [f"ml-train.{field}"]
