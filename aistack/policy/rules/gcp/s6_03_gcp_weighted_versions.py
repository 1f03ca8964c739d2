"""AIS-S6-03: serving URL maps split traffic by weight, so a rollback is a weight change."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import URL_MAPS


@rule(
    id="AIS-S6-03",
    checklist=["S6"],
    info="URL maps route by weightedBackendServices whose weights sum to 100.",
    why="With one default service, rolling back means redeploying the old version while "
    "the new one serves. Weighted backend services (Envoy-based load balancers) keep the "
    "previous version deployable beside the new one: moving the weight is the rollback.",
    fix="Set default_route_action.weighted_backend_services, one per version, weights "
    "summing to 100 (gcp.InferenceTier versions[].weight).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for url_map in graph.resources:
        if url_map.type not in URL_MAPS:
            continue
        weighted = (url_map.inputs.get("defaultRouteAction") or {}).get(
            "weightedBackendServices"
        ) or []
        total = sum(int(w.get("weight") or 0) for w in weighted)
        if weighted and total == 100:
            yield ok(url_map, f"{len(weighted)} version(s) by weight.")
        elif weighted:
            yield fail(url_map, f"the weights sum to {total}, not 100.")
        else:
            yield fail(url_map, "one default service: a rollback is a redeployment.")
