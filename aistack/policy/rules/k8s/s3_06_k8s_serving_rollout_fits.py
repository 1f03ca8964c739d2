"""AIS-S3-06: a serving namespace's GPU quota, and the Karpenter NodePool its pods land on,
hold every version at its floor, one at its maximum, and the rolling update's surge."""

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from aistack.contracts.k8s import parse_quantity
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import GKE_NODE_POOL, node_config
from aistack.queries.k8s import builtin_manifests, is_gpu_resource
from aistack.queries.k8s_serving import (
    ServingWorkload,
    autoscalers,
    scale_target,
    serving_workloads,
)
from aistack.queries.karpenter import node_pools, template_spec


def _gpus_per_pod(workload: ServingWorkload) -> tuple[str, Decimal] | None:
    for container in workload.pod_spec.get("containers") or []:
        resources = container.get("resources") or {}
        for values in (resources.get("limits") or {}, resources.get("requests") or {}):
            for name, value in values.items():
                if is_gpu_resource(name):
                    return name, parse_quantity(str(value))
    return None


def _surge(workload: ServingWorkload, replicas: int) -> int:
    """Extra pods a rolling update adds (Deployments: maxSurge, default 25 % rounded up)."""
    strategy = (workload.document.get("spec") or {}).get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return 0
    surge = (strategy.get("rollingUpdate") or {}).get("maxSurge", "25%")
    if isinstance(surge, str) and surge.endswith("%"):
        return -(-replicas * int(surge[:-1]) // 100)
    return int(surge)


def _bounds(graph: StackGraph) -> dict[tuple[str | None, str], tuple[int, int]]:
    bounds = {}
    for _, kind, namespace, spec in autoscalers(graph):
        if kind == "ScaledObject":
            low, high = spec.get("minReplicaCount", 0), spec.get("maxReplicaCount", 100)
        else:
            low, high = spec.get("minReplicas", 1), spec.get("maxReplicas", 1)
        bounds[(namespace, str(scale_target(kind, spec)))] = (int(low), int(high))
    return bounds


def _quotas(graph: StackGraph) -> dict[str | None, dict[str, Decimal]]:
    quotas: dict[str | None, dict[str, Decimal]] = {}
    for _, document in builtin_manifests(graph):
        if document["kind"] != "ResourceQuota":
            continue
        hard = (document.get("spec") or {}).get("hard") or {}
        found = quotas.setdefault(document["metadata"].get("namespace"), {})
        for key, value in hard.items():
            if key.startswith("requests.") and is_gpu_resource(key.removeprefix("requests.")):
                found[key.removeprefix("requests.")] = parse_quantity(str(value))
    return quotas


def _pool_limit(
    graph: StackGraph, pod: dict[str, Any], resource: str
) -> tuple[str, Decimal] | None:
    """The GPU limit of the Karpenter NodePool whose nodes carry the pods' nodeSelector."""
    selector = pod.get("nodeSelector") or {}
    for pool in node_pools(graph):
        spec = pool.inputs.get("spec") or {}
        labels = dict(((spec.get("template") or {}).get("metadata") or {}).get("labels") or {})
        for requirement in template_spec(pool).get("requirements") or []:
            if requirement.get("operator") == "In" and len(requirement.get("values") or []) == 1:
                labels.setdefault(requirement["key"], requirement["values"][0])
        limit = (spec.get("limits") or {}).get(resource)
        if selector and limit is not None and all(labels.get(k) == v for k, v in selector.items()):
            return pool.name, parse_quantity(str(limit))
    return None


def _gke_pool_limit(graph: StackGraph, pod: dict[str, Any]) -> tuple[str, Decimal] | None:
    """The most GPUs of the GKE node pool whose node labels carry the pods' nodeSelector:
    its autoscaling maximum times the machine type's GPUs (aistack's catalog)."""
    from aistack import catalog

    selector = pod.get("nodeSelector") or {}
    for pool in graph.of_type(GKE_NODE_POOL):
        labels = node_config(pool).get("labels") or {}
        if not selector or any(labels.get(k) != v for k, v in selector.items()):
            continue
        machine = catalog.find("gcp", str(node_config(pool).get("machineType") or ""))
        nodes = (pool.inputs.get("autoscaling") or {}).get("totalMaxNodeCount")
        if machine is not None and nodes is not None:
            return pool.name, Decimal(int(nodes) * machine.gpu_count)
    return None


@rule(
    id="AIS-S3-06",
    checklist=["S3"],
    info="In each serving namespace, the GPU quota and the Karpenter NodePool the pods land "
    "on hold every version at its minimum, one at its maximum, and each version's rolling-"
    "update surge.",
    why="A `pulumi up` that changes the pod template rolls every version at once. A surge "
    "pod the ResourceQuota refuses (HTTP 403, exceeded quota) or the NodePool cannot launch "
    "stalls the rollout at maxUnavailable 0 until the up fails at the progress deadline, "
    "and an autoscaler whose maximum the quota cannot hold never reaches its cap.",
    fix="Raise the serving TeamNamespace's gpus (and the NodePool's limit), or lower the "
    "versions' maxReplicas; k8s.InferenceService checks this when it is built.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    bounds, quotas = _bounds(graph), _quotas(graph)
    groups: dict[tuple[str | None, str], list[tuple[ServingWorkload, int, int]]] = {}
    pods: dict[tuple[str | None, str], dict[str, Any]] = {}
    for workload in serving_workloads(graph):
        gpus = _gpus_per_pod(workload)
        if gpus is None:
            continue
        resource, per_pod = gpus
        fixed = (workload.document.get("spec") or {}).get("replicas")
        low, high = bounds.get((workload.namespace, workload.name), (fixed or 0, fixed or 0))
        # GPUs at the floor and at the maximum, each while the version rolls.
        at_low = int(per_pod) * (low + _surge(workload, low))
        at_high = int(per_pod) * (high + _surge(workload, high))
        key = (workload.namespace, resource)
        groups.setdefault(key, []).append((workload, at_low, at_high))
        pods.setdefault(key, workload.pod_spec)
    for (namespace, resource), members in groups.items():
        floors = sum(at_low for _, at_low, _ in members)
        need = max(floors - at_low + at_high for _, at_low, at_high in members)
        limits = []
        quota = quotas.get(namespace, {}).get(resource)
        if quota is not None:
            limits.append((f"namespace {namespace}'s quota", quota))
        pool = _pool_limit(graph, pods[(namespace, resource)], resource)
        if pool is not None:
            limits.append((f"NodePool {pool[0]}'s limit", pool[1]))
        gke = _gke_pool_limit(graph, pods[(namespace, resource)])
        if gke is not None:
            limits.append((f"GKE node pool {gke[0]}'s maximum", gke[1]))
        for workload, *_ in members:
            short = [f"{name} {limit}" for name, limit in limits if limit < need]
            if short:
                yield fail(
                    workload.resource,
                    f"{workload.name}: a rollout at the maximum needs {need} {resource}; "
                    + ", ".join(short)
                    + ".",
                )
            else:
                held = (
                    ", ".join(f"{name} {limit}" for name, limit in limits)
                    or "no quota or NodePool limit"
                )
                yield ok(
                    workload.resource, f"{workload.name}: {need} {resource} at most, within {held}."
                )
