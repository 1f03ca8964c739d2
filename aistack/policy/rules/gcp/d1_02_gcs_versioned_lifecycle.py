"""AIS-D1-02: every GCS bucket is versioned and retires old versions and stale uploads."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import GCS_BUCKET


@rule(
    id="AIS-D1-02",
    checklist=["D1"],
    info="GCS buckets are versioned, delete noncurrent versions and abort stale uploads.",
    why="Versioning makes an overwritten dataset recoverable; without a lifecycle rule "
    "deleting noncurrent versions every overwrite is billed forever, and abandoned "
    "multipart uploads are billed invisibly.",
    fix="Use gcp.DatasetBucket, or set versioning.enabled and lifecycle rules: Delete with "
    "daysSinceNoncurrentTime (or numNewerVersions) on ARCHIVED objects, and "
    "AbortIncompleteMultipartUpload with an age.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for bucket in graph.of_type(GCS_BUCKET):
        enabled = bool(bucket.get("versioning", "enabled"))
        rules = list(bucket.inputs.get("lifecycleRules") or [])
        expires = any(
            (r.get("action") or {}).get("type") == "Delete"
            and (
                (r.get("condition") or {}).get("daysSinceNoncurrentTime")
                or (r.get("condition") or {}).get("numNewerVersions")
            )
            for r in rules
        )
        aborts = any(
            (r.get("action") or {}).get("type") == "AbortIncompleteMultipartUpload" for r in rules
        )
        missing = [
            what
            for what, present in (
                ("versioning", enabled),
                ("noncurrent-version deletion", expires),
                ("abort of incomplete multipart uploads", aborts),
            )
            if not present
        ]
        if missing:
            yield fail(bucket, "bucket lacks " + ", ".join(missing) + ".")
        else:
            yield ok(bucket, "versioned; old versions deleted; stale uploads aborted.")
