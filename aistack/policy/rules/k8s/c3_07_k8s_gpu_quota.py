"""AIS-C3-07: every namespace caps GPU requests and load balancers with a ResourceQuota."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import (
    NAMESPACE,
    RESOURCE_QUOTA,
    SYSTEM_NAMESPACES,
    namespace_of,
    objects_in,
)


def _gpu_keys(hard: dict) -> list[str]:
    """Quota keys capping an extended resource (`requests.nvidia.com/gpu`, `requests.amd.com/
    gpu`): a domain-qualified resource name that is not Kubernetes' own."""
    return [
        key
        for key in hard
        if key.startswith("requests.")
        and "/" in key
        and not key.removeprefix("requests.").split("/", 1)[0].endswith("kubernetes.io")
    ]


@rule(
    id="AIS-C3-07",
    checklist=["C3"],
    info="Every namespace has a ResourceQuota capping GPU requests and LoadBalancer services.",
    why="On Kubernetes the spend is whatever pods request: without a GPU quota one team's "
    "jobs scale the node pools to their maximum, and every Service of type LoadBalancer is "
    "a billed cloud load balancer. A quota is the hard cap the cluster enforces at "
    "admission; the cloud budget alerts on money, after the fact. Kubernetes quotas "
    "extended resources only in the requests.<resource> form (Kubernetes docs, Resource "
    "Quotas), so a `nvidia.com/gpu` or `limits.nvidia.com/gpu` key does not count here.",
    fix="Use k8s.TeamNamespace (gpus:), or add a ResourceQuota with hard "
    "requests.nvidia.com/gpu and services.loadbalancers (0 unless the team serves "
    "through its own load balancer).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for namespace in graph.of_type(NAMESPACE):
        name = namespace_of(namespace)
        if name in SYSTEM_NAMESPACES:
            continue
        hards = [
            (q.inputs.get("spec") or {}).get("hard") or {}
            for q in objects_in(graph, name, RESOURCE_QUOTA)
        ]
        gpu = [key for hard in hards for key in _gpu_keys(hard)]
        balancers = [
            hard["services.loadbalancers"] for hard in hards if "services.loadbalancers" in hard
        ]
        missing = []
        if not gpu:
            missing.append("a requests.<gpu> cap")
        if not balancers:
            missing.append("a services.loadbalancers cap")
        if missing:
            yield fail(
                namespace,
                f"namespace {name!r} has no ResourceQuota with " + " or ".join(missing) + ".",
            )
        else:
            yield ok(
                namespace,
                f"namespace {name!r} caps {', '.join(gpu)} and load balancers at {min(balancers)}.",
            )
