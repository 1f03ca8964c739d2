"""AIS-S2-01: serving nodes run an optimised inference runtime from an image pinned by digest.

A general-purpose web server around a model wastes most of the GPU: vLLM, Triton and
TensorRT-LLM batch requests continuously and manage the KV cache, which is where serving
throughput comes from. The image must be pinned by digest, so what serves is what was
tested. What a node serves is read from its launch template's `aistack:serving-image` tag
(set by aws.InferenceTier), and the runtime from the image name (vllm, tritonserver,
tensorrt-llm) or an explicit `aistack:runtime` tag for images built on one of them.

This module also holds what the serving rules (S2-S7, G2-G5) share: how to tell serving
capacity and its load balancers from everything else. A serving group is an auto scaling
group behind a target group, or tagged `aistack:workload=inference`; its launch template
is a serving template; a serving load balancer is an application load balancer tagged for
inference, inside an inference tier, or forwarding to a serving group's target group.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aistack.engine.graph import Resource, StackGraph
from aistack.contracts.images import reference_problem
from aistack.policy import fail, ok, rule
from aistack.policy.rules.aws.c2_gpu_zones import (
    AUTO_SCALING_GROUP,
    LAUNCH_TEMPLATE,
    launch_template,
)
from aistack.queries import as_list, tags

# Mirrors aistack.aws.inference_tier (rules do not import components).
INFERENCE_TIER = "aistack:index:AwsInferenceTier"
WORKLOAD_TAG = "aistack:workload"
TIER_TAG = "aistack:inference-tier"
RUNTIME_TAG = "aistack:runtime"
SERVING_IMAGE_TAG = "aistack:serving-image"
LOAD_BALANCERS = ("aws:lb/loadBalancer:LoadBalancer", "aws:alb/loadBalancer:LoadBalancer")
LISTENERS = ("aws:lb/listener:Listener", "aws:alb/listener:Listener")
OPTIMISED_RUNTIMES = frozenset({"vllm", "triton", "tensorrt-llm"})
_RUNTIME_IN_NAME = re.compile(r"vllm|tritonserver|tensorrt-?llm|trtllm")


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


def serving_image_problem(template: Resource) -> str | None:
    """Why the template's serving image is not a pinned, optimised runtime; None if it is."""
    found = tags(template)
    image = found.get(SERVING_IMAGE_TAG)
    if not image:
        return (
            f"does not say which image it serves (no {SERVING_IMAGE_TAG} tag), so neither "
            "the runtime nor the pin can be checked"
        )
    problem = reference_problem(image)
    if problem is not None:
        return problem
    name = image.split("@", 1)[0].rsplit(":", 1)[0].lower()
    runtime = found.get(RUNTIME_TAG, "").lower()
    if runtime not in OPTIMISED_RUNTIMES and not _RUNTIME_IN_NAME.search(name):
        return (
            f"image {name} is not a known optimised runtime (vLLM, Triton, TensorRT-LLM) and "
            f"carries no {RUNTIME_TAG} tag naming one"
        )
    return None


def _checks(graph: StackGraph) -> Iterator:
    for template in serving_templates(graph):
        problem = serving_image_problem(template)
        if problem:
            yield fail(template, f"serving template {problem}.")
        else:
            image = tags(template)[SERVING_IMAGE_TAG]
            yield ok(template, f"serves {image.split('@', 1)[0]} pinned by digest.")


@rule(
    id="AIS-S2-01",
    checklist=["S2"],
    info="Serving nodes run vLLM, Triton or TensorRT-LLM from an image pinned by digest.",
    why="Optimised runtimes batch continuously and manage the KV cache, which is most of "
    "serving throughput per GPU; a digest makes what serves exactly what was tested.",
    fix="Use aws.InferenceTier with runtime vllm, triton or tensorrt-llm and image "
    "'repo@sha256:...'; on your own launch templates set the aistack:serving-image tag to the "
    "pinned image (and aistack:runtime when its name does not say the runtime).",
)
def check(graph):
    yield from _checks(graph)
