"""AIS-G6-03: GCP resources that hold data declare which third-party services see it."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import THIRD_PARTIES_LABEL, declared_by_component, labels
from aistack.queries.gcp_residency import STATEFUL


@rule(
    id="AIS-G6-03",
    checklist=["G6"],
    info=f"Stateful GCP resources carry {THIRD_PARTIES_LABEL}: the declared third-party "
    "services (or 'none').",
    why="Who else sees the data is a governance decision; recording it on the data makes it "
    "auditable where the data lives.",
    fix="List them in governance.thirdPartyServices (an empty list renders as 'none'); "
    "aistack GCP components label every resource with the governance labels.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for resource in graph.resources:
        if resource.type not in STATEFUL:
            continue
        # Key rings and log buckets take no labels: their component declares for them.
        declared = declared_by_component(
            graph, resource, lambda r: labels(r).get(THIRD_PARTIES_LABEL)
        )
        if declared is None:
            yield fail(resource, "no declaration of third-party services.")
        else:
            yield ok(resource, f"third parties declared: {declared}.")
