"""AIS-C4-01: stateful resources sit in a region the governance block allows."""

from collections.abc import Iterator

from aistack.config import ALLOWED_REGIONS_TAG
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import region_of, tags
from aistack.queries.aws_residency import STATEFUL


@rule(
    id="AIS-C4-01",
    checklist=["C4"],
    info="Every stateful resource carries the allowed regions and sits in one of them.",
    why="Residency is decided once, in governance; a bucket or log group created in another "
    "region moves data across a border nobody approved.",
    fix="Create the resource in one of the governance allowedRegions (or extend the list "
    "where residency rules permit), and tag it with governance tags.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for resource in graph.resources:
        if resource.type not in STATEFUL:
            continue
        allowed = tags(resource).get(ALLOWED_REGIONS_TAG)
        region = region_of(resource)
        if not allowed:
            yield fail(resource, f"no {ALLOWED_REGIONS_TAG} tag: residency is undeclared.")
        elif region not in allowed.split():
            yield fail(resource, f"in {region}, outside the allowed regions ({allowed}).")
        else:
            yield ok(resource, f"in {region}, within {allowed}.")
