"""AIS-S5-01: every serving load balancer has a p99 latency alarm, a 5xx alarm and a dashboard.

Averages hide the slow tail users feel, so latency is judged at p99 (TargetResponseTime,
extended statistic p99 or higher); errors by the 5xx count of the targets or the load
balancer itself (directly or inside metric math). Both must watch this load balancer (its
`LoadBalancer` dimension), and some dashboard must show it, where cost per request sits
beside latency and errors (aws.InferenceTier draws p50/p90/p99, the error rate and cost per
1,000 requests).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.aws_alarms import ALARM, metrics_of
from aistack.queries.aws_serving import serving_load_balancers

DASHBOARD = "aws:cloudwatch/dashboard:Dashboard"
ERROR_METRICS = frozenset({"HTTPCode_Target_5XX_Count", "HTTPCode_ELB_5XX_Count"})
_HIGH_PERCENTILE = re.compile(r"^p99(\.\d+)?$")


@rule(
    id="AIS-S5-01",
    checklist=["S5"],
    info="Serving load balancers have a p99 latency alarm, a 5xx alarm and a dashboard.",
    why="Users feel the slow tail and the errors, not the average; a dashboard with cost per "
    "request beside them is how a team sees a regression, or a bill, coming.",
    fix="Use aws.InferenceTier (latency_slo_ms, error_rate_percent), or add MetricAlarms on "
    "TargetResponseTime with extendedStatistic p99 and on HTTPCode_Target_5XX_Count / "
    "HTTPCode_ELB_5XX_Count with the LoadBalancer dimension, and a dashboard showing them.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    alarms = graph.of_type(ALARM)
    bodies = [str(d.inputs.get("dashboardBody") or "") for d in graph.of_type(DASHBOARD)]
    for balancer in serving_load_balancers(graph):
        suffix = str(balancer.outputs.get("arnSuffix") or "")
        refs = [
            (metric, stat)
            for alarm in alarms
            for metric, dimensions, stat in metrics_of(alarm)
            if suffix and dimensions.get("LoadBalancer") == suffix
        ]
        missing = []
        if not any(m == "TargetResponseTime" and _HIGH_PERCENTILE.match(s) for m, s in refs):
            missing.append("a p99 latency alarm")
        if not any(m in ERROR_METRICS for m, _ in refs):
            missing.append("a 5xx alarm")
        if not any(suffix and suffix in body for body in bodies):
            missing.append("a dashboard")
        if missing:
            yield fail(balancer, "serving load balancer lacks " + ", ".join(missing) + ".")
        else:
            yield ok(balancer, "p99 latency and 5xx alarms and a dashboard watch it.")
