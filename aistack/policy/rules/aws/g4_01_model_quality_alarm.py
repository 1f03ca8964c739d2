"""AIS-G4-01: every serving tier alarms on a model-quality metric.

Latency and errors say whether the model answers, not whether its answers are still good:
inputs drift, and a model degrades silently. A quality alarm is a MetricAlarm on a metric
the team publishes (not an AWS/ namespace) tagged `aistack:alarm-kind=model-quality` or
with 'quality' in its metric name. When the serving load balancer carries
`aistack:inference-tier`, the alarm must carry the same tier.
"""

from __future__ import annotations

from collections.abc import Iterator

from aistack.contracts.aws import ALARM_KIND_TAG
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import tags
from aistack.queries.aws_alarms import ALARM, metrics_of
from aistack.queries.aws_serving import TIER_TAG, serving_load_balancers


def is_quality_alarm(alarm: Resource) -> bool:
    if tags(alarm).get(ALARM_KIND_TAG) == "model-quality":
        return True
    namespaces = [str(alarm.inputs.get("namespace") or "")] + [
        str(((q or {}).get("metric") or {}).get("namespace") or "")
        for q in alarm.inputs.get("metricQueries") or []
    ]
    custom = any(ns and not ns.startswith("AWS/") for ns in namespaces)
    return custom and any("quality" in name.lower() for name, _, _ in metrics_of(alarm))


@rule(
    id="AIS-G4-01",
    checklist=["G4"],
    info="Each serving tier has an alarm on a model-quality metric it publishes.",
    why="A degraded model still answers fast and without errors; only a quality signal "
    "(evaluation score, drift, user feedback) shows it.",
    fix="Set quality on aws.InferenceTier and publish the metric from the serving code, or "
    f"add a MetricAlarm on your quality metric tagged {ALARM_KIND_TAG}=model-quality.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    alarms = [a for a in graph.of_type(ALARM) if is_quality_alarm(a)]
    for balancer in serving_load_balancers(graph):
        tier = tags(balancer).get(TIER_TAG)
        mine = [a for a in alarms if tier is None or tags(a).get(TIER_TAG) == tier]
        if mine:
            yield ok(balancer, f"model quality watched by {', '.join(a.name for a in mine)}.")
        else:
            yield fail(balancer, "no model-quality alarm for this serving tier.")
