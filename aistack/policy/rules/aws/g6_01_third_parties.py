"""AIS-G6-01: resources that hold data declare which third-party services see it."""

from collections.abc import Iterator

from aistack.config import THIRD_PARTY_TAG as TAG
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import tags
from aistack.queries.aws_residency import STATEFUL


@rule(
    id="AIS-G6-01",
    checklist=["G6"],
    info="Stateful resources carry the declared list of third-party services (or 'none').",
    why="Who else sees the data is a governance decision; recording it on the data makes it "
    "auditable where the data lives.",
    fix="List them in governance.thirdPartyServices (an empty list renders as 'none') and "
    "tag resources with governance tags (aistack components and default tags do).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for resource in graph.resources:
        if resource.type not in STATEFUL:
            continue
        declared = tags(resource).get(TAG)
        if declared is None:
            yield fail(resource, "no declaration of third-party services.")
        else:
            yield ok(resource, f"third parties declared: {declared}.")
