"""AIS-S5-02: every served model has latency and error-rate alerts."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_alerts import alert_rules
from aistack.queries.k8s_serving import serving_workloads


@rule(
    id="AIS-S5-02",
    checklist=["S5"],
    info="Every model served on Kubernetes has an alert on its latency and one on its "
    "5xx ratio (alert rules labelled with the model and aistack_checklist S5).",
    why="A serving tier is judged by its tail latency and its errors; without alerts a slow "
    "or failing version is found by its users. Kubernetes restarts crashed pods, but a "
    "server answering slowly or with 500s stays up and in rotation.",
    fix="Use k8s.InferenceService (latencySloMs, errorRatePercent), or add PrometheusRule / "
    "GMP Rules alerts labelled model=<name> and aistack_checklist=S5.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    alerts: dict[str, list[str]] = {}
    for _, alert in alert_rules(graph):
        labels = alert.get("labels") or {}
        if labels.get("aistack_checklist") == "S5" and labels.get("model"):
            alerts.setdefault(labels["model"], []).append(alert["expr"])
    for workload in serving_workloads(graph):
        exprs = alerts.get(workload.model or "", [])
        latency = any("latency" in e for e in exprs)
        errors = any("error" in e for e in exprs)
        if latency and errors:
            yield ok(workload.resource, f"{workload.name}: latency and 5xx alerts.")
        else:
            missing = [n for n, has in (("latency", latency), ("5xx", errors)) if not has]
            yield fail(workload.resource, f"{workload.name}: no {' or '.join(missing)} alert.")
