"""aistack.queries.k8s renders recorded objects as `kubectl apply` takes them and parses
quantities as the API server does."""

from decimal import Decimal

import pulumi_kubernetes as k8s
import pytest

from aistack import engine
from aistack.queries.k8s import builtin_manifests, is_builtin, manifest, parse_quantity


def test_a_manifest_carries_the_provider_given_name_and_namespace_but_no_server_fields():
    def program():
        k8s.core.v1.ConfigMap("settings", data={"a": "b"})

    graph = engine.run(program)
    document = manifest(graph.named("settings"))
    name = graph.named("settings").outputs["metadata"]["name"]
    assert document == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "data": {"a": "b"},
        "metadata": {
            "name": name,
            "namespace": "default",
            "annotations": {"pulumi.com/autonamed": "true"},
        },
    }


def test_custom_resources_are_not_validated_as_built_in_kinds():
    def program():
        k8s.apiextensions.CustomResource(
            "queue",
            api_version="kueue.x-k8s.io/v1beta2",
            kind="ClusterQueue",
            metadata={"name": "q"},
            spec={},
        )
        k8s.networking.v1.NetworkPolicy(
            "deny", metadata={"namespace": "ml"}, spec={"podSelector": {}}
        )
        k8s.scheduling.v1.PriorityClass("prio", metadata={"name": "p"}, value=1)

    graph = engine.run(program)
    assert not is_builtin(graph.named("queue"))
    assert {m["kind"] for _, m in builtin_manifests(graph)} == {"NetworkPolicy", "PriorityClass"}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Decimal("0.5")),
        ("8", Decimal(8)),
        ("16Gi", Decimal(16 * 1024**3)),
        ("1.5k", Decimal(1500)),
        ("1e3", Decimal(1000)),
        (".5", Decimal("0.5")),
        (4, Decimal(4)),
    ],
)
def test_quantities_parse_as_the_api_server_reads_them(text, value):
    # apimachinery/pkg/api/resource/quantity.go: binary SI, decimal SI and exponents.
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["lots", "16GB", "1 Gi", "Gi", "", "1.2.3"])
def test_text_the_api_server_refuses_is_not_a_quantity(text):
    with pytest.raises(ValueError, match="not a Kubernetes quantity"):
        parse_quantity(text)


def test_a_secret_manifest_holds_its_values_not_pulumis_secret_wrapper():
    # pulumi-kubernetes marks Secret data secret; the wire format wraps such values
    # (pulumi.runtime.rpc), and kubectl would refuse the wrapper.
    def program():
        k8s.core.v1.Secret("token", metadata={"namespace": "ml"}, string_data={"token": "t"})

    document = manifest(engine.run(program).named("token"))
    assert document["stringData"] == {"token": "t"}


@pytest.mark.parametrize(
    ("token", "builtin"),
    [
        ("kubernetes:apps/v1:Deployment", True),
        ("kubernetes:batch/v1:Job", True),
        ("kubernetes:policy/v1:PodDisruptionBudget", True),
        ("kubernetes:rbac.authorization.k8s.io/v1:Role", True),
        ("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", False),
        ("kubernetes:jobset.x-k8s.io/v1alpha2:JobSet", False),
        ("kubernetes:gateway.networking.k8s.io/v1:HTTPRoute", False),
        ("kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshot", False),
        ("kubernetes:karpenter.sh/v1:NodePool", False),
        ("kubernetes:monitoring.coreos.com/v1:PrometheusRule", False),
    ],
)
def test_built_in_groups_are_told_from_custom_resource_groups(token, builtin):
    from aistack.engine.graph import Resource

    resource = Resource(token, "x", "urn", None, (), {}, {}, custom=True)
    assert is_builtin(resource) is builtin
