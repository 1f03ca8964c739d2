"""AIS-G2-02: serving workloads record what they log per request, and full logs say more."""

from collections.abc import Iterator

from aistack.contracts.k8s import REQUEST_LOGGING_ANNOTATION as LOGGING
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_serving import serving_workloads


@rule(
    id="AIS-G2-02",
    checklist=["G2"],
    info=f"Every serving Deployment records its request-logging choice ({LOGGING}: none, "
    "metadata or full); 'full' also records the logs' classification and retention.",
    why="Request logs of a model hold prompts: personal data, secrets pasted into a chat. "
    "Whether they are written, how sensitive they are and how long they are kept is a "
    "decision someone must make and auditors must be able to read, not a default.",
    fix="Use k8s.InferenceService (requestLogging is required), or annotate the Deployment.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for workload in serving_workloads(graph):
        annotations = workload.annotations
        choice = annotations.get(LOGGING)
        if choice not in ("none", "metadata", "full"):
            yield fail(workload.resource, f"{workload.name}: no request-logging choice recorded.")
        elif choice == "full" and not (
            annotations.get("aistack.dev/log-data-classification")
            and annotations.get("aistack.dev/log-retention-days")
        ):
            yield fail(
                workload.resource,
                f"{workload.name}: logs prompts without a classification and retention.",
            )
        else:
            yield ok(workload.resource, f"{workload.name}: request logging {choice!r}.")
