"""Whether Kueue could ever admit a job template: Kueue's own rules, applied to the graph.

A workload Kueue cannot admit stays suspended, and nothing fails: no pod runs and no error
reaches `pulumi up`. For each pod set of a template (the Job, or each replicated Job of a
JobSet), with the queue it names, this reads what Kueue v0.19.2 reads and answers as it
would, with an empty queue (the best case: a template that fails here never runs):

- a pod's requests are Kubernetes' `PodRequests` (k8s.io/component-helpers/resource: the
  containers summed, sidecar init containers added, each other init container on its own,
  the largest of those), after Kueue's own adjustments: a container that sets only a limit
  requests its limit (pkg/workload/resources.go `UseLimitsAsMissingRequestsInPod`), and
  the namespace's LimitRange defaults fill what a container leaves out
  (`handlePodLimitRange`); times the pod set's count (pkg/workload/workload.go
  `totalRequestsFromPodSets`);
- every resource requested above zero must be covered by a resource group of the
  ClusterQueue, or "resource X unavailable in ClusterQueue"
  (pkg/scheduler/flavorassigner/flavorassigner.go:802-813, :1071), at Kueue's default
  quotaCheckStrategy;
- a flavor fits when the pod tolerates its node taints, its node labels satisfy the pod's
  node selector and required affinity on the label keys the flavor names
  (`checkFlavorForPodSets`, :1208-1252), and its nominal quota (with a cohort, its
  borrowing limit on top) holds the pod set's requests of every resource of the group.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from aistack.contracts.k8s import parse_quantity
from aistack.engine.graph import StackGraph
from aistack.queries.k8s import (
    JobTemplate,
    job_templates,
    kueue_objects,
    manifest,
    metadata_of,
    pod_specs,
)

__all__ = ["Admission", "admissions", "pod_requests"]

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
_LIMIT_RANGE = "kubernetes:core/v1:LimitRange"

Requests = dict[str, Decimal]


@dataclass(frozen=True)
class Admission:
    """One job template with the ClusterQueue it names and why Kueue would not admit it."""

    template: JobTemplate
    cluster_queue: str | None
    problems: list[str]


def _quantities(values: Mapping[str, Any] | None) -> Requests:
    return {name: parse_quantity(str(value)) for name, value in (values or {}).items()}


def _container_requests(container: Mapping[str, Any], defaults: Requests) -> Requests:
    resources = container.get("resources") or {}
    requests = {**_quantities(resources.get("limits")), **_quantities(resources.get("requests"))}
    return {**defaults, **requests}


def _add(total: Requests, more: Requests) -> Requests:
    return {
        name: total.get(name, Decimal(0)) + more.get(name, Decimal(0)) for name in {*total, *more}
    }


def _largest(one: Requests, other: Requests) -> Requests:
    return {
        name: max(one.get(name, Decimal(0)), other.get(name, Decimal(0))) for name in {*one, *other}
    }


def pod_requests(pod: Mapping[str, Any], defaults: Requests | None = None) -> Requests:
    """What one pod requests, as Kubernetes' PodRequests counts it (with `defaults`, the
    LimitRange's default requests for what a container leaves out)."""
    defaults = defaults or {}
    containers: Requests = {}
    for container in pod.get("containers") or []:
        containers = _add(containers, _container_requests(container, defaults))
    sidecars: Requests = {}
    init_peak: Requests = {}
    for container in pod.get("initContainers") or []:
        requests = _container_requests(container, defaults)
        if container.get("restartPolicy") == "Always":
            sidecars = _add(sidecars, requests)
            init_peak = _largest(init_peak, sidecars)
        else:
            init_peak = _largest(init_peak, _add(requests, sidecars))
    total = _largest(_add(containers, sidecars), init_peak)
    return _add(total, _quantities(pod.get("overhead")))


def _limit_range_defaults(graph: StackGraph, namespace: str | None) -> Requests:
    """Default requests a namespace's LimitRanges give containers (`defaultRequest`, else
    `default`, which is also the request when no default request is set)."""
    defaults: Requests = {}
    for resource in graph.of_type(_LIMIT_RANGE):
        document = manifest(resource)
        if (document.get("metadata") or {}).get("namespace") != namespace:
            continue
        for limit in (document.get("spec") or {}).get("limits") or []:
            if limit.get("type") == "Container":
                defaults.update(_quantities(limit.get("default")))
                defaults.update(_quantities(limit.get("defaultRequest")))
    return defaults


def _tolerated(taint: Mapping[str, Any], tolerations: list[Mapping[str, Any]]) -> bool:
    for toleration in tolerations:
        if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
            continue
        if toleration.get("operator") == "Exists":
            if not toleration.get("key") or toleration.get("key") == taint.get("key"):
                return True
        elif toleration.get("key") == taint.get("key") and toleration.get("value", "") == taint.get(
            "value", ""
        ):
            return True
    return False


def _selector_problem(pod: Mapping[str, Any], labels: Mapping[str, str]) -> str | None:
    """Kueue's `flavorSelector`: the pod's node selector and required affinity, on the label
    keys the flavor names, must match the flavor's node labels."""
    for key, value in (pod.get("nodeSelector") or {}).items():
        if key in labels and labels[key] != value:
            return f"nodeSelector {key}={value} is not the flavor's {key}={labels[key]}"
    affinity = ((pod.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = affinity.get("nodeSelectorTerms") or []
    if not terms:
        return None
    for term in terms:
        expressions = [e for e in term.get("matchExpressions") or [] if e.get("key") in labels]
        if all(_expression_matches(e, labels) for e in expressions):
            return None
    return "no required node affinity term matches the flavor's node labels"


def _expression_matches(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    value = labels.get(str(expression.get("key")))
    operator, values = expression.get("operator"), expression.get("values") or []
    if operator == "In":
        return value in values
    if operator == "NotIn":
        return value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    return True  # Gt/Lt: numeric comparisons Kueue leaves to the scheduler's nodes


def _flavor_problems(
    flavor: Mapping[str, Any],
    flavor_spec: Mapping[str, Any],
    pod: Mapping[str, Any],
    requests: Requests,
    borrowing: bool,
) -> list[str]:
    name = flavor.get("name")
    problems = []
    tolerations = [*(pod.get("tolerations") or []), *(flavor_spec.get("tolerations") or [])]
    for taint in flavor_spec.get("nodeTaints") or []:
        if not _tolerated(taint, tolerations):
            problems.append(f"untolerated taint {taint.get('key')} in flavor {name}")
    mismatch = _selector_problem(pod, flavor_spec.get("nodeLabels") or {})
    if mismatch:
        problems.append(f"flavor {name} doesn't match node affinity ({mismatch})")
    quotas = {str(r.get("name")): r for r in flavor.get("resources") or []}
    for resource, amount in sorted(requests.items()):
        quota = quotas.get(resource) or {}
        available = parse_quantity(str(quota.get("nominalQuota", 0)))
        if borrowing and quota.get("borrowingLimit") is not None:
            available += parse_quantity(str(quota["borrowingLimit"]))
        if amount > available:
            problems.append(
                f"insufficient quota for {resource} in flavor {name}: {amount} > {available}"
            )
    return problems


def _pod_set_problems(
    queue_spec: Mapping[str, Any],
    flavors: Mapping[str, Mapping[str, Any]],
    pod: Mapping[str, Any],
    requests: Requests,
    used: dict[str, Requests],
) -> list[str]:
    """Why a pod set fits no flavor; `used` (flavor -> requests) holds what the workload's
    earlier pod sets took, since Kueue admits a workload's pod sets together."""
    groups = queue_spec.get("resourceGroups") or []
    borrowing = bool(queue_spec.get("cohortName") or queue_spec.get("cohort"))
    problems = [
        f"resource {resource} unavailable in ClusterQueue"
        for resource, amount in sorted(requests.items())
        if amount > 0 and not any(resource in (g.get("coveredResources") or []) for g in groups)
    ]
    for group in groups:
        covered = set(group.get("coveredResources") or [])
        wanted = {r: a for r, a in requests.items() if r in covered and a > 0}
        if not wanted:
            continue
        reasons = []
        for flavor in group.get("flavors") or []:
            name = str(flavor.get("name"))
            total = _add(used.get(name, {}), wanted)
            found = _flavor_problems(flavor, flavors.get(name, {}), pod, total, borrowing)
            if not found:
                used[name] = total
                break
            reasons += found
        else:
            problems.append("no flavor fits: " + "; ".join(reasons or ["the group has no flavor"]))
    return problems


def _queues(
    graph: StackGraph,
) -> tuple[dict[tuple[str | None, str], str], dict[str, Any], dict[str, Any]]:
    local = {}
    for resource in kueue_objects(graph, "LocalQueue"):
        metadata = metadata_of(resource)
        spec = resource.inputs.get("spec") or {}
        local[(metadata.get("namespace"), str(metadata.get("name")))] = str(
            spec.get("clusterQueue")
        )
    cluster = {
        str(metadata_of(r).get("name")): r.inputs.get("spec") or {}
        for r in kueue_objects(graph, "ClusterQueue")
    }
    flavors = {
        str(metadata_of(r).get("name")): r.inputs.get("spec") or {}
        for r in kueue_objects(graph, "ResourceFlavor")
    }
    return local, cluster, flavors


def _pod_sets(document: Mapping[str, Any]) -> list[tuple[Decimal, Mapping[str, Any]]]:
    """(pod count, pod spec) per pod set: a Job's parallelism; for a JobSet, each replicated
    Job's replicas times its parallelism (Kueue's JobSet integration, one pod set each)."""
    replicas = [
        Decimal(replicated.get("replicas", 1) or 1)
        for replicated in (document.get("spec") or {}).get("replicatedJobs") or []
    ] or [Decimal(1)]
    return [
        (times * Decimal(job.get("parallelism", 1) or 1), pod)
        for times, (job, pod) in zip(replicas, pod_specs(dict(document)), strict=False)
    ]


def _namespace(template: JobTemplate) -> str | None:
    own = (template.document.get("metadata") or {}).get("namespace")
    return own or metadata_of(template.config_map).get("namespace")


def admissions(graph: StackGraph) -> Iterator[Admission]:
    """Every job template that names a Kueue queue, with why Kueue would never admit it."""
    local, cluster, flavors = _queues(graph)
    for template in job_templates(graph):
        labels = (template.document.get("metadata") or {}).get("labels") or {}
        queue_name = labels.get(QUEUE_LABEL)
        if not queue_name:
            continue
        namespace = _namespace(template)
        cluster_queue = local.get((namespace, queue_name))
        if cluster_queue is None:
            problem = f"no LocalQueue {queue_name!r} in namespace {namespace!r}"
            yield Admission(template, None, [problem])
            continue
        if cluster_queue not in cluster:
            yield Admission(template, cluster_queue, [f"no ClusterQueue {cluster_queue!r}"])
            continue
        defaults = _limit_range_defaults(graph, namespace)
        problems: list[str] = []
        used: dict[str, Requests] = {}
        for count, pod in _pod_sets(template.document):
            single = pod_requests(pod, defaults)
            requests = {name: amount * count for name, amount in single.items()}
            problems += _pod_set_problems(cluster[cluster_queue], flavors, pod, requests, used)
        yield Admission(template, cluster_queue, problems)
