"""AIS-C5-03: every namespace with a GPU quota submits through a Kueue LocalQueue."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import (
    NAMESPACE,
    RESOURCE_QUOTA,
    SYSTEM_NAMESPACES,
    is_gpu_resource,
    kueue_objects,
    metadata_of,
    namespace_of,
    objects_in,
    parse_quantity,
    selector_matches,
)


def _gpu_quota(graph: StackGraph, namespace: str) -> bool:
    for quota in objects_in(graph, namespace, RESOURCE_QUOTA):
        for key, value in ((quota.inputs.get("spec") or {}).get("hard") or {}).items():
            if key.startswith("requests.") and is_gpu_resource(key.removeprefix("requests.")):
                try:
                    if parse_quantity(value) > 0:
                        return True
                except ValueError:
                    return True
    return False


@rule(
    id="AIS-C5-03",
    checklist=["C5", "C3"],
    info="Every namespace allowed GPUs (but serving ones) has a Kueue LocalQueue bound to "
    "a ClusterQueue that admits the namespace.",
    why="Through the queue, a GPU job waits suspended, with no pods, until Kueue admits "
    "it within quota, and its pods go when it finishes, is preempted or the queue is "
    "stopped: nothing pending asks the autoscaler for GPU nodes, so the pools scale back "
    "to zero when the queue is empty. A namespace without a LocalQueue (or whose "
    "ClusterQueue's namespaceSelector leaves it out) has nowhere to submit but straight "
    "to the scheduler, where jobs start GPU nodes outside the queue's quota and its kill "
    "switch. Serving namespaces (label aistack.dev/tier: serve) are not judged: a model "
    "server is a Deployment that runs until scaled, not a job that waits its turn.",
    fix="List the namespace in k8s.TrainingQueue's namespaces, or create a LocalQueue "
    "there whose ClusterQueue's namespaceSelector selects the namespace.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    queues = {metadata_of(q).get("name"): q for q in kueue_objects(graph, "ClusterQueue")}
    locals_by_namespace: dict[str, list] = {}
    for local in kueue_objects(graph, "LocalQueue"):
        locals_by_namespace.setdefault(namespace_of(local) or "", []).append(local)
    for namespace in graph.of_type(NAMESPACE):
        name = namespace_of(namespace)
        if not name or name in SYSTEM_NAMESPACES or not _gpu_quota(graph, name):
            continue
        labels = {
            **(metadata_of(namespace).get("labels") or {}),
            "kubernetes.io/metadata.name": name,
        }
        if labels.get("aistack.dev/tier") == "serve":
            continue
        bound = []
        for local in locals_by_namespace.get(name, []):
            target = queues.get((local.inputs.get("spec") or {}).get("clusterQueue"))
            if target is not None and selector_matches(
                (target.inputs.get("spec") or {}).get("namespaceSelector"), labels
            ):
                bound.append(f"{metadata_of(local).get('name')} -> {metadata_of(target)['name']}")
        if bound:
            yield ok(namespace, f"namespace {name!r} submits GPU work through {', '.join(bound)}.")
        elif locals_by_namespace.get(name):
            yield fail(
                namespace,
                f"namespace {name!r} has a LocalQueue, but no ClusterQueue in the stack that "
                "it names admits the namespace.",
            )
        else:
            yield fail(namespace, f"namespace {name!r} is allowed GPUs but has no LocalQueue.")
