"""AIS-C3-12: the GCP budget kill switch selects training capacity only: every GKE node
pool and managed instance group its selector matches is a training one, never the
cluster's system pool, a serving pool or group, nor a group a controller resizes back."""

from collections.abc import Iterator
from typing import Any

from aistack.contracts.kill_switch import selector
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import (
    AUTOSCALERS,
    BACKEND_SERVICES,
    BILLING_BUDGET,
    GKE_NODE_POOL,
    INSTANCE_TEMPLATES,
    functions_on_topic,
    groups_using,
    is_gcp,
)

#: Kubernetes controllers that keep serving replicas running on the nodes they select.
_SERVING_CONTROLLERS = (
    "kubernetes:apps/v1:Deployment",
    "kubernetes:apps/v1:StatefulSet",
    "kubernetes:apps/v1:ReplicaSet",
)


def _kill_switch_stacks(graph: StackGraph) -> list[tuple[Resource, str]]:
    """(function, stack) for every budget function whose kill switch is on: the stack its
    selector matches is its AISTACK_STACK."""
    found = []
    for budget in graph.of_type(BILLING_BUDGET):
        topic = (budget.inputs.get("allUpdatesRule") or {}).get("pubsubTopic")
        for function in functions_on_topic(graph, topic) if topic else []:
            env = (function.inputs.get("serviceConfig") or {}).get("environmentVariables") or {}
            if env.get("AISTACK_KILL_SWITCH") == "true" and env.get("AISTACK_STACK"):
                found.append((function, str(env["AISTACK_STACK"])))
    return found


def _ours(labels: dict[str, Any], stack: str, chosen: dict[str, Any]) -> bool:
    return (
        labels.get(chosen["STACK_LABEL"]) == stack
        and labels.get(chosen["WORKLOAD_LABEL"]) == chosen["TRAINING_WORKLOAD"]
    )


def _selected_pool(pool: Resource, stack: str, chosen: dict[str, Any]) -> bool:
    """What the function's `_training_pool` matches, read from the graph."""
    config = pool.inputs.get("nodeConfig") or {}
    labels = config.get("resourceLabels") or {}
    nodes = config.get("labels") or {}
    return (
        _ours(labels, stack, chosen)
        and bool(config.get("guestAccelerators"))
        and labels.get(chosen["WORKLOAD_LABEL"]) not in chosen["PROTECTED_WORKLOADS"]
        and nodes.get(chosen["POOL_NODE_LABEL"]) != chosen["SYSTEM_POOL"]
        and pool.inputs.get("name") != chosen["SYSTEM_POOL"]
    )


def _selected_template(template: Resource, stack: str, chosen: dict[str, Any]) -> bool:
    """What the function's `_training_group` matches, by the template's labels."""
    labels = template.inputs.get("labels") or {}
    return (
        _ours(labels, stack, chosen)
        and chosen["GKE_NODE_LABEL"] not in labels
        and not any(label in labels for label in chosen["SERVING_LABELS"])
    )


def _servers_on(graph: StackGraph, pool: Resource) -> list[str]:
    """Serving controllers whose pods' node selector picks this pool's nodes."""
    nodes = (pool.inputs.get("nodeConfig") or {}).get("labels") or {}
    found = []
    for kind in _SERVING_CONTROLLERS:
        for workload in graph.of_type(kind):
            pod = workload.get("spec", "template", "spec") or {}
            wanted = pod.get("nodeSelector") or {}
            if wanted and all(nodes.get(key) == value for key, value in wanted.items()):
                found.append(f"{kind.rsplit(':', 1)[-1]} {workload.name}")
    return found


def _group_problems(graph: StackGraph, group: Resource) -> list[str]:
    problems = []
    link = str(group.outputs.get("instanceGroup") or "")
    for service in (r for kind in BACKEND_SERVICES for r in graph.of_type(kind)):
        if link and any(b.get("group") == link for b in service.inputs.get("backends") or []):
            problems.append(f"serves traffic as a backend of {service.name}")
    names = {group.id, str(group.outputs.get("selfLink") or "")} - {""}
    for autoscaler in (r for kind in AUTOSCALERS for r in graph.of_type(kind)):
        if str(autoscaler.inputs.get("target") or "") in names:
            problems.append(
                f"is resized by the autoscaler {autoscaler.name}, which would add the "
                "capacity back (the function refuses such a group)"
            )
    return problems


@rule(
    id="AIS-C3-12",
    checklist=["C3"],
    info="Every GKE node pool and managed instance group the GCP budget kill switch's "
    "selector matches is training capacity: no system pool, no serving pool or group, no "
    "group an autoscaler resizes.",
    why="At 100 % of the budget the kill switch scales what it selects to zero. A serving "
    "pool or the cluster's system pool labelled as training takes inference (or kube-dns "
    "and the controllers) down with the training jobs; a group an autoscaler owns comes "
    "straight back.",
    fix="Label pools by role (gcp.GpuNodePool workload: serving; gcp.GkeCluster labels its "
    "system pool `system`), serve from gcp.InferenceTier groups, and keep autoscalers off "
    "training groups.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    if not is_gcp(graph):
        return
    chosen = selector("gcp")
    for function, stack in _kill_switch_stacks(graph):
        matched = 0
        for pool in graph.of_type(GKE_NODE_POOL):
            if not _selected_pool(pool, stack, chosen):
                continue
            matched += 1
            servers = _servers_on(graph, pool)
            if servers:
                yield fail(
                    pool,
                    f"the kill switch of {function.name} would scale this pool to zero, but "
                    f"it serves: {', '.join(servers)} select its nodes.",
                )
            else:
                yield ok(pool, "a training GPU pool: the only kind the kill switch stops.")
        for template in (t for kind in INSTANCE_TEMPLATES for t in graph.of_type(kind)):
            if not _selected_template(template, stack, chosen):
                continue
            for group in groups_using(graph, template):
                matched += 1
                problems = _group_problems(graph, group)
                if problems:
                    yield fail(
                        group,
                        f"the kill switch of {function.name} selects this group, which "
                        + "; ".join(problems)
                        + ".",
                    )
                else:
                    yield ok(group, "a training group, resized by nothing but the kill switch.")
        if not matched:
            yield ok(function, "its kill switch matches no capacity in this stack.")
