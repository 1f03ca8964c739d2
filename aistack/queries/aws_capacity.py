"""Where AWS capacity runs: Batch compute environments and auto scaling groups, the launch
templates they name, their instance types, and the subnets (and so the zones) they use.
Shared by the zone rule (C2), the serving rules (through `aws_serving`) and network
separation (S1)."""

from __future__ import annotations

from collections.abc import Iterator

from aistack.engine.graph import Resource, StackGraph
from aistack.queries import as_list

__all__ = [
    "AUTO_SCALING_GROUP",
    "BATCH_COMPUTE_ENVIRONMENT",
    "LAUNCH_TEMPLATE",
    "SUBNET",
    "capacity_types_and_subnets",
    "launch_template",
    "subnets_by_id",
    "zone_of",
]

BATCH_COMPUTE_ENVIRONMENT = "aws:batch/computeEnvironment:ComputeEnvironment"
AUTO_SCALING_GROUP = "aws:autoscaling/group:Group"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
SUBNET = "aws:ec2/subnet:Subnet"


def subnets_by_id(graph: StackGraph) -> dict[str, Resource]:
    return {str(s.id or s.outputs.get("id")): s for s in graph.of_type(SUBNET)}


def zone_of(subnet: Resource) -> str | None:
    zone = subnet.inputs.get("availabilityZone") or subnet.outputs.get("availabilityZone")
    return str(zone) if zone else None


def launch_template(graph: StackGraph, spec: object) -> Resource | None:
    """The recorded launch template a `{id|launchTemplateId, name|launchTemplateName}` names."""
    if not isinstance(spec, dict):
        return None
    wanted_id = spec.get("id") or spec.get("launchTemplateId")
    wanted_name = spec.get("name") or spec.get("launchTemplateName")
    for template in graph.of_type(LAUNCH_TEMPLATE):
        if wanted_id and wanted_id in (template.id, template.outputs.get("id")):
            return template
        if wanted_name and wanted_name in (
            template.inputs.get("name"),
            template.outputs.get("name"),
        ):
            return template
    return None


def capacity_types_and_subnets(
    graph: StackGraph,
) -> Iterator[tuple[Resource, list[str], list[str]]]:
    """(capacity resource, instance types, subnet ids) for Batch environments and ASGs."""
    for environment in graph.of_type(BATCH_COMPUTE_ENVIRONMENT):
        resources = environment.inputs.get("computeResources") or {}
        yield (
            environment,
            [str(t) for t in as_list(resources.get("instanceTypes"))],
            [str(s) for s in as_list(resources.get("subnets"))],
        )
    for group in graph.of_type(AUTO_SCALING_GROUP):
        types: list[str] = []
        template = launch_template(graph, group.inputs.get("launchTemplate"))
        mixed = (group.inputs.get("mixedInstancesPolicy") or {}).get("launchTemplate") or {}
        template = template or launch_template(graph, mixed.get("launchTemplateSpecification"))
        if template is not None and template.inputs.get("instanceType"):
            types.append(str(template.inputs["instanceType"]))
        types += [
            str(o["instanceType"]) for o in mixed.get("overrides") or [] if o.get("instanceType")
        ]
        yield group, types, [str(s) for s in as_list(group.inputs.get("vpcZoneIdentifiers"))]
