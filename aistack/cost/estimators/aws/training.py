"""Training capacity: the profile's GPU-hours on Spot at the catalog's prices.

aistack: GPU-hours / GPUs per node = node-hours, at the Spot fraction of the on-demand
price (the family's typical discount, from the catalog), plus the encrypted root volume
for those hours. Capacity scales to zero, so nothing else is billed.
Naive baseline, same work: enough On-Demand nodes of the same type to do it, left running
all month (at least one), with the root volume always attached.
"""

from __future__ import annotations

import math

from aistack import catalog
from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimator
from aistack.cost.prices import aws as prices
from aistack.engine.graph import Resource, StackGraph
from aistack.queries import region_of, tags
from aistack.queries.aws_training import COMPUTE_ENVIRONMENT, GROUP, training_groups


def _pools(graph: StackGraph) -> int:
    return len(graph.of_type(COMPUTE_ENVIRONMENT)) + len(training_groups(graph)) or 1


def _root_gb(graph: StackGraph, resource: Resource) -> int:
    pool = tags(resource).get("aistack:pool")
    for template in graph.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        if tags(template).get("aistack:pool") == pool:
            for mapping in template.inputs.get("blockDeviceMappings") or []:
                return int((mapping.get("ebs") or {}).get("volumeSize") or 0)
    return 0


def _estimate(
    resource: Resource, graph: StackGraph, profile: WorkloadProfile, types: list[str], spot: bool
):
    found = [catalog.find("aws", name) for name in types]
    offers = [offer for offer in found if offer is not None]
    region = region_of(resource)
    if not offers or region is None:
        return None
    offer = min(offers, key=lambda o: o.price_per_gpu_hour(region))
    gpu_hours = profile.training_gpu_hours_per_month / _pools(graph)
    node_hours = gpu_hours / offer.gpu_count
    on_demand = offer.price(region)
    hourly = offer.spot_price(region) if spot else on_demand
    root = _root_gb(graph, resource) * prices.GP3_GB_MONTH
    ours = node_hours * hourly + root * node_hours / HOURS_PER_MONTH
    naive_nodes = max(1, math.ceil(node_hours / HOURS_PER_MONTH))
    naive = naive_nodes * HOURS_PER_MONTH * on_demand + naive_nodes * root
    market = f"Spot ({offer.spot_fraction:.0%} of on-demand)" if spot else "On-Demand"
    return (
        ours,
        naive,
        f"{gpu_hours:g} GPU-h = {node_hours:.0f} h of {offer.name} {market}, scale to zero; "
        f"naive: {naive_nodes} On-Demand node(s) always on",
    )


@estimator(COMPUTE_ENVIRONMENT)
def _batch(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    compute = resource.inputs.get("computeResources") or {}
    return _estimate(
        resource,
        graph,
        profile,
        list(compute.get("instanceTypes") or []),
        compute.get("type") in ("SPOT", "FARGATE_SPOT"),
    )


@estimator(GROUP)
def _group(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    if tags(resource).get("aistack:workload") != "training":
        return None
    policy = resource.inputs.get("mixedInstancesPolicy") or {}
    overrides = (policy.get("launchTemplate") or {}).get("overrides") or []
    distribution = policy.get("instancesDistribution") or {}
    spot = distribution.get("onDemandPercentageAboveBaseCapacity", 100) < 100
    return _estimate(
        resource,
        graph,
        profile,
        [o["instanceType"] for o in overrides if "instanceType" in o],
        spot,
    )
