"""AIS-T6-04: a GKE cluster's logs go to a regional log bucket that keeps them."""

from aistack.policy import fail, ok, rule
from aistack.policy.rules.gcp.t6_gcp_log_bucket_retention import MIN_RETENTION_DAYS
from aistack.queries.gcp import GKE_CLUSTER, LOG_BUCKET, LOG_SINK


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
def check(graph):
    buckets = {}
    for bucket in graph.of_type(LOG_BUCKET):
        location = str(bucket.inputs.get("location") or "global")
        buckets[f"locations/{location}/buckets/{bucket.inputs.get('bucketId')}"] = bucket
    sinks = list(graph.of_type(LOG_SINK))
    for cluster in graph.of_type(GKE_CLUSTER):
        name = str(cluster.inputs.get("name") or "")
        marker = f'cluster_name="{name}"'
        verdict = None
        for sink in sinks:
            if marker not in str(sink.inputs.get("filter") or ""):
                continue
            destination = str(sink.inputs.get("destination") or "")
            bucket = next((b for key, b in buckets.items() if destination.endswith(key)), None)
            if bucket is None:
                continue
            location = str(bucket.inputs.get("location") or "global")
            days = int(bucket.inputs.get("retentionDays") or 30)
            if location != "global" and days >= MIN_RETENTION_DAYS:
                verdict = ok(cluster, f"cluster {name!r}: logs kept {days} days in {location}.")
                break
            verdict = fail(cluster, f"cluster {name!r}: logs in {location} kept {days} days.")
        yield verdict or fail(cluster, f"cluster {name!r}: no sink keeps its logs.")
