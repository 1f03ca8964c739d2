"""AIS-D1-01: every bucket is versioned and retires old versions and stale uploads."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import BUCKET, bucket_config


@rule(
    id="AIS-D1-01",
    checklist=["D1"],
    info="S3 buckets are versioned, expire noncurrent versions and abort stale uploads.",
    why="Versioning makes an overwritten dataset recoverable; without noncurrent-version "
    "expiry every overwrite is billed forever, and abandoned multipart uploads are billed "
    "invisibly.",
    fix="Use aws.DatasetBucket, or add BucketVersioning (Enabled) and a "
    "BucketLifecycleConfiguration with noncurrentVersionExpiration and "
    "abortIncompleteMultipartUpload.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for bucket in graph.of_type(BUCKET):
        versioning = bucket_config(graph, bucket, "aws:s3/bucketVersioning:BucketVersioning")
        enabled = any(v.get("versioningConfiguration", "status") == "Enabled" for v in versioning)
        rules = [
            r
            for lifecycle in bucket_config(
                graph, bucket, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
            )
            for r in lifecycle.inputs.get("rules") or []
            if r.get("status") == "Enabled"
        ]
        expires = any(r.get("noncurrentVersionExpiration") for r in rules)
        aborts = any(r.get("abortIncompleteMultipartUpload") for r in rules)
        missing = [
            what
            for what, present in (
                ("versioning", enabled),
                ("noncurrent-version expiry", expires),
                ("abort of incomplete multipart uploads", aborts),
            )
            if not present
        ]
        if missing:
            yield fail(bucket, "bucket lacks " + ", ".join(missing) + ".")
        else:
            yield ok(bucket, "versioned; old versions expire; stale uploads aborted.")
