"""AIS-C3-08: every Kueue ClusterQueue's GPU quota is finite and within the pools' maximum."""

from collections.abc import Iterator
from decimal import Decimal

from aistack.contracts.k8s import POOL_LABEL
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import (
    MAX_QUEUE_GPUS,
    is_gpu_resource,
    kueue_objects,
    metadata_of,
    parse_quantity,
)

#: Karpenter NodePools (karpenter.sh/v1): `spec.limits` caps the resources of all the
#: nodes the pool may launch; `spec.template.metadata.labels` are put on those nodes.
_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"


def _declared(graph: StackGraph) -> dict[str, tuple[Decimal, str]]:
    """flavor name -> (the most GPUs of that flavor the stack declares, where said)."""
    declared: dict[str, tuple[Decimal, str]] = {}
    # One aistack pool may have several NodePools (aws.KarpenterGpuPool: `<pool>-spot` and
    # `<pool>-on-demand`, both labelled aistack.dev/pool: <pool>): a flavor's NodePool is
    # one whose node labels agree with every one of the flavor's labels they both name.
    pools = []
    for pool in graph.of_type(_NODE_POOL):
        spec = pool.inputs.get("spec") or {}
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if POOL_LABEL in labels:
            pools.append((pool, labels, spec.get("limits") or {}))
    for flavor in kueue_objects(graph, "ResourceFlavor"):
        metadata = metadata_of(flavor)
        name = metadata.get("name")
        annotated = (metadata.get("annotations") or {}).get("aistack.dev/max-gpus")
        if name and annotated is not None:
            declared[name] = (
                parse_quantity(annotated),
                "its ResourceFlavor's aistack.dev/max-gpus",
            )
        labels = (flavor.inputs.get("spec") or {}).get("nodeLabels") or {}
        for pool, pool_labels, limits in pools:
            if not name or labels.get(POOL_LABEL) != pool_labels[POOL_LABEL]:
                continue
            if any(pool_labels.get(key, value) != value for key, value in labels.items()):
                continue
            for resource, limit in limits.items():
                if is_gpu_resource(resource):
                    value = parse_quantity(limit)
                    if name not in declared or value < declared[name][0]:
                        declared[name] = (value, f"Karpenter NodePool {pool.name}'s limit")
    return declared


@rule(
    id="AIS-C3-08",
    checklist=["C3"],
    info="Every Kueue ClusterQueue's GPU nominal quota is finite and not above the "
    "declared maximum of its pools.",
    why="The ClusterQueue's nominal quota is the most GPUs Kueue admits jobs for at once: "
    "the queue's cost cap. A placeholder like ai-on-gke's 1000000000 ('Infinite' quota) "
    "caps nothing, so only the autoscaler's limits stand between a burst of jobs and the "
    "bill. A quota above the pools' maximum admits jobs the nodes can never hold: they "
    "hold quota while their pods stay pending, and the quota no longer says what the "
    "cluster can spend.",
    fix="Use k8s.TrainingQueue with the pools' kueue_flavors(), or set each flavor's GPU "
    "nominalQuota to the maximum GPUs its node pool may run.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    declared = _declared(graph)
    for queue in kueue_objects(graph, "ClusterQueue"):
        name = metadata_of(queue).get("name") or queue.name
        problems, seen = [], []
        for group in (queue.inputs.get("spec") or {}).get("resourceGroups") or []:
            for flavor in group.get("flavors") or []:
                for resource in flavor.get("resources") or []:
                    if not is_gpu_resource(str(resource.get("name", ""))):
                        continue
                    where = f"{flavor.get('name')}/{resource['name']}"
                    try:
                        quota = parse_quantity(resource.get("nominalQuota"))
                    except ValueError:
                        problems.append(
                            f"{where} quota {resource.get('nominalQuota')!r} is no number"
                        )
                        continue
                    seen.append(f"{where}={quota}")
                    if quota > MAX_QUEUE_GPUS:
                        problems.append(f"{where} quota {quota} is no cap (above {MAX_QUEUE_GPUS})")
                    limit = declared.get(str(flavor.get("name")))
                    if limit is not None and quota > limit[0]:
                        problems.append(f"{where} quota {quota} is above {limit[1]} {limit[0]}")
        if problems:
            yield fail(queue, f"ClusterQueue {name!r}: " + "; ".join(problems) + ".")
        else:
            yield ok(
                queue,
                f"ClusterQueue {name!r} caps GPUs at {', '.join(seen) or 'nothing (no GPUs)'}.",
            )
