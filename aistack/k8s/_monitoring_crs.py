"""Typed specs of the monitoring custom resources `k8s.GpuMonitoring` renders, written from
the upstream CRDs at the versions aistack pins (kept, unmodified, under
`aistack/scan/data/crds/`):

- Prometheus Operator v0.93.0 (`example/prometheus-operator-crd/`):
  `monitoring.coreos.com/v1` ServiceMonitor, PodMonitor, PrometheusRule;
- Google Cloud Managed Service for Prometheus, prometheus-engine v0.17.2
  (`charts/operator/crds/`): `monitoring.googleapis.com/v1` PodMonitoring, ClusterRules.

Only the fields aistack sets are modelled; every model forbids the rest (extra="forbid"), so
a misspelt field is an error before anything is registered, where the API server would
have pruned it silently. Field names are the CRDs' own (camelCase; `for` and
`keep_firing_for` as written there). tests/k8s/test_gpu_monitoring.py checks that every field
named here exists at that place in the CRD, and that every rendered object validates
against it (`aistack.scan.crd_schemas.validate_custom_resource`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

__all__ = [
    "AlertRule",
    "GmpEndpoint",
    "GmpLabelMapping",
    "GmpRuleGroup",
    "GmpRulesSpec",
    "GmpTargetLabels",
    "LabelSelector",
    "NamespaceSelector",
    "PodMonitorSpec",
    "PodMonitoringSpec",
    "PodMetricsEndpoint",
    "PrometheusRuleSpec",
    "RecordingRule",
    "RuleGroup",
    "ServiceMonitorEndpoint",
    "ServiceMonitorSpec",
    "render",
]

#: prometheus-operator's Duration (monitoringv1.Duration): the CRD's pattern, e.g. "30s".
PROMETHEUS_DURATION = (
    r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"
)


class _Cr(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True
    )


def render(model: BaseModel) -> dict[str, Any]:
    """The spec as the API takes it: CRD field names, unset fields left out."""
    return model.model_dump(by_alias=True, exclude_none=True)


# ---- shared ------------------------------------------------------------------------------


class LabelSelector(_Cr):
    """metav1.LabelSelector (`selector` in every monitor). matchExpressions is not used."""

    match_labels: dict[str, str] = Field(min_length=1)


class NamespaceSelector(_Cr):
    """prometheus-operator NamespaceSelector: the namespaces whose Services/Pods it selects."""

    match_names: list[str] = Field(min_length=1)


# ---- Prometheus Operator v0.93.0 ----------------------------------------------------------


class ServiceMonitorEndpoint(_Cr):
    """`spec.endpoints[]` of monitoring.coreos.com_servicemonitors.yaml."""

    port: str = Field(description="The Service port's name.")
    path: str = "/metrics"
    scheme: Literal["http", "https"] = "http"
    interval: str = Field(pattern=PROMETHEUS_DURATION)
    scrape_timeout: str = Field(pattern=PROMETHEUS_DURATION)
    honor_labels: bool = Field(
        description="False keeps the target's namespace/pod/container labels and renames "
        "the exporter's own to exported_namespace, exported_pod, exported_container."
    )


class ServiceMonitorSpec(_Cr):
    """`spec` of monitoring.coreos.com/v1 ServiceMonitor."""

    selector: LabelSelector
    namespace_selector: NamespaceSelector
    endpoints: list[ServiceMonitorEndpoint] = Field(min_length=1)
    job_label: str | None = None


class PodMetricsEndpoint(_Cr):
    """`spec.podMetricsEndpoints[]` of monitoring.coreos.com_podmonitors.yaml."""

    port: str = Field(description="The container port's name.")
    path: str = "/metrics"
    scheme: Literal["http", "https"] = "http"
    interval: str = Field(pattern=PROMETHEUS_DURATION)
    scrape_timeout: str = Field(pattern=PROMETHEUS_DURATION)
    honor_labels: bool


class PodMonitorSpec(_Cr):
    """`spec` of monitoring.coreos.com/v1 PodMonitor."""

    selector: LabelSelector
    namespace_selector: NamespaceSelector
    pod_metrics_endpoints: list[PodMetricsEndpoint] = Field(min_length=1)
    job_label: str | None = None
    pod_target_labels: list[str] | None = Field(
        None,
        description="Pod labels copied onto the target, their names sanitised as "
        "Prometheus does (aistack.dev/model-version -> aistack_dev_model_version).",
    )


class AlertRule(_Cr):
    """`spec.groups[].rules[]` of a PrometheusRule (and, minus keep_firing_for, of GMP's
    Rules/ClusterRules): an alerting rule."""

    alert: str = Field(pattern=r"^[a-zA-Z_][a-zA-Z0-9_]*$")
    expr: str = Field(min_length=1)
    for_: str | None = Field(None, alias="for")
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class RecordingRule(_Cr):
    """`spec.groups[].rules[]` of a PrometheusRule or GMP Rules: a recording rule."""

    record: str = Field(pattern=r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
    expr: str = Field(min_length=1)
    labels: dict[str, str] = Field(default_factory=dict)


class RuleGroup(_Cr):
    """`spec.groups[]` of a PrometheusRule."""

    name: str = Field(min_length=1)
    interval: str | None = Field(None, pattern=PROMETHEUS_DURATION)
    rules: list[AlertRule | RecordingRule] = Field(min_length=1)


class PrometheusRuleSpec(_Cr):
    """`spec` of monitoring.coreos.com/v1 PrometheusRule."""

    groups: list[RuleGroup] = Field(min_length=1)


# ---- Google Cloud Managed Service for Prometheus, prometheus-engine v0.17.2 ---------------


class GmpEndpoint(_Cr):
    """`spec.endpoints[]` of monitoring.googleapis.com_podmonitorings.yaml (v1): `port` is
    the container port's name or number; `interval` is required."""

    port: str | int
    path: str = "/metrics"
    scheme: Literal["http", "https"] = "http"
    interval: str
    timeout: str | None = None


class GmpLabelMapping(_Cr):
    """`spec.targetLabels.fromPod[]`: a pod label copied onto the target as `to`."""

    from_: str = Field(alias="from")
    to: str = Field(pattern=r"^[a-zA-Z_][a-zA-Z0-9_]*$")


class GmpTargetLabels(_Cr):
    """`spec.targetLabels`: which pod metadata becomes target labels (CRD enum)."""

    metadata: list[
        Literal[
            "container", "node", "pod", "top_level_controller_name", "top_level_controller_type"
        ]
    ]
    from_pod: list[GmpLabelMapping] | None = None


class PodMonitoringSpec(_Cr):
    """`spec` of monitoring.googleapis.com/v1 PodMonitoring (pods in its own namespace)."""

    selector: LabelSelector
    endpoints: list[GmpEndpoint] = Field(min_length=1)
    target_labels: GmpTargetLabels | None = None


class GmpRuleGroup(_Cr):
    """`spec.groups[]` of GMP Rules/ClusterRules (v1: `rules` required)."""

    name: str = Field(min_length=1)
    interval: str | None = None
    rules: list[AlertRule | RecordingRule] = Field(min_length=1)


class GmpRulesSpec(_Cr):
    """`spec` of monitoring.googleapis.com/v1 Rules and ClusterRules."""

    groups: list[GmpRuleGroup] = Field(min_length=1)
