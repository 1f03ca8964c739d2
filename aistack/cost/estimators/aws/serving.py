"""Cost estimators for aws.InferenceTier: the GPU fleet per model version, the load balancer
and WAF.

The fleet of a version sits on its target group's line (the target group itself is free):
the auto scaling group token belongs to the training pool's estimator, and one token has one
estimator. Nodes are On-Demand (serving is not interrupted by Spot reclaims) at the
catalog's price in the tier's region.

Model, per version with traffic weight w (per cent), over a 730-hour month (the serving
model every platform shares, `aistack.cost.baseline.serving_units`):
  aistack: nodes = clamp(average replicas x w/100, min nodes, max nodes), where the profile's
           `inference_average_replicas` already counts the gateway cache (cache hits never
           reach a node); with the cache off, replicas are divided by (1 - cache hit ratio).
  naive:   the same service without the cache and without scaling in at night: nodes =
           max(average replicas x w/100 / (1 - cache hit ratio), min nodes), always on.
A version at weight 0 costs its standby (one warm node, or none) in both.
"""

from __future__ import annotations

from aistack import catalog
from aistack._registry import by_token
from aistack.contracts.aws import GATEWAY_CACHE_TAG, TRAFFIC_WEIGHT_TAG
from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimator
from aistack.cost.baseline import serving_units
from aistack.cost.prices import aws as prices
from aistack.engine.graph import Resource, StackGraph
from aistack.errors import AistackError
from aistack.queries import as_list, region_of, tags

TARGET_GROUP = "aws:lb/targetGroup:TargetGroup"
LOAD_BALANCER = "aws:lb/loadBalancer:LoadBalancer"
WEB_ACL = "aws:wafv2/webAcl:WebAcl"
GROUP = "aws:autoscaling/group:Group"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INFERENCE_TIER = by_token("AwsInferenceTier").token

#: Prompt plus answer through the load balancer, per request: an assumption for LCUs.
KB_PER_REQUEST = 20
# An ALB LCU is the largest of: 25 new connections/s, 3,000 active connections/min,
# 1 GB/hour processed (EC2 targets), 1,000 rule evaluations/s.
NEW_CONNECTIONS_PER_LCU = 25
GB_PER_HOUR_PER_LCU = 1.0


def _in_tier(graph: StackGraph, resource: Resource) -> bool:
    return any(a.type == INFERENCE_TIER for a in graph.ancestors(resource)) or (
        tags(resource).get("aistack:workload") == "inference"
    )


def _group_behind(graph: StackGraph, target_group: Resource) -> Resource | None:
    arn = target_group.outputs.get("arn")
    for group in graph.of_type(GROUP):
        if arn and arn in [str(a) for a in as_list(group.inputs.get("targetGroupArns"))]:
            return group
    return None


def _template_of(graph: StackGraph, group: Resource) -> Resource | None:
    spec = group.inputs.get("launchTemplate") or {}
    wanted = spec.get("id") if isinstance(spec, dict) else None
    return next((t for t in graph.of_type(LAUNCH_TEMPLATE) if wanted and t.id == wanted), None)


@estimator(TARGET_GROUP)
def _serving_fleet(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    group = _group_behind(graph, resource)
    template = _template_of(graph, group) if group is not None else None
    if group is None or template is None or not _in_tier(graph, group):
        return None
    region = region_of(template) or region_of(group) or "us-east-1"
    type_name = str(template.inputs.get("instanceType") or "")
    try:
        price = catalog.get(type_name, "aws").price(region)
    except AistackError:
        return None
    weight = int(tags(resource).get(TRAFFIC_WEIGHT_TAG) or 100)
    minimum = int(group.inputs.get("minSize") or 0)
    maximum = int(group.inputs.get("maxSize") or max(minimum, 1))
    cached = tags(template).get(GATEWAY_CACHE_TAG) == "on"
    units = serving_units(profile, weight, cached, minimum, maximum)
    nodes, naive_nodes, hit = units.ours, units.naive, units.hit
    per_node = price * HOURS_PER_MONTH
    basis = (
        f"{nodes:.2f} x {type_name} On-Demand at ${price:g}/h x {HOURS_PER_MONTH} h: weight "
        f"{weight}% of {profile.inference_average_replicas:g} average replicas, within "
        f"{minimum}-{maximum} nodes, gateway cache {'on' if cached else 'off'}. Naive: "
        f"{naive_nodes:.2f} nodes always on, no cache (replicas / (1 - {hit:g} hit ratio)), "
        "no scale-in at night"
    )
    return nodes * per_node, naive_nodes * per_node, basis


@estimator(LOAD_BALANCER)
def _load_balancer(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    if not _in_tier(graph, resource):
        return None
    per_hour = profile.inference_requests_per_month / HOURS_PER_MONTH
    connections = per_hour / 3600 / NEW_CONNECTIONS_PER_LCU
    processed = per_hour * KB_PER_REQUEST / 1e6 / GB_PER_HOUR_PER_LCU
    lcu = max(connections, processed)
    monthly = HOURS_PER_MONTH * (prices.ALB_HOUR + lcu * prices.ALB_LCU_HOUR)
    basis = (
        f"ALB ${prices.ALB_HOUR}/h + {lcu:.3f} LCU x ${prices.ALB_LCU_HOUR}/LCU-h: "
        f"{profile.inference_requests_per_month:,.0f} requests a month, one connection and "
        f"{KB_PER_REQUEST} KB each (assumed); the naive setup has a load balancer too"
    )
    return monthly, monthly, basis


@estimator(WEB_ACL)
def _web_acl(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    rules = len(as_list(resource.inputs.get("rules")))
    requests = profile.inference_requests_per_month / 1e6
    monthly = (
        prices.WAF_WEB_ACL_MONTH
        + rules * prices.WAF_RULE_MONTH
        + requests * prices.WAF_PER_MILLION_REQUESTS
    )
    basis = (
        f"WAF web ACL ${prices.WAF_WEB_ACL_MONTH}/month + {rules} rules x "
        f"${prices.WAF_RULE_MONTH} + {requests:g}M requests x "
        f"${prices.WAF_PER_MILLION_REQUESTS}/M (AWS baseline managed groups add no fee); "
        "the naive setup has no WAF"
    )
    return monthly, 0.0, basis
