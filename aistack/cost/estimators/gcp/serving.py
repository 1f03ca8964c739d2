"""Cost estimator for gcp.InferenceTier: the VMs of each model version, priced on its
regional autoscaler (the group is left to it, so nothing is counted twice; `training.py`
prices training groups only).

The model is aws.InferenceTier's and k8s.InferenceService's (docs/cost.md,
`aistack.cost.baseline.serving_units`), per version
with weight w (per cent), over 730 hours, at the catalog's on-demand price of the
template's machine type:
  aistack: VMs = clamp(average replicas x w/100, min, max); the profile's
           `inference_average_replicas` already counts the gateway cache; with the cache
           off, VMs are divided by (1 - cache hit ratio).
  naive:   no cache and no scaling in: max(average replicas x w/100 / (1 - hit ratio), min),
           always on.
A version at weight 0 costs its standby (one warm VM, or none) in both. The load balancer,
Cloud Armor and logs are left out (small beside GPU VMs).
"""

from __future__ import annotations

from aistack import catalog
from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimator
from aistack.cost.baseline import serving_units
from aistack.engine.graph import Resource, StackGraph
from aistack.queries.gcp import (
    INSTANCE_GROUP_MANAGERS,
    groups_using,
    serving_templates,
    template_machine,
    template_region,
)

REGION_AUTOSCALER = "gcp:compute/regionAutoscaler:RegionAutoscaler"


def _serving_template(graph: StackGraph, autoscaler: Resource) -> Resource | None:
    target = str(autoscaler.inputs.get("target") or "")
    for template in serving_templates(graph):
        for group in groups_using(graph, template):
            if group.type in INSTANCE_GROUP_MANAGERS and target in {
                str(group.id),
                str(group.outputs.get("selfLink") or ""),
            }:
                return template
    return None


@estimator(REGION_AUTOSCALER)
def _serving_vms(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    template = _serving_template(graph, resource)
    if template is None:
        return None
    offer = catalog.find("gcp", template_machine(template) or "")
    region = template_region(template) or ""
    if offer is None or not offer.offered_in(region):
        return None
    labels = template.inputs.get("labels") or {}
    weight = int(labels.get("aistack-traffic-weight", 100))
    policy = resource.inputs.get("autoscalingPolicy") or {}
    minimum, maximum = int(policy.get("minReplicas") or 0), int(policy.get("maxReplicas") or 1)
    cached = labels.get("aistack-gateway-cache") == "on"
    units = serving_units(profile, weight, cached, minimum, maximum)
    ours, naive, hit = units.ours, units.naive, units.hit
    price = offer.price(region)
    per_vm = price * HOURS_PER_MONTH
    basis = (
        f"{ours:.2f} {offer.name} VMs on-demand at ${price:g}/h x {HOURS_PER_MONTH} h: weight "
        f"{weight}% of {profile.inference_average_replicas:g} average replicas, within "
        f"{minimum}-{maximum}, gateway cache {'on' if cached else 'off'}. Naive: {naive:.2f} "
        f"VMs always on, no cache (replicas / (1 - {hit:g} hit ratio)), no scale-in at night"
    )
    return ours * per_vm, naive * per_vm, basis
