"""AIS-C5-06: Karpenter GPU NodePools consolidate (remove) empty nodes and are not static."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.karpenter import is_gpu_pool, node_pools, pool_name


@rule(
    id="AIS-C5-06",
    checklist=["C5"],
    info="Karpenter GPU NodePools remove empty nodes (consolidateAfter is not Never) and do "
    "not keep a static replica count.",
    why="A GPU node nobody uses bills by the hour. Karpenter removes empty nodes through "
    "consolidation; `consolidateAfter: Never` turns that off, and a static NodePool "
    "(`replicas`) keeps its nodes whatever runs on them (Karpenter docs v1.14, NodePools, "
    "spec.disruption and spec.replicas). The CRD's default when disruption is absent "
    "(consolidateAfter 0s) consolidates.",
    fix="Use aws.KarpenterGpuPool (consolidationPolicy WhenEmpty after consolidateAfter, "
    "default 300s), or set spec.disruption.consolidateAfter to a duration and drop replicas.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for pool in node_pools(graph):
        if not is_gpu_pool(pool):
            continue
        name = pool_name(pool)
        spec = pool.inputs.get("spec") or {}
        disruption = spec.get("disruption") or {}
        # The CRD defaults disruption to {consolidateAfter: 0s} (karpenter.sh_nodepools.yaml).
        after = disruption.get("consolidateAfter", "0s")
        if spec.get("replicas") is not None:
            yield fail(
                pool,
                f"NodePool {name!r} is static (replicas {spec['replicas']}): its GPU nodes "
                "stay up when idle.",
            )
        elif after == "Never":
            yield fail(pool, f"NodePool {name!r} never consolidates: empty GPU nodes stay up.")
        else:
            policy = disruption.get("consolidationPolicy", "WhenEmptyOrUnderutilized")
            yield ok(pool, f"NodePool {name!r} consolidates ({policy}) after {after}.")
