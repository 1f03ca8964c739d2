"""AIS-G5-02: every serving workload records its fallback, and a previous version exists
to fall back to when it says so."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_serving import serving_workloads


@rule(
    id="AIS-G5-02",
    checklist=["G5"],
    info="Every serving Deployment records what its gateway answers while the model server "
    "is down (aistack.dev/fallback: error or previous_version); previous_version needs "
    "another version of the model deployed in the namespace.",
    why="A model server is down for minutes at a time: while it loads, after an OOM, on a "
    "node upgrade. Clients need a fast, well-formed answer (a JSON 503 with Retry-After) "
    "or the previous version, not a hung connection or an HTML error page.",
    fix="Use k8s.InferenceService (fallback: error or previous_version).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    workloads = serving_workloads(graph)
    versions: dict[tuple[str | None, str | None], int] = {}
    for workload in workloads:
        key = (workload.namespace, workload.model)
        versions[key] = versions.get(key, 0) + 1
    for workload in workloads:
        fallback = workload.annotations.get("aistack.dev/fallback")
        if fallback not in ("error", "previous_version"):
            yield fail(workload.resource, f"{workload.name}: no fallback recorded.")
        elif fallback == "previous_version" and versions[(workload.namespace, workload.model)] < 2:
            yield fail(workload.resource, f"{workload.name}: no previous version to fall back to.")
        else:
            yield ok(workload.resource, f"{workload.name}: falls back with {fallback!r}.")
