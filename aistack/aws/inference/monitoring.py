"""What `aws.InferenceTier` watches (S5, G4): its alarms and its dashboard.

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

`alarms` and `dashboard` create the resources; `dashboard_body` and `cost_expressions`
are the pure metric math and layout they use.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from aistack.aws._base import child_opts, stack_id, tags_for
from aistack.aws.inference.args import InferenceTierArgs
from aistack.aws.inference.planning import VersionPlan
from aistack.contracts.aws import ALARM_KIND_TAG

__all__ = [
    "ALARM_KIND_TAG",
    "ALB_NAMESPACE",
    "COST_PERIOD_SECONDS",
    "ERROR_RATE_EXPRESSION",
    "VersionMetrics",
    "alarms",
    "cost_expressions",
    "dashboard",
    "dashboard_body",
]

#: What each alarm watches (latency, error-rate, unhealthy-hosts, model-quality), as a tag
#: policy rules read.
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


# ---- the resources ---------------------------------------------------------------------------


def alarms(
    tier: pulumi.Resource,
    name: str,
    args: InferenceTierArgs,
    *,
    load_balancer: aws.lb.LoadBalancer,
    target_groups: Mapping[str, aws.lb.TargetGroup],
    versions: Sequence[VersionPlan],
    metrics_namespace: str,
    tags: dict[str, str],
    alarm_topic_arn: pulumi.Input[str] | None,
) -> dict[str, aws.cloudwatch.MetricAlarm]:
    """The tier's alarms: p99 latency and the 5xx rate of the load balancer (S5), then per
    version its unhealthy nodes (S5) and, while it takes traffic, its model quality (G4)."""

    def alarm(label: str, kind: str, **settings: Any) -> aws.cloudwatch.MetricAlarm:
        topic = [alarm_topic_arn] if alarm_topic_arn else None
        return aws.cloudwatch.MetricAlarm(
            f"{name}-{label}",
            alarm_actions=topic,
            ok_actions=topic,
            region=args.region,
            tags={**tags, **tags_for(args.governance, **{ALARM_KIND_TAG: kind})},
            opts=child_opts(tier),
            **settings,
        )

    lb = {"LoadBalancer": load_balancer.arn_suffix}
    found = {
        "latency-p99": alarm(
            "latency-p99",
            "latency",
            alarm_description=f"{name}: p99 latency above {args.latency_slo_ms} ms for 3 "
            "of 5 minutes (S5).",
            namespace=ALB_NAMESPACE,
            metric_name="TargetResponseTime",
            dimensions=lb,
            extended_statistic="p99",
            period=60,
            evaluation_periods=5,
            datapoints_to_alarm=3,
            comparison_operator="GreaterThanThreshold",
            threshold=args.latency_slo_ms / 1000,
            # No requests, no latency to judge.
            treat_missing_data="notBreaching",
        ),
        "error-rate": alarm(
            "error-rate",
            "error-rate",
            alarm_description=f"{name}: 5xx answers above {args.error_rate_percent:g}% of "
            "requests for 3 of 5 minutes (S5).",
            metric_queries=[
                aws.cloudwatch.MetricAlarmMetricQueryArgs(
                    id="e1",
                    expression=ERROR_RATE_EXPRESSION,
                    label="5xx per cent of requests",
                    return_data=True,
                ),
                *(
                    aws.cloudwatch.MetricAlarmMetricQueryArgs(
                        id=metric_id,
                        metric=aws.cloudwatch.MetricAlarmMetricQueryMetricArgs(
                            namespace=ALB_NAMESPACE,
                            metric_name=metric,
                            dimensions=lb,
                            period=60,
                            stat="Sum",
                        ),
                    )
                    for metric_id, metric in (
                        ("m1", "HTTPCode_Target_5XX_Count"),
                        ("m2", "HTTPCode_ELB_5XX_Count"),
                        ("m3", "RequestCount"),
                    )
                ),
            ],
            evaluation_periods=5,
            datapoints_to_alarm=3,
            comparison_operator="GreaterThanThreshold",
            threshold=args.error_rate_percent,
            treat_missing_data="notBreaching",
        ),
    }
    quality = args.quality
    for plan in versions:
        target_group = target_groups[plan.version]
        found[f"v{plan.slug}-unhealthy"] = alarm(
            f"v{plan.slug}-unhealthy",
            "unhealthy-hosts",
            alarm_description=f"{name} {plan.version}: a node fails the gateway health "
            "check (S5). Nodes join only once their model answers, so this is a node "
            "that stopped serving.",
            namespace=ALB_NAMESPACE,
            metric_name="UnHealthyHostCount",
            dimensions={**lb, "TargetGroup": target_group.arn_suffix},
            statistic="Maximum",
            period=60,
            evaluation_periods=5,
            datapoints_to_alarm=3,
            comparison_operator="GreaterThanThreshold",
            threshold=0,
            treat_missing_data="notBreaching",
        )
        if plan.weight == 0:
            continue  # No traffic, nothing to judge the model by.
        found[f"v{plan.slug}-quality"] = alarm(
            f"v{plan.slug}-quality",
            "model-quality",
            alarm_description=f"{name} {plan.version}: {quality.metric_name} "
            f"{quality.alarm_when} {quality.threshold:g} (G4). Published by the serving "
            f"code to {metrics_namespace} with ModelVersion={plan.version}.",
            namespace=metrics_namespace,
            metric_name=quality.metric_name,
            dimensions={"ModelVersion": plan.version},
            statistic=quality.statistic,
            period=quality.period_minutes * 60,
            evaluation_periods=quality.evaluation_periods,
            comparison_operator="LessThanThreshold"
            if quality.alarm_when == "below"
            else "GreaterThanThreshold",
            threshold=quality.threshold,
            treat_missing_data=quality.treat_missing_data,
        )
    return found


def dashboard(
    tier: pulumi.Resource,
    name: str,
    args: InferenceTierArgs,
    *,
    load_balancer: aws.lb.LoadBalancer,
    groups: Mapping[str, aws.autoscaling.Group],
    target_groups: Mapping[str, aws.lb.TargetGroup],
    versions: Sequence[VersionPlan],
    metrics_namespace: str,
) -> aws.cloudwatch.Dashboard:
    """The tier's dashboard (`dashboard_body`), once the names it shows are known."""
    names = [groups[plan.version].name for plan in versions]
    suffixes = [target_groups[plan.version].arn_suffix for plan in versions]

    def body(values: list[Any]) -> str:
        lb, group_names, target_group_suffixes = values[0], values[1], values[2]
        return dashboard_body(
            region=args.region,
            load_balancer=lb,
            versions=[
                VersionMetrics(
                    version=plan.version,
                    weight=plan.weight,
                    target_group=target_group_suffixes[i],
                    group_name=group_names[i],
                    usd_per_hour=plan.offer.price(args.region),
                )
                for i, plan in enumerate(versions)
            ],
            metrics_namespace=metrics_namespace,
            quality_metric=args.quality.metric_name,
            latency_slo_ms=args.latency_slo_ms,
            error_rate_percent=args.error_rate_percent,
            title=f"{args.model_name} on {name} ({args.runtime})",
        )

    dashboard_name = re.sub(r"[^A-Za-z0-9_-]", "-", f"aistack-{stack_id()}-{name}")
    return aws.cloudwatch.Dashboard(
        f"{name}-dashboard",
        dashboard_name=dashboard_name[:255],
        dashboard_body=pulumi.Output.all(
            load_balancer.arn_suffix,
            pulumi.Output.all(*names),
            pulumi.Output.all(*suffixes),
        ).apply(body),
        region=args.region,
        opts=child_opts(tier),
    )
