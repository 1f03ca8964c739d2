"""GKE: GPU node pools at the catalog's Spot or on-demand prices, and the cluster fee.

aistack: the profile's training GPU-hours, shared among the stack's GPU node pools, / GPUs
per node = node-hours, at the family's Spot fraction of the on-demand price (the catalog's
typical discount) for Spot pools and at the on-demand price otherwise (flex-start is billed
at Dynamic Workload Scheduler prices, which the catalog does not hold: on-demand is the
upper bound). The pools scale to zero, so idle hours cost nothing.
Naive baseline, same work: enough on-demand nodes of the same type to do it, running all
month (at least one), as a fixed-size GPU pool does.
A pool the stack's serving Deployments are pinned to (their nodeSelector's `aistack.dev/pool`)
has no line of its own: its nodes are the replicas, priced by the serving estimator
(`k8s/serving.py`), and it takes no share of the training GPU-hours.
The cluster: GKE's management fee, $0.10 per cluster-hour for Standard clusters (GKE
pricing page, "Cluster management fee"; the monthly free-tier credit covers one zonal or
Autopilot cluster per billing account, not a regional one), the same in both columns.
"""

from __future__ import annotations

import math

from aistack import catalog
from aistack.contracts.k8s import POOL_LABEL
from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimator
from aistack.engine.graph import Resource, StackGraph
from aistack.queries.gcp import (
    GKE_CLUSTER,
    GKE_NODE_POOL,
    is_gpu_node_pool,
    node_config,
)
from aistack.queries.k8s_serving import serving_pools

#: GKE Standard cluster management fee, USD per cluster-hour (GKE pricing, 2026-09).
CLUSTER_FEE_PER_HOUR = 0.10


def _region(resource: Resource) -> str | None:
    location = str(resource.inputs.get("location") or "")
    parts = location.split("-")
    # A zone (europe-west4-a) names its region by its first two parts.
    return "-".join(parts[:2]) if len(parts) == 3 else location or None


def _pool_label(resource: Resource) -> str | None:
    labels = node_config(resource).get("labels") or {}
    return labels.get(POOL_LABEL)


@estimator(GKE_NODE_POOL)
def _gpu_pool(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    serving = serving_pools(graph)
    if not is_gpu_node_pool(resource) or _pool_label(resource) in serving:
        return None
    config = node_config(resource)
    offer = catalog.find("gcp", str(config.get("machineType") or ""))
    region = _region(resource)
    if offer is None or region is None or not offer.offered_in(region):
        return None
    pools = [
        p
        for p in graph.of_type(GKE_NODE_POOL)
        if is_gpu_node_pool(p) and _pool_label(p) not in serving
    ]
    gpu_hours = profile.training_gpu_hours_per_month / max(len(pools), 1)
    node_hours = gpu_hours / offer.gpu_count
    on_demand = offer.price(region)
    spot = bool(config.get("spot") or config.get("preemptible"))
    hourly = offer.spot_price(region) if spot else on_demand
    scaling = resource.inputs.get("autoscaling") or {}
    low = scaling.get("totalMinNodeCount", scaling.get("minNodeCount"))
    fixed = resource.inputs.get("nodeCount")
    if not scaling or low or fixed:
        # Nodes that never scale to zero bill all month, whatever the work.
        kept = max(int(fixed or low or 1), math.ceil(node_hours / HOURS_PER_MONTH))
        ours = kept * HOURS_PER_MONTH * hourly
        basis_ours = f"{kept} node(s) always on"
    else:
        ours = node_hours * hourly
        basis_ours = "scale to zero"
    naive_nodes = max(1, math.ceil(node_hours / HOURS_PER_MONTH))
    naive = naive_nodes * HOURS_PER_MONTH * on_demand
    market = f"Spot ({offer.spot_fraction:.0%} of on-demand)" if spot else "on-demand"
    return (
        ours,
        naive,
        f"{gpu_hours:g} GPU-h = {node_hours:.0f} h of {offer.name} {market}, {basis_ours}; "
        f"naive: {naive_nodes} on-demand node(s) always on",
    )


@estimator(GKE_CLUSTER)
def _cluster(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    fee = CLUSTER_FEE_PER_HOUR * HOURS_PER_MONTH
    return fee, fee, f"GKE cluster management fee ${CLUSTER_FEE_PER_HOUR:.2f}/h"
