"""Graph queries over Kubernetes objects, shared by rules, scanners and validators.

Needs no pulumi_kubernetes: it reads the recorded graph. The recorded inputs of a
pulumi-kubernetes resource already are the object's JSON (camelCase, `apiVersion`, `kind`,
`metadata`, `spec`...); `manifest` adds what the provider and the API server decide (the
auto-generated name, the namespace) and leaves out what the server writes (uid,
resourceVersion, ...), so the result is what `kubectl apply` would take.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aistack.contracts.k8s import KUEUE_GROUP, MAX_QUEUE_GPUS, parse_quantity
from aistack.engine.graph import Resource, StackGraph
from aistack.engine.k8s_cloud import is_builtin_api
from aistack.queries import revealed

__all__ = [
    "KUEUE_GROUP",
    "MAX_QUEUE_GPUS",
    "NAMESPACE",
    "NETWORK_POLICY",
    "RESOURCE_QUOTA",
    "SECRET",
    "SERVICE_ACCOUNT",
    "SYSTEM_NAMESPACES",
    "api_version_and_kind",
    "builtin_manifests",
    "custom_manifests",
    "is_builtin",
    "job_templates",
    "JobTemplate",
    "pod_specs",
    "is_gpu_resource",
    "is_k8s_object",
    "kueue_objects",
    "manifest",
    "metadata_of",
    "namespace_bundles",
    "namespace_of",
    "objects_in",
    "parse_quantity",
    "selector_matches",
]

NAMESPACE = "kubernetes:core/v1:Namespace"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
SECRET = "kubernetes:core/v1:Secret"
RESOURCE_QUOTA = "kubernetes:core/v1:ResourceQuota"
LIMIT_RANGE = "kubernetes:core/v1:LimitRange"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"

#: Namespaces Kubernetes owns, where add-ons (device plugins, CNI, DNS) legitimately run
#: privileged and unquota'd: judged by their installers, not by aistack's namespace rules.
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})

#: Keys the API server owns in `metadata`: a manifest to apply leaves them out.
_SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")
#: Patch resources (server-side apply of part of an existing object) and Helm/YAML
#: components are not whole objects.
_NOT_OBJECTS = re.compile(r"Patch$|^(Chart|ConfigGroup|ConfigFile|Directory|Release)$")


def api_version_and_kind(token: str) -> tuple[str, str]:
    """`kubernetes:core/v1:Namespace` -> (`v1`, `Namespace`);
    `kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue` -> its apiVersion and kind."""
    _, api_version, kind = token.split(":", 2)
    return api_version.removeprefix("core/"), kind


def is_k8s_object(resource: Resource) -> bool:
    if not resource.type.startswith("kubernetes:") or not resource.custom:
        return False
    return not _NOT_OBJECTS.search(api_version_and_kind(resource.type)[1])


def is_builtin(resource: Resource) -> bool:
    """A kind the API server serves itself (kubernetes-validate has its schema), not a
    custom resource."""
    return is_builtin_api(api_version_and_kind(resource.type)[0])


def manifest(resource: Resource) -> dict[str, Any]:
    """The object as `kubectl apply` would take it: the program's inputs, with the name and
    namespace the provider gave it and without the fields the server writes."""
    api_version, kind = api_version_and_kind(resource.type)
    document: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    document.update(
        {
            key: revealed(value)
            for key, value in resource.inputs.items()
            if key not in ("apiVersion", "kind")
        }
    )
    metadata = dict(resource.inputs.get("metadata") or {})
    given = resource.outputs.get("metadata") or {}
    for key in ("name", "namespace", "annotations"):
        if given.get(key):
            metadata[key] = given[key]
    document["metadata"] = {k: v for k, v in metadata.items() if k not in _SERVER_METADATA}
    return document


def builtin_manifests(graph: StackGraph) -> list[tuple[Resource, dict[str, Any]]]:
    """Every built-in Kubernetes object in the graph with its manifest."""
    return [(r, manifest(r)) for r in graph.resources if is_k8s_object(r) and is_builtin(r)]


def custom_manifests(graph: StackGraph) -> list[tuple[Resource, dict[str, Any]]]:
    """Every custom resource (an operator's kind: Kueue, Karpenter, Prometheus Operator)
    in the graph with its manifest."""
    return [(r, manifest(r)) for r in graph.resources if is_k8s_object(r) and not is_builtin(r)]


def namespace_bundles(graph: StackGraph) -> dict[str, list[dict[str, Any]]]:
    """The built-in objects of each namespace the stack creates (the Namespace first), as
    manifests: the unit to scan together. checkov's NetworkPolicy check (CKV2_K8S_6)
    matches policies to pods by labels alone, across namespaces, so only a per-namespace
    bundle tells a namespace with a default deny from one without."""
    bundles: dict[str, list[dict[str, Any]]] = {}
    for namespace in graph.of_type(NAMESPACE):
        name = namespace_of(namespace)
        if name:
            bundles[name] = [manifest(namespace)]
    for resource, document in builtin_manifests(graph):
        name = namespace_of(resource)
        if resource.type != NAMESPACE and name in bundles:
            bundles[name].append(document)
    return bundles


def namespace_of(resource: Resource) -> str | None:
    """The namespace an object lives in (as the provider placed it); None when
    cluster-scoped. A Namespace's own name counts as its namespace."""
    metadata = resource.outputs.get("metadata") or resource.inputs.get("metadata") or {}
    if resource.type == NAMESPACE:
        return metadata.get("name")
    return metadata.get("namespace")


def objects_in(
    graph: StackGraph, namespace: str | None, token: str | None = None
) -> list[Resource]:
    """The objects of `token` (every kind when None) inside `namespace` (None: those
    placed in none)."""
    return [
        r
        for r in graph.resources
        if is_k8s_object(r)
        and r.type != NAMESPACE
        and (token is None or r.type == token)
        and namespace_of(r) == namespace
    ]


def metadata_of(resource: Resource) -> dict[str, Any]:
    return dict(resource.outputs.get("metadata") or resource.inputs.get("metadata") or {})


# ---- quantities -------------------------------------------------------------------------

# parse_quantity: aistack.contracts.k8s (components read quantities too).


# ---- job templates ------------------------------------------------------------------------

#: Kinds a job template may hold (k8s.TrainingJobTemplate renders one or the other).
TEMPLATE_KINDS = {("batch/v1", "Job"), ("jobset.x-k8s.io/v1alpha2", "JobSet")}


@dataclass(frozen=True)
class JobTemplate:
    """A Job or JobSet kept in a ConfigMap to be submitted later (a Job in the stack would
    make `pulumi up` wait for it to finish): the ConfigMap, the data key, the object."""

    config_map: Resource
    key: str
    document: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.document.get("kind"))

    @property
    def name(self) -> str:
        meta = self.document.get("metadata") or {}
        return str(meta.get("name") or meta.get("generateName") or self.key)


def job_templates(graph: StackGraph) -> list[JobTemplate]:
    """Every Job or JobSet held in a ConfigMap's data (JSON or YAML), whoever wrote it."""
    import json

    import yaml

    found = []
    for config_map in graph.of_type(CONFIG_MAP):
        data = revealed(config_map.inputs.get("data")) or {}
        if not isinstance(data, dict):
            continue
        for key, text in sorted(data.items()):
            if not isinstance(text, str) or "kind" not in text:
                continue
            try:
                document = json.loads(text)
            except ValueError:
                try:
                    document = yaml.safe_load(text)
                except yaml.YAMLError:
                    continue
            if isinstance(document, dict) and (
                (document.get("apiVersion"), document.get("kind")) in TEMPLATE_KINDS
            ):
                found.append(JobTemplate(config_map, key, document))
    return found


def pod_specs(document: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(Job spec, pod spec) for a Job, or for each replicated Job of a JobSet."""
    if document.get("kind") == "Job":
        jobs = [document.get("spec") or {}]
    else:
        jobs = [
            (replicated.get("template") or {}).get("spec") or {}
            for replicated in (document.get("spec") or {}).get("replicatedJobs") or []
        ]
    return [(job, (job.get("template") or {}).get("spec") or {}) for job in jobs]


# ---- Kueue ------------------------------------------------------------------------------

# KUEUE_GROUP and MAX_QUEUE_GPUS: aistack.contracts.k8s.


def kueue_objects(graph: StackGraph, kind: str) -> list[Resource]:
    """Every Kueue object of `kind` (ClusterQueue, LocalQueue, ResourceFlavor, ...), any
    API version."""
    return [
        r
        for r in graph.resources
        if r.type.startswith(f"kubernetes:{KUEUE_GROUP}/") and r.type.endswith(f":{kind}")
    ]


def is_gpu_resource(name: str) -> bool:
    """An extended resource a device plugin advertises (`nvidia.com/gpu`, `amd.com/gpu`):
    domain-qualified and outside Kubernetes' own `kubernetes.io` domain."""
    return "/" in name and not name.split("/", 1)[0].endswith("kubernetes.io")


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, Any]) -> bool:
    """Whether a metav1.LabelSelector selects an object with `labels` (apimachinery
    LabelSelectorAsSelector: matchLabels and matchExpressions are ANDed; a null selector
    selects nothing, an empty one everything)."""
    if selector is None:
        return False
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression.get("key"), expression.get("operator")
        values = list(expression.get("values") or [])
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True
