"""Cost estimator for k8s.InferenceService: the replicas of each model version.

A Kubernetes object costs nothing itself; its replicas take GPU nodes. Each serving
Deployment carries what one replica costs an hour (`aistack.dev/replica-hourly-cost-usd`,
the service's `replicaHourlyCostUsd`) and its traffic weight; its bounds are its
autoscaler's (HPA or KEDA ScaledObject) or its fixed replica count. The model is
aws.InferenceTier's (docs/cost.md, `aistack.cost.baseline.serving_units`), per version with
weight w (per cent), over 730 hours:
  aistack: replicas = clamp(average replicas x w/100, min, max); the profile's
           `inference_average_replicas` already counts the gateway cache; with the cache
           off, replicas are divided by (1 - cache hit ratio).
  naive:   no cache and no scaling in: max(average replicas x w/100 / (1 - hit ratio), min),
           always on.
A version at weight 0 costs its standby (one warm replica, or none) in both.
"""

from __future__ import annotations

from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimator
from aistack.cost.baseline import serving_units
from aistack.engine.graph import Resource, StackGraph
from aistack.queries.k8s import manifest
from aistack.queries.k8s_serving import autoscalers, scale_target

DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def _bounds(graph: StackGraph, namespace: str | None, name: str, spec: dict) -> tuple[int, int]:
    for _, kind, where, scaler in autoscalers(graph):
        if where == namespace and scale_target(kind, scaler) == name:
            if kind == "ScaledObject":
                return int(scaler.get("minReplicaCount", 0)), int(
                    scaler.get("maxReplicaCount", 100)
                )
            return int(scaler.get("minReplicas", 1)), int(scaler["maxReplicas"])
    fixed = int(spec.get("replicas", 1))
    return fixed, fixed


@estimator(DEPLOYMENT)
def _serving_replicas(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    document = manifest(resource)
    metadata = document.get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    price_text = annotations.get("aistack.dev/replica-hourly-cost-usd")
    if price_text is None:
        return None
    price = float(price_text)
    weight = int(annotations.get("aistack.dev/traffic-weight", 100))
    minimum, maximum = _bounds(
        graph, metadata.get("namespace"), str(metadata.get("name")), document.get("spec") or {}
    )
    cached = annotations.get("aistack.dev/gateway-cache") == "on"
    units = serving_units(profile, weight, cached, minimum, maximum)
    aistack, naive, hit = units.ours, units.naive, units.hit
    per_replica = price * HOURS_PER_MONTH
    basis = (
        f"{aistack:.2f} replicas at ${price:g}/h x {HOURS_PER_MONTH} h: weight {weight}% of "
        f"{profile.inference_average_replicas:g} average replicas, within {minimum}-{maximum}, "
        f"gateway cache {'on' if cached else 'off'}. Naive: {naive:.2f} replicas always on, "
        f"no cache (replicas / (1 - {hit:g} hit ratio)), no scale-in at night"
    )
    return aistack * per_replica, naive * per_replica, basis
