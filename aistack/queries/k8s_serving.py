"""Graph queries over serving workloads on Kubernetes, shared by the S/G rules.

A serving workload is a Deployment or StatefulSet whose pods carry `aistack.dev/model-name`
(what k8s.InferenceService sets), or any Deployment or StatefulSet in a namespace labelled
`aistack.dev/tier: serve` (what k8s.TeamNamespace sets on serve namespaces): hand-written
serving Deployments in a serving namespace are judged as well.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from aistack.contracts.k8s import (
    GATEWAY_CONF_DIR,
    MODEL_NAME_LABEL,
    MODEL_VERSION_LABEL,
    POOL_LABEL,
)
from aistack.engine.graph import Resource, StackGraph
from aistack.queries.k8s import NAMESPACE, is_k8s_object, manifest, metadata_of, namespace_of

__all__ = [
    "GATEWAY_CONF_DIR",
    "MODEL_NAME_LABEL",
    "MODEL_VERSION_LABEL",
    "ServingWorkload",
    "autoscalers",
    "serving_pools",
    "routes",
    "serving_workloads",
]

_WORKLOAD_KINDS = ("kubernetes:apps/v1:Deployment", "kubernetes:apps/v1:StatefulSet")


@dataclass(frozen=True)
class ServingWorkload:
    resource: Resource
    document: dict[str, Any]
    name: str
    namespace: str | None

    @property
    def pod_labels(self) -> dict[str, str]:
        template = (self.document.get("spec") or {}).get("template") or {}
        return dict((template.get("metadata") or {}).get("labels") or {})

    @property
    def pod_spec(self) -> dict[str, Any]:
        template = (self.document.get("spec") or {}).get("template") or {}
        return dict(template.get("spec") or {})

    @property
    def annotations(self) -> dict[str, str]:
        return dict((self.document.get("metadata") or {}).get("annotations") or {})

    @property
    def model(self) -> str | None:
        return self.pod_labels.get(MODEL_NAME_LABEL)


def _serve_namespaces(graph: StackGraph) -> set[str]:
    names = set()
    for namespace in graph.of_type(NAMESPACE):
        labels = metadata_of(namespace).get("labels") or {}
        if labels.get("aistack.dev/tier") == "serve":
            names.add(str(metadata_of(namespace).get("name")))
    return names


def serving_workloads(graph: StackGraph) -> list[ServingWorkload]:
    serve = _serve_namespaces(graph)
    found = []
    for resource in graph.resources:
        if resource.type not in _WORKLOAD_KINDS:
            continue
        document = manifest(resource)
        workload = ServingWorkload(
            resource,
            document,
            str(document["metadata"].get("name")),
            namespace_of(resource) or document["metadata"].get("namespace"),
        )
        if workload.model is not None or workload.namespace in serve:
            found.append(workload)
    return found


def serving_pools(graph: StackGraph) -> set[str]:
    """The node pools (`aistack.dev/pool` values) serving workloads are pinned to: their
    nodes are the replicas', which the serving cost estimator prices."""
    pools = set()
    for workload in serving_workloads(graph):
        pool = (workload.pod_spec.get("nodeSelector") or {}).get(POOL_LABEL)
        if pool:
            pools.add(str(pool))
    return pools


def autoscalers(graph: StackGraph) -> Iterator[tuple[Resource, str, str | None, dict[str, Any]]]:
    """(resource, kind, namespace, spec) of every HPA and KEDA ScaledObject."""
    for resource in graph.resources:
        if not is_k8s_object(resource):
            continue
        if resource.type.endswith(":HorizontalPodAutoscaler") or (
            resource.type.startswith("kubernetes:keda.sh/")
            and resource.type.endswith(":ScaledObject")
        ):
            document = manifest(resource)
            yield resource, document["kind"], namespace_of(resource), document.get("spec") or {}


def scale_target(kind: str, spec: dict[str, Any]) -> str | None:
    """The Deployment (or StatefulSet) an autoscaler scales, by name."""
    target = spec.get("scaleTargetRef") or {}
    return target.get("name")


def routes(graph: StackGraph) -> Iterator[tuple[Resource, dict[str, Any]]]:
    """Gateway API HTTPRoutes, any version."""
    for resource in graph.resources:
        if resource.type.startswith(
            "kubernetes:gateway.networking.k8s.io/"
        ) and resource.type.endswith(":HTTPRoute"):
            yield resource, manifest(resource)
