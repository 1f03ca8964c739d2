"""CloudWatch metric alarms: what an alarm watches, plain or through metric math (shared by
the serving alarm rules, S5 and G4)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import Resource
from aistack.queries import as_list

__all__ = ["ALARM", "metrics_of"]

ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"


def metrics_of(alarm: Resource) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(metric name, dimensions, statistic) of an alarm, plain or metric math."""
    inputs = alarm.inputs
    if inputs.get("metricName"):
        yield (
            str(inputs["metricName"]),
            dict(inputs.get("dimensions") or {}),
            str(inputs.get("extendedStatistic") or inputs.get("statistic") or ""),
        )
    for query in as_list(inputs.get("metricQueries")):
        metric = (query or {}).get("metric") or {}
        if metric.get("metricName"):
            yield (
                str(metric["metricName"]),
                dict(metric.get("dimensions") or {}),
                str(metric.get("stat") or ""),
            )
