"""AIS-G4-02: every served model has a model-quality alert."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_alerts import alert_rules
from aistack.queries.k8s_serving import serving_workloads


@rule(
    id="AIS-G4-02",
    checklist=["G4"],
    info="Every model served on Kubernetes has an alert on its quality metric (an alert "
    "rule labelled model=<name> and aistack_checklist G4).",
    why="A model degrades without erroring: drift in the inputs, a bad new version, a "
    "broken tokenizer. Latency and error alerts stay green while the answers get worse; "
    "only a quality measure the team publishes shows it.",
    fix="Set quality.threshold on k8s.InferenceService and publish the metric from the "
    "team's evaluation job.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    models = set()
    for _, alert in alert_rules(graph):
        labels = alert.get("labels") or {}
        if labels.get("aistack_checklist") == "G4" and labels.get("model"):
            models.add(labels["model"])
    for workload in serving_workloads(graph):
        if workload.model in models:
            yield ok(workload.resource, f"{workload.name}: quality alert on {workload.model}.")
        else:
            yield fail(workload.resource, f"{workload.name}: nothing alerts on its quality.")
