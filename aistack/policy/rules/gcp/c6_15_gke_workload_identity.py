"""AIS-C6-15: GKE clusters enable Workload Identity Federation for GKE."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import GKE_CLUSTER


@rule(
    id="AIS-C6-15",
    checklist=["C6"],
    info="GKE clusters enable Workload Identity (workload_pool <project>.svc.id.goog).",
    why="Without Workload Identity a pod reaches Google APIs only as the node's account or "
    "with a service account key in a Secret: a key never expires and one account serves "
    "every workload. With it, each Kubernetes service account maps to its own identity "
    "with short-lived tokens.",
    fix="Set workload_identity_config.workload_pool='<project>.svc.id.goog' "
    "(gcp.GkeCluster does) and run node pools with the GKE metadata server.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for cluster in graph.of_type(GKE_CLUSTER):
        pool = str(cluster.get("workloadIdentityConfig", "workloadPool") or "")
        if pool.endswith(".svc.id.goog"):
            yield ok(cluster, f"Workload Identity through {pool}.")
        else:
            yield fail(cluster, "no Workload Identity: pods have no identity of their own.")
