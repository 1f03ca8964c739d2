"""What the AWS serving rules (S1-S7, G2-G5, D5) share: how to tell serving capacity and
its load balancers from everything else.

A serving group is an auto scaling group behind a target group, or tagged
`aistack:workload=inference`; its launch template is a serving template; a serving load
balancer is an application load balancer tagged for inference, inside an inference tier,
or forwarding to a serving group's target group.
"""

from __future__ import annotations

from aistack._registry import by_token
from aistack.config import WORKLOAD_TAG
from aistack.contracts.aws import TIER_TAG
from aistack.engine.graph import Resource, StackGraph
from aistack.queries import as_list, tags
from aistack.queries.aws_capacity import AUTO_SCALING_GROUP, LAUNCH_TEMPLATE, launch_template

__all__ = [
    "INFERENCE_TIER",
    "LISTENERS",
    "LOAD_BALANCERS",
    "TIER_TAG",
    "WORKLOAD_TAG",
    "forwarded_target_groups",
    "in_inference_tier",
    "is_application",
    "is_inference",
    "listeners_of",
    "serving_groups",
    "serving_load_balancers",
    "serving_templates",
    "template_of",
]

INFERENCE_TIER = by_token("AwsInferenceTier").token
LOAD_BALANCERS = ("aws:lb/loadBalancer:LoadBalancer", "aws:alb/loadBalancer:LoadBalancer")
LISTENERS = ("aws:lb/listener:Listener", "aws:alb/listener:Listener")


def is_inference(resource: Resource) -> bool:
    return tags(resource).get(WORKLOAD_TAG) == "inference"


def serving_groups(graph: StackGraph) -> list[Resource]:
    """Auto scaling groups that serve: behind a target group, or tagged for inference."""
    return [
        group
        for group in graph.of_type(AUTO_SCALING_GROUP)
        if group.inputs.get("targetGroupArns")
        or group.inputs.get("trafficSources")
        or is_inference(group)
    ]


def template_of(graph: StackGraph, group: Resource) -> Resource | None:
    mixed = (group.inputs.get("mixedInstancesPolicy") or {}).get("launchTemplate") or {}
    return launch_template(graph, group.inputs.get("launchTemplate")) or launch_template(
        graph, mixed.get("launchTemplateSpecification")
    )


def serving_templates(graph: StackGraph) -> list[Resource]:
    """Launch templates of serving groups, and any tagged for inference."""
    found: dict[str, Resource] = {}
    for group in serving_groups(graph):
        template = template_of(graph, group)
        if template is not None:
            found[template.urn] = template
    for template in graph.of_type(LAUNCH_TEMPLATE):
        if is_inference(template):
            found[template.urn] = template
    return list(found.values())


def is_application(balancer: Resource) -> bool:
    return (balancer.inputs.get("loadBalancerType") or "application") == "application"


def forwarded_target_groups(listener: Resource) -> list[str]:
    """Target group ARNs a listener's default actions forward to."""
    arns: list[str] = []
    for action in as_list(listener.inputs.get("defaultActions")):
        if not isinstance(action, dict) or action.get("type") != "forward":
            continue
        if action.get("targetGroupArn"):
            arns.append(str(action["targetGroupArn"]))
        for group in as_list((action.get("forward") or {}).get("targetGroups")):
            if isinstance(group, dict) and group.get("arn"):
                arns.append(str(group["arn"]))
    return list(dict.fromkeys(arns))


def listeners_of(graph: StackGraph, balancer: Resource) -> list[Resource]:
    arn = balancer.outputs.get("arn")
    return [
        listener
        for token in LISTENERS
        for listener in graph.of_type(token)
        if arn and listener.inputs.get("loadBalancerArn") == arn
    ]


def in_inference_tier(graph: StackGraph, resource: Resource) -> bool:
    return any(a.type == INFERENCE_TIER for a in graph.ancestors(resource))


def serving_load_balancers(graph: StackGraph) -> list[Resource]:
    """Application load balancers in front of model servers."""
    serving_target_groups = {
        str(arn)
        for group in serving_groups(graph)
        for arn in as_list(group.inputs.get("targetGroupArns"))
    }
    found = []
    for balancer in (b for token in LOAD_BALANCERS for b in graph.of_type(token)):
        if not is_application(balancer):
            continue
        forwards = {
            arn for lst in listeners_of(graph, balancer) for arn in forwarded_target_groups(lst)
        }
        if (
            is_inference(balancer)
            or in_inference_tier(graph, balancer)
            or (forwards & serving_target_groups)
        ):
            found.append(balancer)
    return found
