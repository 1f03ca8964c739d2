"""AIS-S1-06: GKE clusters enforce NetworkPolicy (Dataplane V2 or the Calico addon)."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import GKE_CLUSTER


@rule(
    id="AIS-S1-06",
    checklist=["S1"],
    info="GKE clusters enforce NetworkPolicy: Dataplane V2 (ADVANCED_DATAPATH) or network "
    "policy enabled.",
    why="Kubernetes accepts a NetworkPolicy on any cluster and enforces it only with a CNI "
    "that implements it; without one, the default-deny that separates serving from "
    "training namespaces is silently ignored (Kubernetes docs, 'Network Policies': "
    "'Creating a NetworkPolicy resource without a controller that implements it will have "
    "no effect').",
    fix="Create the cluster with datapath_provider='ADVANCED_DATAPATH' (gcp.GkeCluster "
    "does), or network_policy.enabled with the network policy addon.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for cluster in graph.of_type(GKE_CLUSTER):
        if cluster.inputs.get("datapathProvider") == "ADVANCED_DATAPATH":
            yield ok(cluster, "Dataplane V2 enforces NetworkPolicy.")
        elif cluster.get("networkPolicy", "enabled") is True:
            yield ok(cluster, "the network policy addon enforces NetworkPolicy.")
        else:
            yield fail(cluster, "no NetworkPolicy enforcement: policies are ignored.")
