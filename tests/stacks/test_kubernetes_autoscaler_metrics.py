"""Every autoscaler of the Kubernetes example stacks reads a metrics API something installs:
an HPA's Pods or Object metric is served by `custom.metrics.k8s.io`, its External metric by
`external.metrics.k8s.io` (Kubernetes docs, "Horizontal Pod Autoscaling": support for
metrics APIs), each an APIService an adapter registers; a KEDA ScaledObject needs KEDA.
Without it the HPA reports FailedGetPodsMetric and never scales
(../shared/research/k8s-fidelity-audit.md, defect 13: the GKE stacks' HPAs read an API no
stack installed). A single stack cannot see its operators stack: a test over the pairs."""

from __future__ import annotations

import copy

import pytest

from aistack.engine.graph import StackGraph
from aistack.queries.k8s import builtin_manifests, custom_manifests
from tests._harness import previews

PAIRS = [
    ("stacks/kubernetes", "gke"),
    ("stacks/kubernetes-gke", "gke"),
    ("stacks/kubernetes-eks", "eks"),
]
#: HPA metric source type -> the aggregated API that serves it.
API_OF = {"Pods": "custom.metrics.k8s.io", "Object": "custom.metrics.k8s.io"}
API_OF["External"] = "external.metrics.k8s.io"


def _needed(consumer: StackGraph) -> set[str]:
    needed = set()
    for _, document in builtin_manifests(consumer):
        if document["kind"] == "HorizontalPodAutoscaler":
            for metric in (document.get("spec") or {}).get("metrics") or []:
                if metric.get("type") in API_OF:
                    needed.add(API_OF[metric["type"]])
    if any(d["kind"] == "ScaledObject" for _, d in custom_manifests(consumer)):
        needed.add("keda")
    return needed


def _served(operators: StackGraph) -> set[str]:
    served = set()
    for _, document in builtin_manifests(operators):
        if document["kind"] == "APIService":
            served.add(str((document.get("spec") or {}).get("group")))
    for release in operators.of_type("kubernetes:helm.sh/v3:Release"):
        if release.inputs.get("chart") == "keda" or release.inputs.get("name") == "keda":
            # KEDA's metrics server registers external.metrics.k8s.io for the HPAs it makes.
            served |= {"keda", "external.metrics.k8s.io"}
    return served


@pytest.mark.parametrize(("stack", "operators"), PAIRS)
def test_every_autoscaler_reads_an_api_the_operators_stack_installs(stack, operators):
    consumer = previews.run_project(previews.ROOT / stack)
    installed = previews.run_project(previews.ROOT / "stacks/kubernetes-operators", operators)
    needed = _needed(consumer)
    assert needed
    assert needed <= _served(installed)


def test_an_hpa_without_the_custom_metrics_adapter_reads_nothing():
    """The audit's defect put back: the adapter's APIServices gone."""
    consumer = previews.run_project(previews.ROOT / "stacks/kubernetes-gke")
    installed = copy.deepcopy(
        previews.run_project(previews.ROOT / "stacks/kubernetes-operators", "gke")
    )
    installed.resources[:] = [r for r in installed.resources if not r.type.endswith(":APIService")]
    assert "custom.metrics.k8s.io" in _needed(consumer) - _served(installed)
