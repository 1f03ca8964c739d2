"""Cost estimators for small AWS resources every component uses: keys, alarms, dashboards."""

from __future__ import annotations

from aistack.cost import WorkloadProfile, estimator
from aistack.cost.prices import aws as prices
from aistack.engine.graph import Resource, StackGraph


@estimator("aws:kms/key:Key")
def _kms_key(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    return prices.KMS_KEY_MONTH, prices.KMS_KEY_MONTH, "customer managed key, $1/month"


@estimator("aws:cloudwatch/metricAlarm:MetricAlarm")
def _alarm(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    # A naive setup has no alarms: it pays nothing here and finds out from the bill.
    return prices.CLOUDWATCH_ALARM_MONTH, 0.0, "standard-resolution alarm"


@estimator("aws:cloudwatch/dashboard:Dashboard")
def _dashboard(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    return prices.CLOUDWATCH_DASHBOARD_MONTH, 0.0, "custom dashboard"
