"""AIS-S3-03: every serving workload has an explicit maximum: its autoscaler's, or its own."""

from collections.abc import Iterator

from aistack.contracts.k8s import MAX_REPLICAS
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_serving import autoscalers, scale_target, serving_workloads


def _maximum(kind: str, spec: dict) -> int | None:
    # KEDA's maxReplicaCount defaults to 100 when unset (keda.sh ScaledObject spec): an unset
    # maximum is a cap nobody chose. The HPA's maxReplicas is required by the API.
    return spec.get("maxReplicaCount") if kind == "ScaledObject" else spec.get("maxReplicas")


@rule(
    id="AIS-S3-03",
    checklist=["S3"],
    info="Every serving Deployment is scaled by an HPA or KEDA ScaledObject with an explicit "
    f"maximum of at most {MAX_REPLICAS}, or has a fixed replica count.",
    why="An autoscaler follows load without bound unless told: KEDA scales to 100 replicas "
    "when maxReplicaCount is unset, and a flood of requests (or a retry storm) then books "
    "a GPU node per replica. The maximum is the serving tier's cost cap.",
    fix="Use k8s.InferenceService (maxReplicas, required), or set maxReplicaCount / "
    "maxReplicas on the workload's autoscaler.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    scalers = {}
    for _, kind, namespace, spec in autoscalers(graph):
        scalers[(namespace, scale_target(kind, spec))] = (kind, spec)
    for workload in serving_workloads(graph):
        found = scalers.get((workload.namespace, workload.name))
        if found is None:
            replicas = (workload.document.get("spec") or {}).get("replicas")
            if isinstance(replicas, int) and replicas <= MAX_REPLICAS:
                yield ok(workload.resource, f"{workload.name}: a fixed {replicas} replicas.")
            else:
                yield fail(
                    workload.resource, f"{workload.name}: no autoscaler and no replica count."
                )
            continue
        kind, spec = found
        maximum = _maximum(kind, spec)
        if maximum is None:
            yield fail(workload.resource, f"{workload.name}: its {kind} sets no maximum.")
        elif maximum > MAX_REPLICAS:
            yield fail(
                workload.resource,
                f"{workload.name}: its {kind} allows {maximum} replicas, over {MAX_REPLICAS}.",
            )
        else:
            yield ok(workload.resource, f"{workload.name}: at most {maximum} replicas ({kind}).")
