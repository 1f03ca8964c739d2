"""AIS-C2-02: GCP GPU capacity is placed only in zones that offer its machine type."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import gpu_placements, machine_type_zones


@rule(
    id="AIS-C2-02",
    checklist=["C2"],
    info="Node pools, instances and managed instance groups run GPU machine types only in "
    "zones that offer them.",
    why="Each GPU machine type exists only in some zones of a region: a node pool or a "
    "MIG distributed over a zone without it fails to create there or waits forever for "
    "capacity that cannot exist (ZONE_RESOURCE_POOL_EXHAUSTED is the best case).",
    fix="Take the zones from gcp.Network (network.zones('training')), which are the zones "
    "offering every machine type of the tier, for nodeLocations or distributionPolicyZones.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for placement in gpu_placements(graph):
        offered = machine_type_zones(placement.machine_type, placement.region)
        if offered is None:
            continue
        wrong = [z for z in placement.zones if z not in offered]
        if wrong:
            where = sorted(offered) if offered else f"no zone of {placement.region}"
            yield fail(
                placement.resource,
                f"{placement.machine_type} is placed in {wrong}, which do not offer it "
                f"(catalog: {where}).",
            )
        else:
            yield ok(
                placement.resource,
                f"{placement.machine_type} only in {list(placement.zones)}, which offer it.",
            )
