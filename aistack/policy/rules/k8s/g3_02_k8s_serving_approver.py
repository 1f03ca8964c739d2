"""AIS-G3-02: in production every served model version names who approved it."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_serving import serving_workloads


@rule(
    id="AIS-G3-02",
    checklist=["G3"],
    info="Serving Deployments in production (aistack.dev/environment: prod) carry "
    "aistack.dev/approved-by.",
    why="A model version reaching production users is a release: someone must have looked "
    "at its evaluation and said yes, and after an incident the record must say who.",
    fix="Set versions[].approvedBy on k8s.InferenceService (required in prod).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for workload in serving_workloads(graph):
        labels = (workload.document.get("metadata") or {}).get("labels") or {}
        if labels.get("aistack.dev/environment") != "prod":
            continue
        approver = workload.annotations.get("aistack.dev/approved-by")
        if approver:
            yield ok(workload.resource, f"{workload.name}: approved by {approver}.")
        else:
            yield fail(workload.resource, f"{workload.name}: in production with no approver.")
