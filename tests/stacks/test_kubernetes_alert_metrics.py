"""Every metric an alert or recording rule of the Kubernetes example stacks reads is scraped
by something the stacks install: Kueue's by the operators stack (kube-prometheus-stack's
additional ServiceMonitor, or a PodMonitoring on GKE), the DCGM exporter's by a monitor in
its namespace (or GKE's managed DCGM on the cluster), the model servers' by the serving
namespace's pod monitor. Parsed with promql-parser; an alert on a series nobody scrapes
evaluates on nothing and never fires (../shared/research/k8s-fidelity-audit.md, defect 7:
Kueue's metrics were never scraped, so the queue alerts could not fire).

A single stack's graph cannot see its operators stack, so this is a test over the pairs."""

from __future__ import annotations

import copy
from typing import Any

import promql_parser
import pytest

from aistack.engine.graph import StackGraph
from aistack.k8s.gpu_monitoring import EXPORTERS
from aistack.queries.k8s import custom_manifests, selector_matches
from tests._harness import previews
from tests.k8s.test_gpu_monitoring import _nodes

PAIRS = [
    ("stacks/kubernetes", "gke"),
    ("stacks/kubernetes-gke", "gke"),
    ("stacks/kubernetes-eks", "eks"),
]
#: What a stack's cluster, which the stack does not create, is required to provide:
#: stacks/kubernetes runs on a cluster gcp.GkeCluster made (its docstring), which turns on
#: GKE's managed DCGM metrics (its GpuMonitoring exporter is gke-managed-dcgm), as
#: stacks/kubernetes-gke's cluster shows (test_every_series_an_alert_reads_is_scraped).
CLUSTER_PROVIDES = {"stacks/kubernetes": {"DCGM_"}}
RULE_KINDS = {"PrometheusRule", "Rules", "ClusterRules", "GlobalRules"}
MONITOR_KINDS = {"ServiceMonitor", "PodMonitor", "PodMonitoring", "ClusterPodMonitoring"}
#: Series no scrape config produces: `up` is Prometheus' own, one per target it scrapes
#: (Prometheus docs, "Jobs and instances": "up{job, instance}: 1 if the instance is
#: healthy"); the model-quality score is the team's evaluator's (k8s.InferenceService
#: quality.metric: "the model-quality metric the team's evaluator publishes").
NOT_SCRAPED = {"up", "aistack_model_quality_score"}
#: Kueue v0.19.2's metrics Service and manager pods (charts/kueue/templates/manager).
KUEUE_NAMESPACE = "kueue-system"


def _read_metrics(graph: StackGraph) -> set[str]:
    """The series the stack's rules read, less those its own recording rules make."""
    read, recorded = set(), set()
    for _, document in custom_manifests(graph):
        if document["kind"] not in RULE_KINDS:
            continue
        for group in document["spec"]["groups"]:
            for rule in group["rules"]:
                recorded.add(rule.get("record"))
                parsed = promql_parser.parse(rule["expr"])
                read |= {n.name for n in _nodes(parsed) if type(n).__name__ == "VectorSelector"}
    return read - recorded


def _monitors(graph: StackGraph) -> list[tuple[str | None, dict[str, Any]]]:
    """(namespace scraped, selector) of every pod or service monitor the graph installs,
    kube-prometheus-stack's additionalServiceMonitors among them."""
    found = []
    for _, document in custom_manifests(graph):
        if document["kind"] in MONITOR_KINDS:
            spec = document["spec"]
            names = (spec.get("namespaceSelector") or {}).get("matchNames")
            for namespace in names or [document["metadata"].get("namespace")]:
                found.append((namespace, spec.get("selector") or {}))
    for release in graph.of_type("kubernetes:helm.sh/v3:Release"):
        values = release.inputs.get("values") or {}
        for monitor in (values.get("prometheus") or {}).get("additionalServiceMonitors") or []:
            for namespace in (monitor.get("namespaceSelector") or {}).get("matchNames") or []:
                found.append((namespace, monitor.get("selector") or {}))
    return found


def _managed_dcgm(graph: StackGraph) -> bool:
    """GKE's managed DCGM metrics on a cluster of the graph (monitoring_config
    enable_components DCGM with Managed Prometheus)."""
    for cluster in graph.of_type("gcp:container/cluster:Cluster"):
        config = cluster.inputs.get("monitoringConfig") or {}
        if "DCGM" in (config.get("enableComponents") or []) and (
            config.get("managedPrometheus") or {}
        ).get("enabled"):
            return True
    return False


def _serving_labels(graph: StackGraph) -> list[tuple[str | None, dict[str, str]]]:
    labels = []
    for resource in graph.of_type("kubernetes:apps/v1:Deployment"):
        spec = resource.inputs.get("spec") or {}
        pod = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if "aistack.dev/model-name" in pod:
            namespace = (resource.inputs.get("metadata") or {}).get("namespace")
            labels.append((namespace, pod))
    return labels


def _scraped_by(monitors, namespace: str | None, labels: dict[str, str]) -> bool:
    return any(ns == namespace and selector_matches(sel, labels) for ns, sel in monitors)


def _unscraped(
    consumer: StackGraph, operators: StackGraph, cluster_provides: set[str] = frozenset()
) -> dict[str, str]:
    """{metric: why nothing produces it} for the consumer's rules."""
    monitors = _monitors(consumer) + _monitors(operators)
    serving = _serving_labels(consumer)
    missing = {}
    for metric in sorted(_read_metrics(consumer) - NOT_SCRAPED):
        if any(metric.startswith(prefix) for prefix in cluster_provides):
            continue
        if metric.startswith("kueue_"):
            if not any(ns == KUEUE_NAMESPACE for ns, _ in monitors):
                missing[metric] = f"no monitor scrapes {KUEUE_NAMESPACE}"
        elif metric.startswith("DCGM_"):
            exporters = [
                e
                for e in EXPORTERS.values()
                if _scraped_by(monitors, e.namespace, e.service_labels)
                or _scraped_by(monitors, e.namespace, e.pod_labels)
            ]
            if not exporters and not _managed_dcgm(consumer):
                missing[metric] = "no monitor selects a DCGM exporter, no managed DCGM"
        elif not serving or not all(_scraped_by(monitors, ns, labels) for ns, labels in serving):
            missing[metric] = "the serving pods are not all scraped"
    return missing


@pytest.mark.parametrize(("stack", "operators"), PAIRS)
def test_every_series_an_alert_reads_is_scraped(stack, operators):
    consumer = previews.run_project(previews.ROOT / stack)
    installed = previews.run_project(previews.ROOT / "stacks/kubernetes-operators", operators)
    read = _read_metrics(consumer)
    assert {"kueue_pending_workloads", "DCGM_FI_DEV_GPU_UTIL"} <= read
    assert any(metric.startswith("vllm:") for metric in read)
    assert _unscraped(consumer, installed, CLUSTER_PROVIDES.get(stack, set())) == {}


@pytest.mark.parametrize("operators", ["eks", "gke"])
def test_without_the_kueue_scrape_the_queue_alerts_read_nothing(operators):
    """The audit's defect put back: nothing scrapes kueue-system."""
    stack = "stacks/kubernetes-eks" if operators == "eks" else "stacks/kubernetes-gke"
    consumer = previews.run_project(previews.ROOT / stack)
    installed = copy.deepcopy(
        previews.run_project(previews.ROOT / "stacks/kubernetes-operators", operators)
    )
    for release in installed.of_type("kubernetes:helm.sh/v3:Release"):
        (release.inputs.get("values") or {}).get("prometheus", {}).pop(
            "additionalServiceMonitors", None
        )
    installed.resources[:] = [
        r
        for r in installed.resources
        if not (r.type.endswith(":PodMonitoring") and "kueue" in r.name)
    ]
    missing = _unscraped(consumer, installed)
    assert set(missing) == {m for m in _read_metrics(consumer) if m.startswith("kueue_")}


def test_without_a_dcgm_scrape_the_gpu_alerts_read_nothing():
    consumer = copy.deepcopy(previews.run_project(previews.ROOT / "stacks/kubernetes-eks"))
    installed = previews.run_project(previews.ROOT / "stacks/kubernetes-operators", "eks")
    consumer.resources[:] = [
        r for r in consumer.resources if not r.type.endswith(":ServiceMonitor")
    ]
    assert set(_unscraped(consumer, installed)) == {"DCGM_FI_DEV_GPU_UTIL"}
