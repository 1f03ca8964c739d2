"""AIS-S7-03: every serving pod names the explicit model version it serves."""

from aistack.k8s._inference_args import MOVING_LABELS
from aistack.policy import fail, ok, rule
from aistack.queries.k8s_serving import MODEL_VERSION_LABEL, serving_workloads


@rule(
    id="AIS-S7-03",
    checklist=["S7"],
    info=f"Every serving pod carries {MODEL_VERSION_LABEL} with an immutable version.",
    why="A pod serving 'latest' serves whatever was uploaded last: two replicas can answer "
    "from two models, a rollback has nothing to roll back to, and an incident cannot say "
    "which model answered. The label is also what the alerts and k8s.ImagePolicy key on.",
    fix="Use k8s.InferenceService (versions[].version), or label the pod template with the "
    "version its weights were stored under.",
)
def check(graph):
    for workload in serving_workloads(graph):
        version = workload.pod_labels.get(MODEL_VERSION_LABEL)
        if not version:
            yield fail(workload.resource, f"{workload.name}: no {MODEL_VERSION_LABEL} label.")
        elif version.lower() in MOVING_LABELS:
            yield fail(workload.resource, f"{workload.name}: serves {version!r}, not a version.")
        else:
            yield ok(workload.resource, f"{workload.name}: serves version {version}.")
