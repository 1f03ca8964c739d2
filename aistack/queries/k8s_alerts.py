"""Graph queries over Prometheus alerting rules kept as Kubernetes custom resources:
Prometheus Operator `PrometheusRule` and Google Cloud Managed Service for Prometheus
`Rules` / `ClusterRules` / `GlobalRules`, and the scrape objects that feed them.

The rules read PromQL as text: an expression is recognised by the metric and functions it
uses (`max_over_time(DCGM_FI_DEV_GPU_UTIL...) <`), and a namespace matcher
(`namespace` or `exported_namespace`, `=`/`=~`/`!=`/`!~`) tells which namespaces it watches.
That is what a reviewer reads too; the component's own expressions are checked with a real
PromQL parser in tests/k8s/test_gpu_monitoring.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.queries.k8s import (
    NAMESPACE,
    RESOURCE_QUOTA,
    SYSTEM_NAMESPACES,
    metadata_of,
    namespace_of,
    objects_in,
    parse_quantity,
)

__all__ = [
    "GPU_UTILISATION_METRICS",
    "RULE_KINDS",
    "SCRAPE_KINDS",
    "alert_rules",
    "annotation",
    "covers_namespace",
    "gpu_namespaces",
    "is_idle_gpu_alert",
    "is_starvation_alert",
    "rule_family",
]

#: Alerting-rule kinds: token -> monitoring family (who evaluates them).
RULE_KINDS = {
    "kubernetes:monitoring.coreos.com/v1:PrometheusRule": "prometheus-operator",
    "kubernetes:monitoring.googleapis.com/v1:Rules": "gke-managed-prometheus",
    "kubernetes:monitoring.googleapis.com/v1:ClusterRules": "gke-managed-prometheus",
    "kubernetes:monitoring.googleapis.com/v1:GlobalRules": "gke-managed-prometheus",
}
#: Scrape kinds: token -> monitoring family.
SCRAPE_KINDS = {
    "kubernetes:monitoring.coreos.com/v1:ServiceMonitor": "prometheus-operator",
    "kubernetes:monitoring.coreos.com/v1:PodMonitor": "prometheus-operator",
    "kubernetes:monitoring.googleapis.com/v1:PodMonitoring": "gke-managed-prometheus",
    "kubernetes:monitoring.googleapis.com/v1:ClusterPodMonitoring": "gke-managed-prometheus",
}

#: GPU utilisation gauges of the DCGM exporter: DEV_GPU_UTIL everywhere, the profiling
#: engine-activity metric where the GPU supports DCGM profiling.
GPU_UTILISATION_METRICS = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE")
_METRIC = "(?:" + "|".join(GPU_UTILISATION_METRICS) + r")\b"
_IDLE = re.compile(r"\bmax_over_time\s*\(\s*" + _METRIC)
_STARVED = re.compile(r"\bavg_over_time\s*\(\s*" + _METRIC)
_BELOW = re.compile(r"<(?!=)|<=")
_NAMESPACE_MATCHER = re.compile(r'\b(?:exported_)?namespace\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')


def rule_family(resource: Resource) -> str | None:
    return RULE_KINDS.get(resource.type) or SCRAPE_KINDS.get(resource.type)


def alert_rules(graph: StackGraph) -> Iterator[tuple[Resource, dict[str, Any]]]:
    """Every alerting rule (one with `alert`) of every rules object in the graph."""
    for resource in graph.resources:
        if resource.type not in RULE_KINDS:
            continue
        for group in (resource.inputs.get("spec") or {}).get("groups") or []:
            for rule in group.get("rules") or []:
                if rule.get("alert") and isinstance(rule.get("expr"), str):
                    yield resource, rule


def is_idle_gpu_alert(expr: str) -> bool:
    """The highest GPU utilisation over a window, below a threshold: nothing ran."""
    return bool(_IDLE.search(expr) and _BELOW.search(expr))


def is_starvation_alert(expr: str) -> bool:
    """The average GPU utilisation over a window, below a threshold: under-fed."""
    return bool(_STARVED.search(expr) and _BELOW.search(expr))


def covers_namespace(expr: str, namespace: str) -> bool:
    """Whether the expression's namespace matchers let `namespace`'s series through (no
    matcher: every namespace). PromQL regex matchers are anchored (fully matched)."""
    for op, value in _NAMESPACE_MATCHER.findall(expr):
        if op in ("=", "!="):
            matches = value == namespace
        else:
            try:
                matches = re.fullmatch(value, namespace) is not None
            except re.error:
                return False
        if matches != (op in ("=", "=~")):
            return False
    return True


def annotation(resource: Resource, key: str) -> str | None:
    return (metadata_of(resource).get("annotations") or {}).get(key)


def gpu_namespaces(graph: StackGraph) -> Iterator[tuple[Resource, str, int]]:
    """(Namespace, name, GPUs) for every namespace the stack creates whose ResourceQuota
    lets pods request GPUs: a `requests.<domain>/<name>` cap above 0 outside the
    kubernetes.io domain (k8s.TeamNamespace with `gpus` > 0)."""
    for namespace in graph.of_type(NAMESPACE):
        name = namespace_of(namespace)
        if not name or name in SYSTEM_NAMESPACES:
            continue
        gpus = 0
        for quota in objects_in(graph, name, RESOURCE_QUOTA):
            for key, value in ((quota.inputs.get("spec") or {}).get("hard") or {}).items():
                extended = key.removeprefix("requests.")
                domain = extended.split("/", 1)[0]
                if (
                    key.startswith("requests.")
                    and "/" in extended
                    and not domain.endswith("kubernetes.io")
                ):
                    try:
                        gpus += int(parse_quantity(value))
                    except ValueError:
                        continue
        if gpus > 0:
            yield namespace, name, gpus
