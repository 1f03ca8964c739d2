"""The simulated cloud answers pulumi-kubernetes as the provider and the API server do.

Each behaviour cites where the platform decides it: pulumi-kubernetes 4.x provider source
(provider/pkg/...), the pulumi_kubernetes SDK docstrings, client-go and apimachinery.
"""

import re
import textwrap

import pulumi
import pulumi_kubernetes as k8s
import pytest

from aistack import engine
from aistack.engine.cloud import UnknownInvokeError

KUBECONFIG = textwrap.dedent(
    """\
    apiVersion: v1
    kind: Config
    clusters:
    - name: gke-train
      cluster: {server: "https://10.0.0.2"}
    users:
    - name: ci
      user: {token: simulated}
    contexts:
    - name: train
      context: {cluster: gke-train, user: ci, namespace: ml-train}
    - name: admin
      context: {cluster: gke-train, user: ci}
    current-context: admin
    """
)


def test_an_unnamed_object_is_autonamed_with_eight_hex_and_annotated():
    # provider/pkg/metadata/naming.go AssignNameIfAutonamable: urn.Name() + "-" +
    # NewUniqueName(randlen 0 = 8 hex), and the `pulumi.com/autonamed: "true"` annotation.
    def program():
        k8s.core.v1.ConfigMap("settings", data={"a": "b"})

    config_map = engine.run(program).named("settings")
    metadata = config_map.outputs["metadata"]
    assert re.fullmatch(r"settings-[0-9a-f]{8}", metadata["name"])
    assert metadata["annotations"]["pulumi.com/autonamed"] == "true"


def test_an_explicit_name_is_kept_and_not_marked_autonamed():
    def program():
        k8s.core.v1.Namespace("ns", metadata={"name": "ml-train"})

    namespace = engine.run(program).named("ns")
    assert namespace.outputs["metadata"]["name"] == "ml-train"
    assert "annotations" not in namespace.outputs["metadata"]


def test_ids_are_namespace_slash_name_or_name_for_cluster_scoped_objects():
    # provider/pkg/clients FqName: "namespace/name", or the name when the namespace is "".
    def program():
        k8s.core.v1.Namespace("ns", metadata={"name": "ml-train"})
        k8s.core.v1.ServiceAccount("sa", metadata={"name": "trainer", "namespace": "ml-train"})
        k8s.scheduling.v1.PriorityClass("prio", metadata={"name": "training"}, value=100)

    graph = engine.run(program)
    assert graph.named("ns").id == "ml-train"
    assert graph.named("sa").id == "ml-train/trainer"
    assert graph.named("prio").id == "training"
    assert "namespace" not in graph.named("prio").outputs["metadata"]


def test_metadata_comes_back_with_what_the_api_server_fills_in():
    def program():
        k8s.core.v1.ServiceAccount("sa", metadata={"name": "trainer", "namespace": "ml"})

    metadata = engine.run(program).named("sa").outputs["metadata"]
    assert re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", metadata["uid"]
    )
    assert metadata["resourceVersion"].isdigit()  # opaque, but a string
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", metadata["creationTimestamp"])
    assert metadata["namespace"] == "ml"


def test_a_namespaced_object_without_a_namespace_lands_in_default():
    # pulumi_kubernetes.Provider `namespace` docstring: .metadata.namespace, then the
    # provider's namespace, then the kubeconfig context's; the API server's is "default".
    def program():
        k8s.core.v1.ConfigMap("cm", metadata={"name": "settings"})

    config_map = engine.run(program).named("cm")
    assert config_map.id == "default/settings"
    assert config_map.outputs["metadata"]["namespace"] == "default"


def test_an_explicit_provider_takes_its_namespace_from_the_kubeconfig_context():
    def program():
        train = k8s.Provider("train", kubeconfig=KUBECONFIG, context="train")
        scoped = k8s.Provider("scoped", kubeconfig=KUBECONFIG, context="train", namespace="x")
        k8s.core.v1.ConfigMap(
            "a", metadata={"name": "a"}, opts=pulumi.ResourceOptions(provider=train)
        )
        k8s.core.v1.ConfigMap(
            "b", metadata={"name": "b"}, opts=pulumi.ResourceOptions(provider=scoped)
        )

    graph = engine.run(program)
    assert graph.named("a").id == "ml-train/a"
    assert graph.named("b").id == "x/b"  # the provider's namespace beats the context's


def test_stack_config_kubeconfig_configures_the_default_provider():
    def program():
        k8s.core.v1.ConfigMap("a", metadata={"name": "a"})

    graph = engine.run(
        program, config={"kubernetes:kubeconfig": KUBECONFIG, "kubernetes:context": "train"}
    )
    assert graph.named("a").id == "ml-train/a"


def test_a_context_the_kubeconfig_lacks_makes_the_cluster_unreachable():
    # client-go clientcmd client_config.go getContext: "context was not found for
    # specified context: <name>", surfaced by the provider as an unreachable cluster.
    def program():
        provider = k8s.Provider("p", kubeconfig=KUBECONFIG, context="prod")
        k8s.core.v1.ConfigMap("a", opts=pulumi.ResourceOptions(provider=provider))

    with pytest.raises(Exception, match="context was not found for specified context: prod"):
        engine.run(program)


def test_a_kubeconfig_that_does_not_parse_fails_as_the_provider_reports_it():
    # provider/pkg/provider/provider.go Configure: "failed to parse kubeconfig data in
    # `kubernetes:config:kubeconfig`" marks the cluster unreachable.
    def program():
        k8s.core.v1.ConfigMap("a")

    with pytest.raises(Exception, match="failed to parse kubeconfig data"):
        engine.run(program, config={"kubernetes:kubeconfig": "/nonexistent/kubeconfig"})


def test_custom_resources_register_as_group_version_kind_and_keep_their_scope():
    # pulumi_kubernetes/apiextensions/CustomResource.py: type f"kubernetes:{api_version}:{kind}".
    def program():
        k8s.apiextensions.CustomResource(
            "queue",
            api_version="kueue.x-k8s.io/v1beta2",
            kind="ClusterQueue",
            metadata={"name": "team-a"},
            spec={"namespaceSelector": {}},
        )
        k8s.apiextensions.CustomResource(
            "local",
            api_version="kueue.x-k8s.io/v1beta2",
            kind="LocalQueue",
            metadata={"namespace": "ml"},
            spec={"clusterQueue": "team-a"},
        )

    graph = engine.run(program)
    queue = graph.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")[0]
    assert queue.id == "team-a"  # Kueue's ClusterQueue CRD: scope Cluster
    local = graph.of_type("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")[0]
    assert re.fullmatch(r"ml/local-[0-9a-f]{8}", local.id)
    assert local.outputs["spec"] == {"clusterQueue": "team-a"}


@pytest.mark.parametrize(
    ("name", "labels"),
    [
        ("ML-Train", {}),  # Namespace names are lowercase RFC 1123 labels
        ("x" * 64, {}),  # at most 63 characters
        ("ok", {"aistack.dev/owner": "ml@example.com"}),  # '@' is not a label value character
        ("ok", {"aistack.dev/team": "a" * 64}),  # label values at most 63
        ("ok", {"Aistack.dev/team": "a"}),  # the key prefix is a lowercase DNS subdomain
    ],
)
def test_the_api_server_refuses_bad_names_and_labels(name, labels):
    # apimachinery/pkg/util/validation: IsDNS1123Label, IsQualifiedName, IsValidLabelValue.
    def program():
        k8s.core.v1.Namespace("ns", metadata={"name": name, "labels": labels})

    with pytest.raises(Exception, match='Namespace ".*" is invalid'):
        engine.run(program)


def test_an_invoke_the_simulated_cluster_cannot_answer_fails_loudly():
    # `kubernetes:yaml:decode` is what yaml.ConfigFile invokes (pulumi_kubernetes/yaml).
    def program():
        pulumi.runtime.invoke("kubernetes:yaml:decode", {"text": "kind: ConfigMap"})

    with pytest.raises(UnknownInvokeError, match="kubernetes:yaml:decode"):
        engine.run(program)


def test_built_in_kinds_of_every_group_are_namespaced_and_custom_ones_follow_their_crd():
    def program():
        k8s.apps.v1.Deployment(
            "app",
            metadata={"name": "app"},
            spec={
                "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}},
            },
        )
        k8s.batch.v1.CronJob(
            "nightly",
            metadata={"name": "nightly", "namespace": "ml"},
            spec={"schedule": "@daily", "jobTemplate": {"spec": {"template": {"spec": {}}}}},
        )
        k8s.apiextensions.CustomResource(
            "flavor",
            api_version="kueue.x-k8s.io/v1beta2",
            kind="ResourceFlavor",
            metadata={"name": "spot"},
        )

    graph = engine.run(program)
    assert graph.named("app").id == "default/app"
    assert graph.named("nightly").id == "ml/nightly"
    assert graph.named("flavor").id == "spot"  # Kueue's ResourceFlavor CRD: scope Cluster


def test_a_helm_release_is_named_namespaced_and_given_a_status_without_its_chart():
    # provider/pkg/provider/helm_release.go: assignNameIfAutonameable (urn name + 8 hex),
    # setDefaults (the provider's namespace, timeout 300 unless skipAwait), Create's id
    # fqName(namespace, name) and setReleaseAttributes' status.
    def program():
        provider = k8s.Provider("cluster", kubeconfig=KUBECONFIG, context="train")
        opts = pulumi.ResourceOptions(provider=provider)
        k8s.helm.v3.Release(
            "keda",
            chart="keda",
            version="2.20.2",
            repository_opts={"repo": "https://kedacore.github.io/charts"},
            opts=opts,
        )
        k8s.helm.v3.Release(
            "kueue",
            name="kueue",
            chart="oci://registry.k8s.io/kueue/charts/kueue",
            version="0.19.2",
            namespace="kueue-system",
            skip_await=True,
            opts=opts,
        )

    graph = engine.run(program)
    keda, kueue = graph.named("keda"), graph.named("kueue")
    assert re.fullmatch(r"keda-[0-9a-f]{8}", keda.outputs["name"])
    assert keda.outputs["namespace"] == "ml-train"  # the context's namespace
    assert keda.outputs["timeout"] == 300
    assert keda.outputs["status"] == {
        "name": keda.outputs["name"],
        "namespace": "ml-train",
        "chart": "keda",
        "version": "2.20.2",
        "revision": 1,
        "status": "deployed",
    }
    assert kueue.outputs["status"]["chart"] == "kueue"  # the OCI reference's last part
    assert "timeout" not in kueue.outputs  # skipAwait: no wait, no timeout
    assert kueue.id == "kueue-system/kueue"


def test_helm_refuses_a_release_name_longer_than_53_characters():
    # Helm v3 pkg/chartutil/validate_name.go: maxReleaseNameLen 53, lowercase RFC 1123.
    def program():
        k8s.helm.v3.Release("long", name="x" * 54, chart="keda", version="2.20.2")

    with pytest.raises(Exception, match="release name .* at most 53"):
        engine.run(program)


def test_a_yaml_config_file_from_a_url_is_recorded_without_reading_it():
    # yaml/v2 ConfigFile is a component the provider constructs (remote=True); offline
    # nothing fetches the URL and the component has no children.
    url = "https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.6.1/standard-install.yaml"

    def program():
        k8s.yaml.v2.ConfigFile("gateway-api", file=url)

    graph = engine.run(program)
    config_file = graph.named("gateway-api")
    assert config_file.type == "kubernetes:yaml/v2:ConfigFile"
    assert config_file.inputs["file"] == url
    assert [r for r in graph.resources if r.parent == config_file.urn] == []
