"""Every namespaced object of the Kubernetes example stacks lands in a namespace that exists:
one the stack creates, one its operators stack creates (stacks/kubernetes-operators, the
config the stack's docstring names), or one the cluster has from the start. Kubernetes'
NamespaceLifecycle admission refuses an object in a namespace that does not exist, so one
wrong namespace stops the `up` (../shared/research/k8s-fidelity-audit.md, defect 4: the
EKS stack's GPU monitors targeted `gpu-operator`, which no stack creates).

A single stack's graph cannot see the other stack, so this is a test over the pairs rather
than a rule."""

from __future__ import annotations

import copy

import pytest

from aistack.engine.graph import StackGraph
from aistack.queries.k8s import builtin_manifests, custom_manifests
from tests._harness import previews

#: The namespaces every cluster has (kubernetes.io, "Namespaces": "Initial namespaces").
BUILT_IN = {"default", "kube-system", "kube-public", "kube-node-lease"}
#: (consumer stack, the operators stack's config it is installed after).
PAIRS = [
    ("stacks/kubernetes", "gke"),
    ("stacks/kubernetes-gke", "gke"),
    ("stacks/kubernetes-eks", "eks"),
]
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"


def _namespaces(graph: StackGraph) -> tuple[set[str], dict[str, list[str]]]:
    """(namespaces the graph creates, {namespace: objects placed in it})."""
    created: set[str] = set()
    placed: dict[str, list[str]] = {}
    for _, document in [*builtin_manifests(graph), *custom_manifests(graph)]:
        metadata = document.get("metadata") or {}
        if document.get("kind") == "Namespace":
            created.add(str(metadata.get("name")))
        elif metadata.get("namespace"):
            where = f"{document.get('kind')}/{metadata.get('name')}"
            placed.setdefault(str(metadata["namespace"]), []).append(where)
    for release in graph.of_type(HELM_RELEASE):
        namespace = str(release.inputs.get("namespace") or "default")
        placed.setdefault(namespace, []).append(f"Release/{release.inputs.get('name')}")
        if release.inputs.get("createNamespace"):
            created.add(namespace)
    return created, placed


def _missing(consumer: StackGraph, operators: StackGraph) -> dict[str, list[str]]:
    created, placed = _namespaces(consumer)
    created |= _namespaces(operators)[0] | BUILT_IN
    return {namespace: objects for namespace, objects in placed.items() if namespace not in created}


@pytest.mark.parametrize(("stack", "operators"), PAIRS)
def test_every_object_lands_in_a_namespace_that_exists(stack, operators):
    consumer = previews.run_project(previews.ROOT / stack)
    installed = previews.run_project(previews.ROOT / "stacks/kubernetes-operators", operators)
    assert _missing(consumer, installed) == {}


@pytest.mark.parametrize("operators", ["dev", "eks", "gke"])
def test_the_operators_stack_creates_every_namespace_it_installs_into(operators):
    graph = previews.run_project(previews.ROOT / "stacks/kubernetes-operators", operators)
    assert _missing(graph, StackGraph("none", "none", [], {})) == {}


def test_an_object_in_a_namespace_nobody_creates_is_found():
    """The audit's EKS defect, put back: the monitors in `gpu-operator`."""
    consumer = copy.deepcopy(previews.run_project(previews.ROOT / "stacks/kubernetes-eks"))
    installed = previews.run_project(previews.ROOT / "stacks/kubernetes-operators", "eks")
    monitor = next(r for r in consumer.resources if r.type.endswith(":ServiceMonitor"))
    monitor.inputs["metadata"]["namespace"] = "gpu-operator"
    monitor.outputs.setdefault("metadata", {})["namespace"] = "gpu-operator"
    assert list(_missing(consumer, installed)) == ["gpu-operator"]
