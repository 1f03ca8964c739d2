"""AIS-C2-01: GPU capacity sits only in subnets whose zone offers its instance types.

A Batch compute environment or Auto Scaling group whose subnet is in a zone without its GPU
type never gets capacity there: jobs wait, scaling fails, and nothing says why. Zones are
checked against the aistack catalog (offline; real accounts map zone names differently, see
docs/components/aws/network.md).

For capacity with several types, a subnet is fine if its zone offers at least one of them
(the fleet places each type where it exists); it fails if its zone offers none, and a type
fails if none of the subnets' zones offer it. Subnets created outside the stack and types the
catalog does not know (CPU types, 'optimal') cannot be judged and are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aistack import catalog
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.aws_capacity import capacity_types_and_subnets, subnets_by_id, zone_of

_ZONE = re.compile(r"^(?P<region>[a-z]{2}(?:-[a-z]+)+-\d+)[a-z]$")


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
def check(graph: StackGraph) -> Iterator[Verdict]:
    subnets = subnets_by_id(graph)
    for capacity, types, subnet_ids in capacity_types_and_subnets(graph):
        found = [(subnets[i], zone_of(subnets[i])) for i in subnet_ids if i in subnets]
        placed = [(subnet, zone) for subnet, zone in found if zone and _ZONE.match(zone)]
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
