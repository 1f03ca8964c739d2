"""AIS-C3-10: every Karpenter NodePool caps its cpu, and a GPU NodePool its GPUs, in `limits`."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.karpenter import GPU_RESOURCE, is_gpu_pool, node_pools, pool_name


@rule(
    id="AIS-C3-10",
    checklist=["C3"],
    info="Karpenter NodePools set limits on cpu, and GPU NodePools on nvidia.com/gpu.",
    why="A NodePool without limits launches whatever the pending pods ask for, up to the "
    "account's EC2 quota (Karpenter docs v1.14, NodePools, spec.limits: 'If the "
    "NodePool.spec.limits section is unspecified, it means that there is no default "
    "limitation on resource allocation'). One runaway job array then bills a fleet of GPU "
    "nodes before the budget's alert arrives. The limit is the cap the cluster enforces; "
    "Kueue's quota in front of it should equal it.",
    fix="Use aws.KarpenterGpuPool (maxSpotGpus / maxOnDemandGpus), or set spec.limits with "
    "cpu and nvidia.com/gpu on the NodePool.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for pool in node_pools(graph):
        name = pool_name(pool)
        limits = (pool.inputs.get("spec") or {}).get("limits") or {}
        wanted = ["cpu"] + ([GPU_RESOURCE] if is_gpu_pool(pool) else [])
        missing = [key for key in wanted if key not in limits]
        if missing:
            yield fail(pool, f"NodePool {name!r} has no limit on {', '.join(missing)}.")
        else:
            yield ok(
                pool,
                f"NodePool {name!r} is capped at "
                + ", ".join(f"{key} {limits[key]}" for key in wanted)
                + ".",
            )
