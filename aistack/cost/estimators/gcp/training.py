"""Compute Engine GPU VM groups (gcp.TrainingPool, mig) at the catalog's Spot or on-demand
prices.

aistack: the profile's training GPU-hours, shared among the stack's GPU node pools and GPU
VM groups, / GPUs per VM = VM-hours, at the family's Spot fraction of the on-demand price
for Spot templates and at the on-demand price otherwise. A group created at target size 0
whose VMs delete themselves when idle bills only those hours; a group created with VMs
bills them all month. Local SSD and boot disks are left out (a few percent of a GPU VM).
Naive baseline, same work: enough on-demand VMs of the same type, running all month (at
least one), as a fixed-size group of GPU VMs does.
"""

from __future__ import annotations

import math

from aistack import catalog
from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimator
from aistack.engine.graph import Resource, StackGraph
from aistack.queries.gcp import (
    GKE_NODE_POOL,
    INSTANCE_GROUP_MANAGERS,
    is_gpu_node_pool,
    template_machine,
    template_region,
    training_gpu_groups,
)


@estimator(*INSTANCE_GROUP_MANAGERS)
def _gpu_group(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    # Serving groups (gcp.InferenceTier) are priced by their autoscaler: serving.py.
    template = next((t for g, t in training_gpu_groups(graph) if g.urn == resource.urn), None)
    if template is None:
        return None
    offer = catalog.find("gcp", template_machine(template) or "")
    region = template_region(template) or str(resource.inputs.get("region") or "")
    if offer is None or not offer.offered_in(region):
        return None
    sharers = len(training_gpu_groups(graph)) + sum(
        1 for pool in graph.of_type(GKE_NODE_POOL) if is_gpu_node_pool(pool)
    )
    gpu_hours = profile.training_gpu_hours_per_month / max(sharers, 1)
    vm_hours = gpu_hours / offer.gpu_count
    scheduling = template.inputs.get("scheduling") or {}
    spot = scheduling.get("provisioningModel") == "SPOT" or bool(scheduling.get("preemptible"))
    on_demand = offer.price(region)
    hourly = offer.spot_price(region) if spot else on_demand
    size = int(resource.inputs.get("targetSize") or 0)
    if size:
        kept = max(size, math.ceil(vm_hours / HOURS_PER_MONTH))
        ours = kept * HOURS_PER_MONTH * hourly
        basis_ours = f"{kept} VM(s) always on"
    else:
        ours = vm_hours * hourly
        basis_ours = "from 0 VMs, idle VMs delete themselves"
    naive_vms = max(1, math.ceil(vm_hours / HOURS_PER_MONTH))
    naive = naive_vms * HOURS_PER_MONTH * on_demand
    market = f"Spot ({offer.spot_fraction:.0%} of on-demand)" if spot else "on-demand"
    return (
        ours,
        naive,
        f"{gpu_hours:g} GPU-h = {vm_hours:.0f} h of {offer.name} {market}, {basis_ours}; "
        f"naive: {naive_vms} on-demand VM(s) always on",
    )
