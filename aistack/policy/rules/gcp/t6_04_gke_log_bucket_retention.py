"""AIS-T6-04: a GKE cluster's logs go to a regional log bucket that keeps them."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import GKE_CLUSTER, log_routes
from aistack.queries.gcp_log_retention import MIN_RETENTION_DAYS, retention


@rule(
    id="AIS-T6-04",
    checklist=["T6", "C4"],
    info="A log sink routes each GKE cluster's logs (filter on its cluster_name) to a "
    f"regional log bucket with a retention of at least {MIN_RETENTION_DAYS} days.",
    why="A pod's logs die with its node: Spot GPU nodes come and go by the hour, and the "
    "record of a failed run is only in Cloud Logging. The _Default bucket is global and "
    "keeps 30 days, neither chosen by the team.",
    fix="Use gcp.GkeCluster (logRetentionDays), or add a logging.ProjectBucketConfig in the "
    "cluster's region and a logging.ProjectSink filtered on resource.labels.cluster_name.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    routes = log_routes(graph)
    for cluster in graph.of_type(GKE_CLUSTER):
        marker = f'cluster_name="{cluster.inputs.get("name") or ""}"'
        kept, message = retention([r for r in routes if marker in r.filter], "the cluster's")
        yield ok(cluster, message) if kept else fail(cluster, message)
