"""AIS-C2-01: GPU capacity sits only in subnets whose zone offers its instance types.

A Batch compute environment or Auto Scaling group whose subnet is in a zone without its GPU
type never gets capacity there: jobs wait, scaling fails, and nothing says why. Zones are
checked against the aistack catalog (offline; real accounts map zone names differently, see
docs/components/network.md).

For capacity with several types, a subnet is fine if its zone offers at least one of them
(the fleet places each type where it exists); it fails if its zone offers none, and a type
fails if none of the subnets' zones offer it. Subnets created outside the stack and types the
catalog does not know (CPU types, 'optimal') cannot be judged and are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from aistack import catalog
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import fail, ok, rule
from aistack.queries import as_list

BATCH_COMPUTE_ENVIRONMENT = "aws:batch/computeEnvironment:ComputeEnvironment"
AUTO_SCALING_GROUP = "aws:autoscaling/group:Group"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
SUBNET = "aws:ec2/subnet:Subnet"

_ZONE = re.compile(r"^(?P<region>[a-z]{2}(?:-[a-z]+)+-\d+)[a-z]$")


def subnets_by_id(graph: StackGraph) -> dict[str, Resource]:
    return {str(s.id or s.outputs.get("id")): s for s in graph.of_type(SUBNET)}


def zone_of(subnet: Resource) -> str | None:
    zone = subnet.inputs.get("availabilityZone") or subnet.outputs.get("availabilityZone")
    return str(zone) if zone else None


def launch_template(graph: StackGraph, spec: Any) -> Resource | None:
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


def _catalog_zones(type_name: str, region: str) -> set[str] | None:
    """Zones offering `type_name` (or any type of family `type_name`); None if unknown."""
    entry = catalog.find("aws", type_name)
    members = [entry] if entry else []
    if not members and "." not in type_name:
        members = [t for t in catalog.instance_types("aws") if t.family == type_name.lower()]
    if not members:
        return None
    return {zone for t in members if t.offered_in(region) for zone in t.zones(region)}


@rule(
    id="AIS-C2-01",
    checklist=["C2"],
    info="Subnets of GPU capacity are in zones that offer its instance types.",
    why="GPU types exist only in some zones of a region; capacity pointed at a subnet in "
    "another zone waits forever for instances that cannot launch there.",
    fix="Place the compute environment or Auto Scaling group in subnets from aws.Network "
    "(network.subnet_ids('training') or ('inference')), which exist only in zones offering "
    "the types, or drop the subnets whose zone lacks them.",
)
def check(graph):
    subnets = subnets_by_id(graph)
    for capacity, types, subnet_ids in capacity_types_and_subnets(graph):
        placed = [(subnets[i], zone_of(subnets[i])) for i in subnet_ids if i in subnets]
        placed = [(subnet, zone) for subnet, zone in placed if zone and _ZONE.match(zone)]
        if not placed:
            continue
        region = _ZONE.match(placed[0][1]).group("region")  # type: ignore[union-attr]
        offered = {
            t: z for t in dict.fromkeys(types) if (z := _catalog_zones(t, region)) is not None
        }
        if not offered:
            continue
        problems = []
        for subnet, zone in placed:
            if not any(zone in zones for zones in offered.values()):
                problems.append(
                    f"subnet {subnet.name} is in {zone}, which offers none of "
                    f"{list(offered)} in the catalog"
                )
        used = {zone for _, zone in placed}
        for type_name, zones in offered.items():
            if not zones & used:
                where = sorted(zones) if zones else f"no zone of {region}"
                problems.append(
                    f"{type_name} is offered in none of the subnets' zones {sorted(used)} "
                    f"(catalog: {where})"
                )
        if problems:
            yield fail(capacity, "; ".join(problems) + ".")
        else:
            yield ok(
                capacity,
                f"every subnet's zone ({', '.join(sorted(used))}) offers {list(offered)}.",
            )
