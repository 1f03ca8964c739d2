"""AIS-C4-02: stateful GCP resources sit in a single region the governance block allows."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import (
    ALLOWED_REGIONS_LABEL,
    declared_allowed_regions,
    location_of,
    region_of_location,
)
from aistack.queries.gcp_residency import STATEFUL


@rule(
    id="AIS-C4-02",
    checklist=["C4"],
    info="Every stateful GCP resource declares the allowed regions and sits in one of them.",
    why="Residency is decided once, in governance; a bucket in a multi-region ('EU', 'US') "
    "or another region stores data where nobody approved.",
    fix="Create the resource with an explicit location among governance allowedRegions "
    "(a single region, not a multi- or dual-region), labelled with governance labels.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for resource in graph.resources:
        if resource.type not in STATEFUL:
            continue
        allowed = declared_allowed_regions(graph, resource)
        location = location_of(resource)
        # Zonal resources (a Workbench instance, a zonal cluster) are where their zone's
        # region is: europe-west4-a is in europe-west4.
        location = region_of_location(location) if location else location
        if resource.type == "gcp:pubsub/topic:Topic" and location is None:
            continue  # Topics store messages where they are published unless restricted.
        if not allowed:
            yield fail(resource, f"no {ALLOWED_REGIONS_LABEL} label: residency is undeclared.")
        elif location is None:
            yield fail(resource, "no explicit location: the provider's default decides.")
        elif location not in allowed:
            yield fail(resource, f"in {location}, outside the allowed regions {allowed}.")
        else:
            yield ok(resource, f"in {location}, within {allowed}.")
