"""AIS-S1-13: serving pods and training job templates name PriorityClasses that exist, with
serving above training."""

from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import job_templates, manifest, pod_specs
from aistack.queries.k8s_serving import serving_workloads

_PRIORITY_CLASS = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
#: The PriorityClasses every cluster has (kubernetes.io, "Pod Priority and Preemption").
_BUILT_IN = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


def _classes(graph: StackGraph) -> dict[str, int]:
    classes = dict(_BUILT_IN)
    for resource in graph.of_type(_PRIORITY_CLASS):
        document = manifest(resource)
        classes[str(document["metadata"].get("name"))] = int(document.get("value") or 0)
    return classes


def _pods(graph: StackGraph) -> Iterator[tuple[str, Resource, str, dict[str, Any]]]:
    """(role, the resource a finding is about, what to call it, pod spec)."""
    for workload in serving_workloads(graph):
        yield "serving", workload.resource, f"Deployment {workload.name!r}", workload.pod_spec
    for template in job_templates(graph):
        for _, pod in pod_specs(template.document):
            yield (
                "training",
                template.config_map,
                f"{template.kind} template {template.name!r}",
                pod,
            )


@rule(
    id="AIS-S1-13",
    checklist=["S1"],
    info="Serving pods and training job templates name a PriorityClass the stack creates "
    "(or a built-in one), and serving's is above training's.",
    why="Without a priorityClassName every pod runs at priority 0: on shared nodes the "
    "scheduler neither places serving first nor evicts training for it, so a burst of "
    "training can starve the model. A name that no PriorityClass has is worse: the API "
    "server's Priority admission refuses the pod, and the Deployment or Job never starts.",
    fix="Pass k8s.TrainingQueue's priority_class_names: 'serving' to k8s.InferenceService "
    "(priorityClassName) and 'training' to k8s.TrainingJobTemplate (priorityClassName).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    classes = _classes(graph)
    pods = list(_pods(graph))
    training = [
        classes[str(p["priorityClassName"])]
        for role, _, _, p in pods
        if role == "training" and str(p.get("priorityClassName")) in classes
    ]
    for role, resource, where, pod in pods:
        name = pod.get("priorityClassName")
        if not name:
            yield fail(resource, f"{where} ({role}) names no PriorityClass: it runs at priority 0.")
        elif name not in classes:
            yield fail(resource, f"{where} names PriorityClass {name!r}, which nothing creates.")
        elif role == "serving" and training and classes[name] <= max(training):
            yield fail(
                resource,
                f"{where}: {name!r} ({classes[name]}) is not above training's {max(training)}.",
            )
        else:
            yield ok(resource, f"{where} runs at {name!r} ({classes[name]}).")
