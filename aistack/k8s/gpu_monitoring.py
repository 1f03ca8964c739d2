"""`k8s.GpuMonitoring`: the DCGM exporter's GPU metrics scraped into the cluster's
monitoring stack, and alert rules on idle GPUs (C5), GPU starvation (T3) and queue wait.

Two monitoring stacks, chosen by `platform` (docs/components/k8s/gpu-monitoring.md):

- `prometheus-operator`: a `monitoring.coreos.com/v1` ServiceMonitor (or PodMonitor) for the
  exporter in its namespace, and a PrometheusRule. Alerts go to the cluster's Alertmanager;
- `gke-managed-prometheus`: Google Cloud Managed Service for Prometheus, a
  `monitoring.googleapis.com/v1` PodMonitoring for the exporter and ClusterRules (Rules
  would see only the metrics of their own namespace, and the DCGM and Kueue series live in
  two). Alerts go to the Alertmanager the managed rule evaluator is configured with.

The exporter is not created here: the NVIDIA GPU Operator (or NVIDIA's dcgm-exporter Helm
chart, or GKE's managed DCGM) installs it as a privileged DaemonSet in its own namespace,
which Pod Security `restricted` team namespaces must never be. This component only points
the monitoring stack at it.

Which GPU belongs to which pod: dcgm-exporter (DCGM_EXPORTER_KUBERNETES, on in the GPU
Operator's DaemonSet and the chart) labels each GPU's series with the `namespace`, `pod` and
`container` of the pod the kubelet's pod-resources API says holds it
(dcgm-exporter internal/pkg/transformation/const.go, kubernetes.go at 4.5.3-4.8.2). Scraped
with `honor_labels: false` (the Prometheus default, both charts' default, and GMP, which has
no such option), those collide with the target's own `namespace`/`pod`/`container` and are
renamed `exported_namespace`, `exported_pod`, `exported_container` (Prometheus docs,
scrape_config `honor_labels`). The rules select on those, and `exported_pod!=""` is "a GPU
allocated to a pod": a GPU no pod holds has no such label.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field, field_validator

from aistack.config import AistackModel, Governance
from aistack.contracts.k8s import DCGM_SCRAPE_ANNOTATION
from aistack.errors import Problems
from aistack.k8s._base import child_opts, label_value, labels_for, stack_id
from aistack.k8s._monitoring_crs import (
    AlertRule,
    GmpEndpoint,
    GmpRuleGroup,
    GmpRulesSpec,
    GmpTargetLabels,
    LabelSelector,
    NamespaceSelector,
    PodMetricsEndpoint,
    PodMonitoringSpec,
    PodMonitorSpec,
    PrometheusRuleSpec,
    RuleGroup,
    ServiceMonitorEndpoint,
    ServiceMonitorSpec,
    render,
)

__all__ = [
    "EXPORTERS",
    "Exporter",
    "GpuMonitoring",
    "GpuMonitoringArgs",
    "IdleGpuAlert",
    "PINNED",
    "QueueWaitAlert",
    "StarvationAlert",
    "idle_expr",
    "queue_stalled_expr",
    "queue_wait_expr",
    "starvation_expr",
]

#: The upstream releases this component is written against (CRDs kept under
#: aistack/scan/data/crds/, selectors read from the charts at these tags).
PINNED = {
    "prometheus-operator": "v0.93.0",
    "prometheus-engine": "v0.17.2",
    "gpu-operator": "v26.7.0",
    "dcgm-exporter-chart": "4.8.2",  # NVIDIA/dcgm-exporter tag 4.5.3-4.8.2
    "kueue": "v0.19.2",
}

#: The GPU utilisation gauge every DCGM exporter config exports (DCGM field 203, 0-100 %).
#: The profiling metrics (DCGM_FI_PROF_GR_ENGINE_ACTIVE, SM occupancy) are not available on
#: every GPU (DCGM profiling needs data-centre GPUs from Volta on) nor in every counter file,
#: so the alerts use DEV_GPU_UTIL as the floor.
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
#: Labels the exporter's pod attribution ends up under (module docstring).
NAMESPACE_LABEL = "exported_namespace"
POD_LABEL = "exported_pod"


class Exporter(AistackModel):
    """Where the DCGM exporter runs and how its Service and pods are labelled."""

    namespace: str
    service_labels: dict[str, str]
    service_port: str
    pod_labels: dict[str, str]
    pod_port: str


#: The exporter each installer creates, read from its manifests at the pinned tag:
#: - GPU Operator v26.7.0: assets/state-dcgm-exporter/0400_service.yaml (Service
#:   `nvidia-dcgm-exporter`, label app=nvidia-dcgm-exporter, port `gpu-metrics` 9400) and
#:   0800_daemonset.yaml (pods app=nvidia-dcgm-exporter, container port `metrics` 9400); the
#:   operator runs in the namespace it is installed to, `gpu-operator` in its README.md
#:   (`helm install ... -n gpu-operator --create-namespace`), labelled Pod Security
#:   `privileged` (config/manager/manager.yaml).
#: - dcgm-exporter chart 4.8.2 (tag 4.5.3-4.8.2): deployment/templates/service.yaml and
#:   daemonset.yaml, port `metrics` (values service.port 9400), selector labels
#:   app.kubernetes.io/name=dcgm-exporter (the chart name, _helpers.tpl selectorLabels)
#:   plus app.kubernetes.io/instance=<release>; installed to the release's namespace.
EXPORTERS: dict[str, Exporter] = {
    "gpu-operator": Exporter(
        namespace="gpu-operator",
        service_labels={"app": "nvidia-dcgm-exporter"},
        service_port="gpu-metrics",
        pod_labels={"app": "nvidia-dcgm-exporter"},
        pod_port="metrics",
    ),
    "dcgm-exporter-chart": Exporter(
        namespace="dcgm-exporter",
        service_labels={"app.kubernetes.io/name": "dcgm-exporter"},
        service_port="metrics",
        pod_labels={"app.kubernetes.io/name": "dcgm-exporter"},
        pod_port="metrics",
    ),
}

Platform = Literal["prometheus-operator", "gke-managed-prometheus"]
ExporterName = Literal["gpu-operator", "dcgm-exporter-chart", "gke-managed-dcgm"]
Severity = Literal["info", "warning", "critical"]

#: A duration both Prometheus (rule `for`, range selectors) and the Kubernetes `duration`
#: format of GMP's CRDs (Go time.ParseDuration) accept: hours, minutes, seconds. Prometheus'
#: `d`, `w`, `y` are refused by Go, so they are not allowed here.
_DURATION = r"^([0-9]+h([0-9]+m)?([0-9]+s)?|[0-9]+m([0-9]+s)?|[0-9]+s)$"
_PROM_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"


class IdleGpuAlert(AistackModel):
    """`AistackGpuIdle` (C5): GPUs held by a pod that did nothing for a whole window."""

    enabled: bool = True
    threshold_percent: float = Field(
        1.0,
        gt=0,
        le=100,
        description="A GPU whose highest DCGM_FI_DEV_GPU_UTIL over the window stays below "
        "this is idle. Default 1 %: not one busy sample in the window.",
    )
    window: str = Field(
        "30m", pattern=_DURATION, description="The window (range selector). Default 30m."
    )
    for_duration: str = Field(
        "5m",
        pattern=_DURATION,
        description="How long the condition holds before the alert fires. Default 5m.",
    )
    severity: Severity = "warning"


class StarvationAlert(AistackModel):
    """`AistackGpuStarved` (T3): a running workload's GPUs are busy only part of the time,
    usually waiting on input (data loading, preprocessing, a remote bucket)."""

    enabled: bool = True
    threshold_percent: float = Field(
        40.0,
        gt=0,
        le=100,
        description="A pod whose GPUs average below this utilisation over the window is "
        "starved. Default 40 %.",
    )
    window: str = Field("30m", pattern=_DURATION, description="The averaging window. Default 30m.")
    for_duration: str = Field(
        "10m", pattern=_DURATION, description="How long before the alert fires. Default 10m."
    )
    severity: Severity = "warning"


class QueueWaitAlert(AistackModel):
    """`AistackQueueWaitHigh` and `AistackQueueStalled`: work waits in Kueue (its metrics:
    kueue_admission_wait_time_seconds, kueue_pending_workloads, kueue_admitted_workloads_total,
    pkg/metrics/metrics.go and site/content/en/docs/reference/metrics.md at v0.19.2)."""

    enabled: bool = True
    max_wait_seconds: int = Field(
        3600,
        ge=1,
        description="AistackQueueWaitHigh fires when the quantile of admission wait over the "
        "window is above this. Default 3600 (an hour).",
    )
    quantile: float = Field(0.9, gt=0, lt=1, description="The wait quantile. Default 0.9.")
    window: str = Field("1h", pattern=_DURATION, description="The rate window. Default 1h.")
    stalled_for: str = Field(
        "30m",
        pattern=_DURATION,
        description="AistackQueueStalled fires when a ClusterQueue has pending workloads "
        "and admitted none for this long. Default 30m.",
    )
    cluster_queues: tuple[str, ...] = Field(
        (),
        description="The ClusterQueues watched (k8s.TrainingQueue names its own). Default: all.",
    )
    severity: Severity = "warning"


class GpuMonitoringArgs(AistackModel):
    governance: Governance
    platform: Platform = Field(
        description="The monitoring stack: 'prometheus-operator' (ServiceMonitor/PodMonitor, "
        "PrometheusRule) or 'gke-managed-prometheus' (PodMonitoring, ClusterRules)."
    )
    exporter: ExporterName = Field(
        "gpu-operator",
        description="Who installed the DCGM exporter: 'gpu-operator' (NVIDIA GPU Operator), "
        "'dcgm-exporter-chart' (NVIDIA's Helm chart) or 'gke-managed-dcgm' (GKE's managed "
        "DCGM metrics package, which GKE scrapes itself: no scrape object is created).",
    )
    exporter_namespace: str | None = Field(
        None,
        pattern=_DNS_LABEL,
        description="The exporter's namespace. Default: gpu-operator (GPU Operator) or "
        "dcgm-exporter (the chart's release namespace).",
    )
    exporter_labels: dict[str, str] | None = Field(
        None,
        description="Labels selecting the exporter's Service (ServiceMonitor) or pods "
        "(PodMonitor, PodMonitoring). Default: the installer's (see docs).",
    )
    exporter_port: str | None = Field(
        None,
        description="The port's name: the Service port for a ServiceMonitor, the container "
        "port otherwise. Default: the installer's (gpu-metrics / metrics).",
    )
    scrape: bool = Field(
        True,
        description="Create the scrape object. False when the installer's own ServiceMonitor "
        "already scrapes the exporter (GPU Operator dcgmExporter.serviceMonitor.enabled, the "
        "chart's serviceMonitor.enabled): two scrapes double every series and every alert.",
    )
    scrape_kind: Literal["ServiceMonitor", "PodMonitor"] = Field(
        "ServiceMonitor",
        description="prometheus-operator only: scrape through the exporter's Service "
        "(ServiceMonitor, default) or its pods (PodMonitor).",
    )
    scrape_interval: str = Field(
        "15s",
        pattern=_DURATION,
        description="Scrape interval. Default 15s, the GPU Operator's and the chart's.",
    )
    scrape_timeout: str = Field("10s", pattern=_DURATION, description="Default 10s.")
    rules_namespace: str | None = Field(
        None,
        pattern=_DNS_LABEL,
        description="prometheus-operator: the PrometheusRule's namespace (one the "
        "Prometheus' ruleNamespaceSelector selects). Default: the exporter's namespace. "
        "GMP's ClusterRules are cluster-scoped.",
    )
    selector_labels: dict[str, str] = Field(
        default_factory=dict,
        description="Labels the Prometheus selects monitors and rules by "
        "(serviceMonitorSelector, ruleSelector; kube-prometheus-stack: "
        "{'release': '<release name>'}). Added to every object.",
    )
    namespaces: tuple[str, ...] = Field(
        (),
        description="The workload namespaces the GPU alerts watch (TeamNamespace names). "
        "Default: every namespace.",
    )
    idle: IdleGpuAlert = Field(default_factory=IdleGpuAlert)
    starvation: StarvationAlert = Field(default_factory=StarvationAlert)
    queue_wait: QueueWaitAlert = Field(default_factory=QueueWaitAlert)
    alert_labels: dict[str, str] = Field(
        default_factory=dict,
        description="Extra labels on every alert, for Alertmanager routing (e.g. "
        "{'team': 'ml'}). Keys are Prometheus label names.",
    )
    runbook_url: str | None = Field(
        None, description="A link set as every alert's runbook_url annotation."
    )

    @field_validator("namespaces")
    @classmethod
    def _namespaces_are_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        bad = [n for n in names if not re.fullmatch(_DNS_LABEL, n)]
        if bad:
            raise ValueError(f"{bad} are not namespace names. Fix: DNS-1123 labels.")
        return names


# ---- PromQL ------------------------------------------------------------------------------


def _matchers(namespaces: tuple[str, ...]) -> str:
    # Namespace names are DNS labels: no regex metacharacter needs escaping but `.`, which
    # they cannot contain.
    parts = [f'{POD_LABEL}!=""']
    if namespaces:
        parts.append(f'{NAMESPACE_LABEL}=~"{"|".join(namespaces)}"')
    return "{" + ", ".join(parts) + "}"


def _by() -> str:
    return f"{NAMESPACE_LABEL}, {POD_LABEL}"


def _number(value: float) -> str:
    return f"{value:g}"


def idle_expr(alert: IdleGpuAlert, namespaces: tuple[str, ...] = ()) -> str:
    """The number of a pod's GPUs whose highest utilisation over the window stayed below the
    threshold; a series per pod that holds at least one idle GPU."""
    return (
        f"count by ({_by()}) ("
        f"max_over_time({GPU_UTIL}{_matchers(namespaces)}[{alert.window}]) "
        f"< {_number(alert.threshold_percent)})"
    )


def starvation_expr(
    alert: StarvationAlert, idle: IdleGpuAlert | None = None, namespaces: tuple[str, ...] = ()
) -> str:
    """A pod's GPUs' average utilisation over the window, where below the threshold; pods
    whose GPUs were all idle are left to the idle alert."""
    selector = _matchers(namespaces)
    starved = (
        f"avg by ({_by()}) (avg_over_time({GPU_UTIL}{selector}[{alert.window}])) "
        f"< {_number(alert.threshold_percent)}"
    )
    if idle is None or not idle.enabled:
        return starved
    all_idle = (
        f"max by ({_by()}) (max_over_time({GPU_UTIL}{selector}[{idle.window}])) "
        f"< {_number(idle.threshold_percent)}"
    )
    return f"({starved}) unless on ({_by()}) ({all_idle})"


def _queue_matchers(alert: QueueWaitAlert, *extra: str) -> str:
    parts = list(extra)
    if alert.cluster_queues:
        parts.append(f'cluster_queue=~"{"|".join(alert.cluster_queues)}"')
    return "{" + ", ".join(parts) + "}" if parts else ""


def queue_wait_expr(alert: QueueWaitAlert) -> str:
    """The admission-wait quantile per ClusterQueue over the window, in seconds, where
    above the limit (kueue_admission_wait_time_seconds: "the time between a workload was
    created or requeued until admission, per 'cluster_queue'")."""
    return (
        f"histogram_quantile({_number(alert.quantile)}, sum by (cluster_queue, le) "
        f"(rate(kueue_admission_wait_time_seconds_bucket{_queue_matchers(alert)}"
        f"[{alert.window}]))) > {alert.max_wait_seconds}"
    )


def queue_stalled_expr(alert: QueueWaitAlert) -> str:
    """ClusterQueues with pending workloads (active or inadmissible) that admitted none over
    the stall window: the wait histogram only records workloads once admitted, so a queue
    admitting nothing is invisible to it."""
    matchers = _queue_matchers(alert)
    return (
        f"(sum by (cluster_queue) (kueue_pending_workloads{matchers}) > 0) "
        f"unless on (cluster_queue) "
        f"(sum by (cluster_queue) (increase(kueue_admitted_workloads_total{matchers}"
        f"[{alert.stalled_for}])) > 0)"
    )


# ---- the component -----------------------------------------------------------------------

#: Per alert: (summary, why it matters, what to do). `{window}`-style fields are filled in
#: from the arguments; `{{ ... }}` is Prometheus' alert templating.
_TEXT = {
    "AistackGpuIdle": (
        "{{ $value }} GPU(s) of pod {{ $labels.exported_namespace }}/"
        "{{ $labels.exported_pod }} did nothing for {window}.",
        "An idle GPU costs as much as a busy one (C5), and holds quota other work waits for.",
        "Look at the pod: a finished script whose container sleeps, a notebook left open, a "
        "job stuck before its first step. Stop it (kubectl delete pod, or suspend its Job or "
        "its LocalQueue); if it must stay up, drop the GPU from its requests. Kueue's quota "
        "and the node (scaled in by the autoscaler or Karpenter) free when the pod goes.",
    ),
    "AistackGpuStarved": (
        "Pod {{ $labels.exported_namespace }}/{{ $labels.exported_pod }} averaged "
        '{{ $value | printf "%.0f" }} % GPU utilisation over {window}.',
        "The GPUs wait on input (T3): paid accelerators idling behind the data pipeline.",
        "Profile the data pipeline: more DataLoader workers, pinned memory and prefetching, "
        "the dataset cached on node-local NVMe instead of read from the bucket each epoch, "
        "preprocessing moved offline; or fewer GPUs for this job. The DCGM_FI_PROF_* "
        "metrics, where the GPU has them, tell compute-bound from memory-bound.",
    ),
    "AistackQueueWaitHigh": (
        "ClusterQueue {{ $labels.cluster_queue }}: {quantile} of admissions waited "
        "{{ $value | humanizeDuration }} or longer over {window}.",
        "Work waits for GPU quota longer than the team planned for.",
        "Compare kueue_cluster_queue_resource_usage with the nominal quota: at quota all the "
        "time, raise the queue's GPU quota and the node pools' maximum together (and the "
        "budget); below it, look at priorities and preemption, or capacity the pools cannot "
        "get (Spot).",
    ),
    "AistackQueueStalled": (
        "ClusterQueue {{ $labels.cluster_queue }} has {{ $value }} pending workload(s) "
        "and admitted none in {stalled_for}.",
        "Nothing moves through the queue: a stopped queue, inadmissible work or no capacity.",
        "kubectl get clusterqueue {{ $labels.cluster_queue }} -o yaml: stopPolicy set (the "
        "kill switch) or an inactive status; kubectl get workloads -A for ones marked "
        "inadmissible (a request no flavor fits, a missing LocalQueue); node pools at their "
        "maximum or out of Spot capacity. Long jobs holding all the quota stall it too.",
    ),
}

_CHECKLIST = {
    "AistackGpuIdle": "C5",
    "AistackGpuStarved": "T3",
}


class GpuMonitoring(pulumi.ComponentResource):
    """DCGM exporter scraping and GPU/queue alert rules for an existing monitoring stack."""

    args: GpuMonitoringArgs
    scrape: k8s.apiextensions.CustomResource | None
    rules: k8s.apiextensions.CustomResource
    alert_names: list[str]

    def __init__(
        self,
        name: str,
        args: GpuMonitoringArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        def checks(args: GpuMonitoringArgs) -> None:
            _check(name, args)

        args = GpuMonitoringArgs.validate_with(args, checks, where=name)[0]
        super().__init__("aistack:index:K8sGpuMonitoring", name, None, opts)
        self.args = args
        labels = {**labels_for(args.governance, component="gpu-monitoring"), **args.selector_labels}
        annotations = {
            "aistack.dev/dcgm-exporter": args.exporter,
            "aistack.dev/pinned": " ".join(f"{k}={v}" for k, v in PINNED.items()),
        }
        opts_in = child_opts(self)
        exporter = _exporter(args)

        self.scrape = None
        if args.scrape and exporter is not None:
            api_version, kind, spec = _scrape(args, exporter)
            self.scrape = k8s.apiextensions.CustomResource(
                f"{name}-dcgm-scrape",
                api_version=api_version,
                kind=kind,
                metadata={
                    "name": f"{name}-dcgm-exporter",
                    "namespace": exporter.namespace,
                    "labels": labels,
                    "annotations": annotations,
                },
                spec=spec,
                opts=opts_in,
            )
        rules = _alert_rules(args)
        self.alert_names = [rule.alert for rule in rules]
        # Who scrapes the exporter for these rules (AIS-C5-05 reads it): this component,
        # the installer's own ServiceMonitor, or GKE's managed DCGM.
        scraped_by = (
            "gke-managed"
            if exporter is None
            else ("aistack" if self.scrape is not None else "installer")
        )
        metadata: dict[str, Any] = {
            "name": f"{name}-gpu-alerts",
            "labels": labels,
            "annotations": {**annotations, DCGM_SCRAPE_ANNOTATION: scraped_by},
        }
        if args.platform == "prometheus-operator":
            group = RuleGroup(name="aistack-gpu", interval="1m", rules=rules)
            metadata["namespace"] = args.rules_namespace or _namespace(args)
            rules_spec = render(PrometheusRuleSpec(groups=[group]))
            api_version, kind = "monitoring.coreos.com/v1", "PrometheusRule"
        else:
            # ClusterRules, not Rules: a Rules object "processes only metric data from this
            # namespace" (prometheus-engine pkg/operator/apis/monitoring/v1/rules_types.go),
            # and the DCGM series (the exporter's namespace) and Kueue's (kueue-system) are
            # in two.
            gmp_group = GmpRuleGroup(name="aistack-gpu", interval="1m", rules=rules)
            rules_spec = render(GmpRulesSpec(groups=[gmp_group]))
            api_version, kind = "monitoring.googleapis.com/v1", "ClusterRules"
        self.rules = k8s.apiextensions.CustomResource(
            f"{name}-rules",
            api_version=api_version,
            kind=kind,
            metadata=metadata,
            spec=rules_spec,
            opts=opts_in,
        )
        self.register_outputs({"alert_names": self.alert_names})


def _exporter(args: GpuMonitoringArgs) -> Exporter | None:
    if args.exporter == "gke-managed-dcgm":
        return None  # GKE deploys and scrapes it (docs/components/k8s/gpu-monitoring.md).
    known = EXPORTERS[args.exporter]
    return Exporter(
        namespace=args.exporter_namespace or known.namespace,
        service_labels=args.exporter_labels or known.service_labels,
        service_port=args.exporter_port or known.service_port,
        pod_labels=args.exporter_labels or known.pod_labels,
        pod_port=args.exporter_port or known.pod_port,
    )


def _namespace(args: GpuMonitoringArgs) -> str:
    exporter = _exporter(args)
    return exporter.namespace if exporter else "default"


def _scrape(args: GpuMonitoringArgs, exporter: Exporter) -> tuple[str, str, dict[str, Any]]:
    if args.platform == "gke-managed-prometheus":
        # PodMonitoring selects pods in its own namespace; the default target labels
        # (container, pod, top_level_controller_*; namespace always) are kept, so the
        # exporter's attribution arrives as exported_* as with Prometheus.
        spec = PodMonitoringSpec(
            selector=LabelSelector(match_labels=exporter.pod_labels),
            endpoints=[
                GmpEndpoint(
                    port=exporter.pod_port,
                    interval=args.scrape_interval,
                    timeout=args.scrape_timeout,
                )
            ],
            target_labels=GmpTargetLabels(metadata=["container", "node", "pod"]),
        )
        return "monitoring.googleapis.com/v1", "PodMonitoring", render(spec)
    namespaces = NamespaceSelector(match_names=[exporter.namespace])
    if args.scrape_kind == "PodMonitor":
        pod_spec = PodMonitorSpec(
            selector=LabelSelector(match_labels=exporter.pod_labels),
            namespace_selector=namespaces,
            pod_metrics_endpoints=[
                PodMetricsEndpoint(
                    port=exporter.pod_port,
                    interval=args.scrape_interval,
                    scrape_timeout=args.scrape_timeout,
                    honor_labels=False,
                )
            ],
        )
        return "monitoring.coreos.com/v1", "PodMonitor", render(pod_spec)
    service_spec = ServiceMonitorSpec(
        selector=LabelSelector(match_labels=exporter.service_labels),
        namespace_selector=namespaces,
        endpoints=[
            ServiceMonitorEndpoint(
                port=exporter.service_port,
                interval=args.scrape_interval,
                scrape_timeout=args.scrape_timeout,
                honor_labels=False,
            )
        ],
    )
    return "monitoring.coreos.com/v1", "ServiceMonitor", render(service_spec)


def _alert_rules(args: GpuMonitoringArgs) -> list[AlertRule]:
    governance = args.governance
    common = {
        "aistack_stack": stack_id(),
        "aistack_owner": governance.owner,
        "aistack_cost_center": governance.cost_center,
        "aistack_environment": governance.environment,
        **args.alert_labels,
    }
    rules: list[AlertRule] = []

    def add(alert: str, expr: str, for_: str, severity: str, **fmt: str) -> None:
        summary, why, runbook = _TEXT[alert]
        annotations = {"summary": _fill(summary, fmt), "description": why, "runbook": runbook}
        if args.runbook_url:
            annotations["runbook_url"] = args.runbook_url
        rules.append(
            AlertRule(
                alert=alert,
                expr=expr,
                for_=for_,
                labels={
                    **common,
                    "severity": severity,
                    "aistack_alert": label_value(alert),
                    # Queue wait is no checklist item of its own: it tells capacity
                    # planning when the GPU quota (C3) is too tight.
                    **({"aistack_checklist": _CHECKLIST[alert]} if alert in _CHECKLIST else {}),
                },
                annotations=annotations,
            )
        )

    if args.idle.enabled:
        add(
            "AistackGpuIdle",
            idle_expr(args.idle, args.namespaces),
            args.idle.for_duration,
            args.idle.severity,
            window=args.idle.window,
        )
    if args.starvation.enabled:
        add(
            "AistackGpuStarved",
            starvation_expr(args.starvation, args.idle, args.namespaces),
            args.starvation.for_duration,
            args.starvation.severity,
            window=args.starvation.window,
        )
    if args.queue_wait.enabled:
        wait = args.queue_wait
        add(
            "AistackQueueWaitHigh",
            queue_wait_expr(wait),
            "15m",
            wait.severity,
            quantile=_number(wait.quantile),
            window=wait.window,
        )
        add(
            "AistackQueueStalled",
            queue_stalled_expr(wait),
            wait.stalled_for,
            wait.severity,
            stalled_for=wait.stalled_for,
        )
    return rules


def _check(name: str, args: GpuMonitoringArgs) -> None:
    problems = Problems()
    if args.platform == "prometheus-operator" and args.exporter == "gke-managed-dcgm":
        problems.add(
            f"{name}.exporter",
            "GKE's managed DCGM is scraped by Managed Service for Prometheus only.",
            "use platform: gke-managed-prometheus, or install the GPU Operator's exporter.",
        )
    if args.platform == "gke-managed-prometheus" and args.scrape_kind != "ServiceMonitor":
        problems.add(
            f"{name}.scrapeKind",
            "is a Prometheus Operator kind; GMP scrapes pods with a PodMonitoring.",
            "leave it unset.",
        )
    if args.platform == "gke-managed-prometheus" and args.rules_namespace:
        problems.add(
            f"{name}.rulesNamespace",
            "GMP's ClusterRules are cluster-scoped.",
            "leave it unset.",
        )
    if args.exporter == "gke-managed-dcgm" and (
        args.exporter_labels or args.exporter_port or args.exporter_namespace
    ):
        problems.add(
            f"{name}.exporter",
            "GKE manages its DCGM exporter and its scrape; nothing here selects it.",
            "drop exporterNamespace, exporterLabels and exporterPort.",
        )
    if args.exporter_labels is not None and not args.exporter_labels:
        problems.add(f"{name}.exporterLabels", "is empty.", "name at least one label.")
    if _seconds(args.scrape_timeout) > _seconds(args.scrape_interval):
        # prometheus-operator and Prometheus refuse scrape_timeout > scrape_interval.
        problems.add(
            f"{name}.scrapeTimeout",
            f"{args.scrape_timeout} is longer than scrapeInterval {args.scrape_interval}.",
            "make it at most the interval.",
        )
    if (
        args.idle.enabled
        and args.starvation.enabled
        and args.starvation.threshold_percent <= args.idle.threshold_percent
    ):
        problems.add(
            f"{name}.starvation.thresholdPercent",
            f"{_number(args.starvation.threshold_percent)} is not above the idle threshold "
            f"{_number(args.idle.threshold_percent)}: starvation would never fire.",
            "raise it (default 40).",
        )
    for field, value in (
        ("idle.window", args.idle.window),
        ("starvation.window", args.starvation.window),
        ("queueWait.window", args.queue_wait.window),
        ("queueWait.stalledFor", args.queue_wait.stalled_for),
    ):
        if _seconds(value) == 0:
            problems.add(f"{name}.{field}", "is zero.", "give a window, e.g. 30m.")
    for key in args.alert_labels:
        if not _PROM_LABEL.fullmatch(key) or key.startswith("__"):
            problems.add(
                f"{name}.alertLabels.{key}",
                "is not a Prometheus label name.",
                "use [a-zA-Z_][a-zA-Z0-9_]*, not starting with __.",
            )
        if key in ("severity", "aistack_checklist", "aistack_alert"):
            problems.add(f"{name}.alertLabels.{key}", "is set by the component.", "drop it.")
    if len(set(args.namespaces)) != len(args.namespaces):
        problems.add(f"{name}.namespaces", "lists a namespace twice.", "name each once.")
    problems.raise_if_any()


def _fill(template: str, values: dict[str, str]) -> str:
    """`{window}`-style placeholders filled, leaving Prometheus' `{{ $labels.x }}` as is
    (str.format would read `{{` as an escaped brace)."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def _seconds(duration: str) -> int:
    units = {"h": 3600, "m": 60, "s": 1}
    return sum(int(n) * units[u] for n, u in re.findall(r"([0-9]+)([hms])", duration))
