"""AIS-C6-14: GKE nodes run the GKE metadata server and a dedicated service account."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import (
    GKE_CLUSTER,
    GKE_NODE_POOL,
    node_config,
    uses_default_compute_account,
)


@rule(
    id="AIS-C6-14",
    checklist=["C6"],
    info="GKE node pools use the GKE metadata server and not the Compute Engine default "
    "service account.",
    why="Without the GKE metadata server every pod can read the node's credentials from "
    "the Compute Engine metadata server and act as the node's account. Nodes that run as "
    "the Compute Engine default account hold Editor on the project (IAM docs, 'Default "
    "service accounts'), so any pod escape owns the project.",
    fix="Set node_config.workload_metadata_config.mode=GKE_METADATA and a dedicated "
    "node_config.service_account with the minimal node roles (gcp.GkeCluster makes one).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for resource in graph.resources:
        if resource.type not in (GKE_NODE_POOL, GKE_CLUSTER):
            continue
        config = node_config(resource)
        if resource.type == GKE_CLUSTER and not config:
            continue  # No default pool configured here: its node pools are judged.
        mode = (config.get("workloadMetadataConfig") or {}).get("mode")
        if mode != "GKE_METADATA":
            yield fail(resource, f"workload metadata mode {mode or 'unset'}: pods can read "
                       "the node's credentials.")  # fmt: skip
        elif uses_default_compute_account(config.get("serviceAccount")):
            yield fail(resource, "the nodes run as the Compute Engine default account.")
        else:
            yield ok(resource, "GKE metadata server, dedicated node account.")
