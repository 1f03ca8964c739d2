"""k8s.GpuMonitoring: the DCGM exporter scraped where its installer put it, alert rules on
idle GPUs (C5), starvation (T3) and Kueue queue wait with documented thresholds, every
custom resource valid for the pinned upstream CRD, one ConfigError for bad args."""

from __future__ import annotations

import typing

import promql_parser
import pydantic
import pytest

from aistack import k8s
from aistack.errors import ConfigError
from aistack.k8s import _monitoring_crs as crs
from aistack.k8s.gpu_monitoring import (
    IdleGpuAlert,
    QueueWaitAlert,
    StarvationAlert,
    idle_expr,
    queue_stalled_expr,
    queue_wait_expr,
    starvation_expr,
)
from aistack.queries.k8s import custom_manifests
from aistack.scan.crd_schemas import schema_for, validate_custom_resource


def _monitoring(run, governance, **args):
    return run(lambda: k8s.GpuMonitoring("gpu", {"governance": governance, **args}))


def _manifests(graph):
    return {document["kind"]: document for _, document in custom_manifests(graph)}


def _rules(document):
    return {rule["alert"]: rule for rule in document["spec"]["groups"][0]["rules"]}


# ---- scraping ----------------------------------------------------------------------------


def test_prometheus_operator_scrapes_the_gpu_operators_exporter_service(run, governance):
    found = _manifests(_monitoring(run, governance, platform="prometheus-operator"))
    monitor = found["ServiceMonitor"]
    # GPU Operator v26.7.0 assets/state-dcgm-exporter/0400_service.yaml: Service labelled
    # app=nvidia-dcgm-exporter, port `gpu-metrics` (9400), in the operator's namespace.
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["namespace"] == "gpu-operator"
    assert monitor["spec"]["selector"] == {"matchLabels": {"app": "nvidia-dcgm-exporter"}}
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["gpu-operator"]}
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] == "gpu-metrics"
    # honorLabels false: the exporter's pod attribution arrives as exported_namespace and
    # exported_pod, which the rules select on.
    assert endpoint["honorLabels"] is False
    assert (endpoint["interval"], endpoint["scrapeTimeout"]) == ("15s", "10s")


def test_the_dcgm_exporter_chart_is_selected_by_its_chart_labels_with_a_pod_monitor(
    run, governance
):
    found = _manifests(
        _monitoring(
            run,
            governance,
            platform="prometheus-operator",
            exporter="dcgm-exporter-chart",
            scrapeKind="PodMonitor",
            exporterNamespace="monitoring",
        )
    )
    monitor = found["PodMonitor"]
    # dcgm-exporter chart 4.8.2 (_helpers.tpl selectorLabels, daemonset.yaml port `metrics`).
    assert monitor["spec"]["selector"] == {
        "matchLabels": {"app.kubernetes.io/name": "dcgm-exporter"}
    }
    assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == "metrics"
    assert monitor["metadata"]["namespace"] == "monitoring"
    assert found["PrometheusRule"]["metadata"]["namespace"] == "monitoring"


def test_gke_managed_prometheus_scrapes_with_a_pod_monitoring_and_alerts_with_cluster_rules(
    run, governance
):
    graph = _monitoring(run, governance, platform="gke-managed-prometheus")
    found = _manifests(graph)
    scrape = found["PodMonitoring"]
    assert scrape["apiVersion"] == "monitoring.googleapis.com/v1"
    # A PodMonitoring selects pods in its own namespace: it goes where the exporter runs.
    assert scrape["metadata"]["namespace"] == "gpu-operator"
    assert scrape["spec"]["endpoints"][0]["port"] == "metrics"
    # ClusterRules is cluster-scoped (CRD scope Cluster): Rules would only see the
    # metrics of its own namespace, and DCGM's and Kueue's live in two.
    assert "namespace" not in found["ClusterRules"]["metadata"]
    assert schema_for("monitoring.googleapis.com/v1", "ClusterRules") is not None


def test_gke_managed_dcgm_is_scraped_by_gke_so_only_the_rules_are_created(run, governance):
    found = _manifests(
        _monitoring(run, governance, platform="gke-managed-prometheus", exporter="gke-managed-dcgm")
    )
    assert set(found) == {"ClusterRules"}


def test_no_scrape_object_when_the_installers_own_service_monitor_scrapes(run, governance):
    found = _manifests(_monitoring(run, governance, platform="prometheus-operator", scrape=False))
    assert set(found) == {"PrometheusRule"}


def test_selector_labels_let_the_prometheus_pick_up_monitors_and_rules(run, governance):
    found = _manifests(
        _monitoring(
            run, governance, platform="prometheus-operator", selectorLabels={"release": "kps"}
        )
    )
    for document in found.values():
        assert document["metadata"]["labels"]["release"] == "kps"
        assert document["metadata"]["labels"]["aistack.dev/managed"] == "true"


# ---- the custom resources and their CRDs -------------------------------------------------

CONFIGS = [
    {"platform": "prometheus-operator"},
    {"platform": "prometheus-operator", "scrapeKind": "PodMonitor"},
    {"platform": "prometheus-operator", "exporter": "dcgm-exporter-chart"},
    {"platform": "gke-managed-prometheus"},
    {"platform": "gke-managed-prometheus", "exporter": "gke-managed-dcgm"},
    {
        "platform": "prometheus-operator",
        "namespaces": ["ml-train", "cv-train"],
        "runbookUrl": "https://runbooks.example.com/gpu",
        "alertLabels": {"team": "ml"},
        "queueWait": {"clusterQueues": ["ml"]},
    },
]


@pytest.mark.parametrize("config", CONFIGS)
def test_every_custom_resource_validates_against_the_pinned_upstream_crd(run, governance, config):
    documents = list(_manifests(_monitoring(run, governance, **config)).values())
    assert documents
    for document in documents:
        assert validate_custom_resource(document) == [], document["kind"]


def test_a_misspelt_field_is_caught_by_the_crd_and_by_the_model(run, governance):
    monitor = _manifests(_monitoring(run, governance, platform="prometheus-operator"))[
        "ServiceMonitor"
    ]
    monitor["spec"]["endpoints"][0]["honourLabels"] = True  # pruned by the API server
    assert any("honourLabels" in e for e in validate_custom_resource(monitor))
    with pytest.raises(pydantic.ValidationError, match="honourLabels"):
        crs.ServiceMonitorEndpoint.model_validate(
            {"port": "m", "interval": "15s", "scrapeTimeout": "10s", "honourLabels": True}
        )


def _schema_at(schema, path):
    for step in path:
        schema = schema["items"] if step == "[]" else schema["properties"][step]
    return schema


def _nested(annotation):
    """The model a field holds (itself, in a list, or optional) and whether in a list."""
    options = [annotation, *typing.get_args(annotation)]
    for option in options:
        if typing.get_origin(option) is list:
            (item,) = typing.get_args(option)
            return item, True
        if isinstance(option, type) and issubclass(option, pydantic.BaseModel):
            return option, False
    return None, False


def _model_paths(model, path=()):
    """(path in the CRD, field alias) for every field of a model, recursively."""
    for name, field in model.model_fields.items():
        alias = field.alias or name
        yield path, alias
        inner, listed = _nested(field.annotation)
        if isinstance(inner, type) and issubclass(inner, pydantic.BaseModel):
            yield from _model_paths(inner, (*path, alias, *(["[]"] if listed else [])))


@pytest.mark.parametrize(
    ("model", "api_version", "kind"),
    [
        (crs.ServiceMonitorSpec, "monitoring.coreos.com/v1", "ServiceMonitor"),
        (crs.PodMonitorSpec, "monitoring.coreos.com/v1", "PodMonitor"),
        (crs.PrometheusRuleSpec, "monitoring.coreos.com/v1", "PrometheusRule"),
        (crs.PodMonitoringSpec, "monitoring.googleapis.com/v1", "PodMonitoring"),
        (crs.GmpRulesSpec, "monitoring.googleapis.com/v1", "ClusterRules"),
        (crs.GmpRulesSpec, "monitoring.googleapis.com/v1", "Rules"),
    ],
)
def test_every_modelled_field_is_the_crds_own(model, api_version, kind):
    spec = schema_for(api_version, kind).schema["properties"]["spec"]
    for path, alias in _model_paths(model):
        assert alias in _schema_at(spec, path)["properties"], (kind, path, alias)


# ---- the alerts --------------------------------------------------------------------------


def _nodes(expr):
    """Every node of a parsed PromQL expression."""
    yield expr
    for attribute in ("lhs", "rhs", "expr", "vector_selector", "param"):
        child = getattr(expr, attribute, None)
        if child is not None and not isinstance(child, str | int | float):
            yield from _nodes(child)
    for arg in getattr(expr, "args", None) or []:
        yield from _nodes(arg)


def _functions(expr):
    return {n.func.name for n in _nodes(expr) if type(n).__name__ == "Call"}


def _ranges(expr):
    return {n.range.total_seconds() for n in _nodes(expr) if type(n).__name__ == "MatrixSelector"}


def _metrics(expr):
    return {n.name for n in _nodes(expr) if type(n).__name__ == "VectorSelector"}


@pytest.mark.parametrize("config", CONFIGS)
def test_every_alert_expression_is_valid_promql(run, governance, config):
    rules = (
        _rules(_manifests(_monitoring(run, governance, **config))["PrometheusRule"])
        if (config["platform"] == "prometheus-operator")
        else _rules(_manifests(_monitoring(run, governance, **config))["ClusterRules"])
    )
    assert set(rules) == {
        "AistackGpuIdle",
        "AistackGpuStarved",
        "AistackQueueWaitHigh",
        "AistackQueueStalled",
    }
    for rule in rules.values():
        promql_parser.parse(rule["expr"])  # raises ValueError on a syntax error


def test_the_idle_alert_counts_a_pods_gpus_with_no_busy_sample_in_30_minutes():
    expr = promql_parser.parse(idle_expr(IdleGpuAlert()))
    assert str(expr.op) == "count"
    comparison = expr.expr
    assert str(comparison.op) == "<" and comparison.rhs.val == 1
    assert _functions(expr) == {"max_over_time"}
    assert _ranges(expr) == {1800}
    assert _metrics(expr) == {"DCGM_FI_DEV_GPU_UTIL"}
    assert [str(label) for label in expr.modifier.labels] == ["exported_namespace", "exported_pod"]
    (matcher,) = comparison.lhs.args[0].vector_selector.matchers.matchers
    # GPUs allocated to a pod only: a GPU no pod holds has no exported_pod label.
    assert (matcher.name, matcher.value) == ("exported_pod", "")
    assert str(matcher.op).endswith("NotEqual")


def test_the_idle_alert_is_scoped_to_the_namespaces_given():
    expr = idle_expr(IdleGpuAlert(thresholdPercent=5, window="1h"), ("ml-train", "cv-train"))
    parsed = promql_parser.parse(expr)
    assert _ranges(parsed) == {3600} and parsed.expr.rhs.val == 5
    assert 'exported_namespace=~"ml-train|cv-train"' in expr


def test_starvation_averages_a_pods_gpus_and_leaves_all_idle_pods_to_the_idle_alert():
    expr = promql_parser.parse(starvation_expr(StarvationAlert(), IdleGpuAlert()))
    assert str(expr.op) == "unless"
    starved = expr.lhs.expr
    assert str(starved.op) == "<" and starved.rhs.val == 40
    assert str(starved.lhs.op) == "avg"
    assert _functions(starved) == {"avg_over_time"}
    assert _ranges(starved) == {1800}
    # Without an idle alert, nothing is excluded.
    alone = promql_parser.parse(starvation_expr(StarvationAlert(), None))
    assert str(alone.op) == "<"


def test_queue_wait_uses_kueues_admission_wait_histogram_and_pending_workloads():
    alert = QueueWaitAlert()
    wait = promql_parser.parse(queue_wait_expr(alert))
    assert str(wait.op) == ">" and wait.rhs.val == 3600
    assert _functions(wait) == {"histogram_quantile", "rate"}
    # Kueue v0.19.2 pkg/metrics/metrics.go: kueue_admission_wait_time_seconds (histogram),
    # kueue_pending_workloads (gauge), kueue_admitted_workloads_total (counter).
    assert _metrics(wait) == {"kueue_admission_wait_time_seconds_bucket"}
    stalled = promql_parser.parse(queue_stalled_expr(alert))
    assert str(stalled.op) == "unless"
    assert _metrics(stalled) == {"kueue_pending_workloads", "kueue_admitted_workloads_total"}
    assert _ranges(stalled) == {1800}


def test_every_alert_carries_severity_governance_labels_and_a_runbook(run, governance):
    rules = _rules(
        _manifests(
            _monitoring(
                run,
                governance,
                platform="prometheus-operator",
                runbookUrl="https://runbooks.example.com/gpu",
                alertLabels={"team": "ml"},
            )
        )["PrometheusRule"]
    )
    for name, rule in rules.items():
        labels, annotations = rule["labels"], rule["annotations"]
        assert labels["severity"] == "warning"
        assert labels["aistack_alert"] == name
        assert labels["aistack_owner"] == governance["owner"]
        assert labels["aistack_cost_center"] == governance["costCenter"]
        assert labels["team"] == "ml"
        assert annotations["runbook"] and annotations["summary"]
        assert annotations["runbook_url"] == "https://runbooks.example.com/gpu"
    assert rules["AistackGpuIdle"]["labels"]["aistack_checklist"] == "C5"
    assert rules["AistackGpuStarved"]["labels"]["aistack_checklist"] == "T3"
    # Prometheus templating survives: placeholders filled, {{ $labels.x }} left alone.
    assert "{{ $labels.exported_pod }}" in rules["AistackGpuIdle"]["annotations"]["summary"]
    assert "30m" in rules["AistackGpuIdle"]["annotations"]["summary"]


def test_thresholds_and_durations_are_arguments(run, governance):
    rules = _rules(
        _manifests(
            _monitoring(
                run,
                governance,
                platform="gke-managed-prometheus",
                idle={"thresholdPercent": 2, "window": "1h", "forDuration": "15m"},
                starvation={"thresholdPercent": 25, "severity": "critical"},
                queueWait={"enabled": False},
            )
        )["ClusterRules"]
    )
    assert set(rules) == {"AistackGpuIdle", "AistackGpuStarved"}
    assert rules["AistackGpuIdle"]["for"] == "15m"
    assert "[1h]) < 2)" in rules["AistackGpuIdle"]["expr"]
    assert "< 25" in rules["AistackGpuStarved"]["expr"]
    assert rules["AistackGpuStarved"]["labels"]["severity"] == "critical"


def test_the_documented_defaults():
    idle, starved, queue = IdleGpuAlert(), StarvationAlert(), QueueWaitAlert()
    assert (idle.threshold_percent, idle.window, idle.for_duration) == (1.0, "30m", "5m")
    assert (starved.threshold_percent, starved.window, starved.for_duration) == (
        40.0,
        "30m",
        "10m",
    )
    assert (queue.max_wait_seconds, queue.quantile, queue.window, queue.stalled_for) == (
        3600,
        0.9,
        "1h",
        "30m",
    )


# ---- refused arguments -------------------------------------------------------------------


def test_bad_arguments_are_one_config_error_naming_each_field(run, governance):
    with pytest.raises(ConfigError) as error:
        _monitoring(
            run,
            governance,
            platform="prometheus-operator",
            exporter="gke-managed-dcgm",
            scrapeInterval="10s",
            scrapeTimeout="30s",
            starvation={"thresholdPercent": 1},
            alertLabels={"bad-key": "x"},
        )
    assert set(error.value.fields) == {
        "gpu.exporter",
        "gpu.scrapeTimeout",
        "gpu.starvation.thresholdPercent",
        "gpu.alertLabels.bad-key",
    }


@pytest.mark.parametrize("duration", ["1d", "30", "", "5 m", "1w"])
def test_durations_go_and_prometheus_both_read_are_required(run, governance, duration):
    # GMP's CRDs type `for` and `interval` as Kubernetes `duration` (Go time.ParseDuration:
    # no d or w units); Prometheus reads h/m/s too.
    with pytest.raises(ConfigError) as error:
        _monitoring(run, governance, platform="gke-managed-prometheus", idle={"window": duration})
    assert error.value.fields == ["gpu.idle.window"]


def test_gmp_takes_no_prometheus_operator_options(run, governance):
    with pytest.raises(ConfigError) as error:
        _monitoring(
            run,
            governance,
            platform="gke-managed-prometheus",
            scrapeKind="PodMonitor",
            rulesNamespace="monitoring",
        )
    assert set(error.value.fields) == {"gpu.scrapeKind", "gpu.rulesNamespace"}
