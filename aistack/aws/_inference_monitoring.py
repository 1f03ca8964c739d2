"""What `aws.InferenceTier` watches (S5, G4): its alarms' metrics, and its dashboard.

* Latency: p99 of the load balancer's `TargetResponseTime` above the SLO. A percentile,
  because an average hides the slow tail users feel.
* Errors: 5xx answers (the targets' and the load balancer's own) as a share of requests,
  by metric math. The load balancer's 503s when no target is healthy count too: those
  requests are not in `RequestCount`, so a period with errors and no counted requests
  divides by one and alarms, which is what it should do.
* Unhealthy targets, per target group: a node that fails the gateway's health check.
* Model quality, per version taking traffic: the metric the serving code publishes (G4).
* The dashboard: p50/p90/p99 latency, error rate, requests, healthy nodes, model quality,
  and the cost per 1,000 requests from the fleet's hourly price and the request count.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ALB_NAMESPACE",
    "COST_PERIOD_SECONDS",
    "ERROR_RATE_EXPRESSION",
    "VersionMetrics",
    "cost_expressions",
    "dashboard_body",
]

ALB_NAMESPACE = "AWS/ApplicationELB"
ASG_NAMESPACE = "AWS/AutoScaling"
#: Target 5xx + load balancer 5xx over requests, in per cent (m1, m2, m3 as in the alarm).
ERROR_RATE_EXPRESSION = "100 * (FILL(m1, 0) + FILL(m2, 0)) / FILL(m3, 1)"
#: The cost widget sums an hour: requests per hour against the fleet's price per hour.
COST_PERIOD_SECONDS = 3600


@dataclass(frozen=True)
class VersionMetrics:
    """What the dashboard needs of one model version, resolved."""

    version: str
    weight: int
    target_group: str  # arn suffix
    group_name: str  # auto scaling group
    usd_per_hour: float  # on-demand price of one node


def cost_expressions(versions: Sequence[VersionMetrics]) -> tuple[str, str]:
    """(fleet USD per hour, USD per 1,000 requests) as metric math over ids n0.. and r.

    n<i> is version i's `GroupTotalInstances` (every node that bills, booting ones too)
    averaged over the hour; r is the load balancer's `RequestCount` summed over the hour.
    """
    fleet = " + ".join(f"{v.usd_per_hour:g} * FILL(n{i}, 0)" for i, v in enumerate(versions))
    return f"({fleet})", f"1000 * ({fleet}) / r"


def dashboard_body(
    *,
    region: str,
    load_balancer: str,
    versions: Sequence[VersionMetrics],
    metrics_namespace: str,
    quality_metric: str,
    latency_slo_ms: int,
    error_rate_percent: float,
    title: str,
) -> str:
    """The CloudWatch dashboard JSON for one tier."""
    lb = ["LoadBalancer", load_balancer]
    fleet, per_thousand = cost_expressions(versions)

    def widget(x: int, y: int, properties: dict[str, Any], width: int = 12) -> dict[str, Any]:
        return {
            "type": "metric",
            "x": x,
            "y": y,
            "width": width,
            "height": 6,
            "properties": {"region": region, "view": "timeSeries", **properties},
        }

    latency = widget(
        0,
        2,
        {
            "title": "Latency p50 / p90 / p99 (s)",
            "period": 60,
            "metrics": [
                [ALB_NAMESPACE, "TargetResponseTime", *lb, {"stat": stat, "label": stat}]
                for stat in ("p50", "p90", "p99")
            ],
            "annotations": {"horizontal": [{"label": "SLO (p99)", "value": latency_slo_ms / 1000}]},
        },
    )
    latency_by_version = widget(
        12,
        2,
        {
            "title": "Latency p99 by model version (s)",
            "period": 60,
            "metrics": [
                [
                    ALB_NAMESPACE,
                    "TargetResponseTime",
                    "TargetGroup",
                    v.target_group,
                    *lb,
                    {"stat": "p99", "label": f"{v.version} p99"},
                ]
                for v in versions
            ],
        },
    )
    errors = widget(
        0,
        8,
        {
            "title": "5xx error rate (%)",
            "period": 60,
            "metrics": [
                [{"expression": ERROR_RATE_EXPRESSION, "label": "5xx %", "id": "e1"}],
                [ALB_NAMESPACE, "HTTPCode_Target_5XX_Count", *lb, _hidden("m1")],
                [ALB_NAMESPACE, "HTTPCode_ELB_5XX_Count", *lb, _hidden("m2")],
                [ALB_NAMESPACE, "RequestCount", *lb, _hidden("m3")],
            ],
            "annotations": {"horizontal": [{"label": "alarm", "value": error_rate_percent}]},
        },
    )
    requests = widget(
        12,
        8,
        {
            "title": "Requests by model version",
            "period": 60,
            "stat": "Sum",
            "metrics": [
                [
                    ALB_NAMESPACE,
                    "RequestCountPerTarget",
                    "TargetGroup",
                    v.target_group,
                    {"stat": "Sum", "label": f"{v.version} per node"},
                ]
                for v in versions
            ]
            + [[ALB_NAMESPACE, "RequestCount", *lb, {"stat": "Sum", "label": "all"}]],
        },
    )
    hosts = widget(
        0,
        14,
        {
            "title": "Healthy nodes by model version",
            "period": 60,
            "metrics": [
                [
                    ALB_NAMESPACE,
                    "HealthyHostCount",
                    "TargetGroup",
                    v.target_group,
                    *lb,
                    {"stat": "Minimum", "label": f"{v.version} (weight {v.weight})"},
                ]
                for v in versions
            ],
        },
    )
    quality = widget(
        12,
        14,
        {
            "title": f"Model quality: {quality_metric}",
            "period": 300,
            "metrics": [
                [
                    metrics_namespace,
                    quality_metric,
                    "ModelVersion",
                    v.version,
                    {"stat": "Average", "label": v.version},
                ]
                for v in versions
            ],
        },
    )
    cost = widget(
        0,
        20,
        {
            "title": "Cost per 1,000 requests (USD, nodes only)",
            "period": COST_PERIOD_SECONDS,
            "metrics": [
                [{"expression": per_thousand, "label": "USD per 1,000 requests", "id": "c1"}],
                [{"expression": fleet, "label": "fleet USD per hour", "id": "c2"}],
                *(
                    [
                        ASG_NAMESPACE,
                        "GroupTotalInstances",
                        "AutoScalingGroupName",
                        v.group_name,
                        {"id": f"n{i}", "stat": "Average", "visible": False},
                    ]
                    for i, v in enumerate(versions)
                ),
                [ALB_NAMESPACE, "RequestCount", *lb, {"id": "r", "stat": "Sum", "visible": False}],
            ],
        },
        width=24,
    )
    prices = ", ".join(f"{v.version}: ${v.usd_per_hour:g}/node-hour" for v in versions)
    note = {
        "type": "text",
        "x": 0,
        "y": 0,
        "width": 24,
        "height": 2,
        "properties": {
            "markdown": (
                f"## {title}\n"
                "Cost per 1,000 requests = 1000 x fleet hourly cost / requests per hour; "
                "fleet hourly cost = sum over versions of (on-demand price per node-hour x "
                f"GroupTotalInstances), from the aistack catalog ({prices}). Nodes only: "
                "the load balancer and WAF are extra. Latency p99 alarm at "
                f"{latency_slo_ms} ms, 5xx alarm at {error_rate_percent:g}% of requests."
            )
        },
    }
    body = {"widgets": [note, latency, latency_by_version, errors, requests, hosts, quality, cost]}
    return json.dumps(body)


def _hidden(metric_id: str) -> dict[str, Any]:
    return {"id": metric_id, "stat": "Sum", "visible": False}
