"""AIS-S6-02: every deployed model version is a backend of its route, so rollback is a weight."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_serving import routes, serving_workloads


@rule(
    id="AIS-S6-02",
    checklist=["S6"],
    info="Every serving version of a model is a weighted backend of an HTTPRoute in its "
    "namespace, and the route's weights send traffic somewhere.",
    why="Rollback by weight only works when the previous version is still deployed and "
    "routable: a version missing from the route needs a new route (and a `pulumi up` under "
    "pressure) before it can take traffic; a route whose weights are all 0 serves nothing.",
    fix="Use k8s.InferenceService: each version is a Service and a backendRef with its weight.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    backends: dict[tuple[str | None, str], int] = {}
    for resource, route in routes(graph):
        namespace = route["metadata"].get("namespace")
        weights = []
        for rule_ in (route.get("spec") or {}).get("rules") or []:
            for ref in rule_.get("backendRefs") or []:
                weight = ref.get("weight", 1)
                weights.append(weight)
                backends[(ref.get("namespace", namespace), ref.get("name"))] = weight
        if weights and sum(weights) == 0:
            yield fail(resource, f"route {route['metadata'].get('name')!r}: every weight is 0.")
    for workload in serving_workloads(graph):
        if workload.model is None:
            continue  # a hand-written workload: no version to route
        weight = backends.get((workload.namespace, workload.name))
        if weight is None:
            yield fail(workload.resource, f"{workload.name}: no route sends it traffic.")
        else:
            yield ok(workload.resource, f"{workload.name}: weight {weight} on its route.")
