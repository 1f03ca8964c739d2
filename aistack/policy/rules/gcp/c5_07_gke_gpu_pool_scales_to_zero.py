"""AIS-C5-07: GKE GPU node pools autoscale down to zero nodes, up to an explicit maximum."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import GKE_NODE_POOL, is_gpu_node_pool


@rule(
    id="AIS-C5-07",
    checklist=["C5"],
    info="GKE GPU node pools autoscale from 0 to an explicit maximum.",
    why="A GPU node bills by the hour whether or not a pod uses it. With a minimum of 0 the "
    "cluster autoscaler removes empty GPU nodes (idle shutdown, C5); a fixed node count or "
    "a minimum above 0 keeps GPUs running overnight, and no maximum leaves no cost cap.",
    fix="Set autoscaling total_min_node_count=0 (or min_node_count=0) and "
    "total_max_node_count, with no fixed node_count (gcp.GpuNodePool does).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for pool in graph.of_type(GKE_NODE_POOL):
        if not is_gpu_node_pool(pool):
            continue
        scaling = pool.inputs.get("autoscaling") or {}
        if not scaling:
            yield fail(pool, "no autoscaling: its GPU nodes run whether or not a job needs them.")
            continue
        low = scaling.get("totalMinNodeCount", scaling.get("minNodeCount", 0))
        high = scaling.get("totalMaxNodeCount", scaling.get("maxNodeCount"))
        if pool.inputs.get("nodeCount"):
            yield fail(pool, "a fixed nodeCount overrides scaling to zero.")
        elif low:
            yield fail(pool, f"autoscaling keeps at least {low} GPU node(s) running.")
        elif not high:
            yield fail(pool, "autoscaling has no maximum: no cap on GPU nodes.")
        else:
            yield ok(pool, f"scales from 0 to {high} nodes.")
