"""AIS-T6-03: logs of GPU VM groups go to a regional log bucket that keeps them."""

from aistack.policy import fail, ok, rule
from aistack.queries.gcp import LOG_BUCKET, LOG_SINK, gpu_groups

#: The _Default bucket keeps logs 30 days (Cloud Logging docs, "Routing and storage
#: overview"); aistack asks for at least that, in a region of the stack's choosing.
MIN_RETENTION_DAYS = 30


@rule(
    id="AIS-T6-03",
    checklist=["T6"],
    info="A log sink routes each GPU VM group's logs to a regional log bucket with a "
    f"retention of at least {MIN_RETENTION_DAYS} days.",
    why="Training logs are the record of what a run did and why it failed. The _Default "
    "bucket is global and keeps 30 days, neither chosen by the team; a regional bucket "
    "with a set retention keeps them where the data lives (C4) as long as needed (T6).",
    fix="Add a logging.ProjectBucketConfig in the pool's region with retention_days and a "
    "logging.ProjectSink whose filter matches the group's VMs (gcp.TrainingPool does).",
)
def check(graph):
    buckets = {}
    for bucket in graph.of_type(LOG_BUCKET):
        location = str(bucket.inputs.get("location") or "global")
        buckets[f"locations/{location}/buckets/{bucket.inputs.get('bucketId')}"] = bucket
    sinks = list(graph.of_type(LOG_SINK))
    for group, _template in gpu_groups(graph):
        base = str(group.inputs.get("baseInstanceName") or "")
        routed = [s for s in sinks if base and base in str(s.inputs.get("filter") or "")]
        verdict = None
        for sink in routed:
            destination = str(sink.inputs.get("destination") or "")
            bucket = next((b for key, b in buckets.items() if destination.endswith(key)), None)
            if bucket is None:
                continue
            location = str(bucket.inputs.get("location") or "global")
            days = int(bucket.inputs.get("retentionDays") or 30)
            if location != "global" and days >= MIN_RETENTION_DAYS:
                verdict = ok(group, f"logs kept {days} days in {location}.")
                break
            verdict = fail(group, f"logs go to a bucket in {location} kept {days} days.")
        yield verdict or fail(group, "no sink routes the group's logs to a log bucket.")
