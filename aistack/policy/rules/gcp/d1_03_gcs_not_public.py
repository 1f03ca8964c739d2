"""AIS-D1-03: no GCS bucket can be made public: public access prevention, uniform access."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import GCS_BUCKET


@rule(
    id="AIS-D1-03",
    checklist=["D1", "D5"],
    info="GCS buckets enforce public access prevention and uniform bucket-level access.",
    why="Datasets and models leak through one `allUsers` grant or object ACL. Public "
    "access prevention makes GCS refuse public grants outright, and uniform bucket-level "
    "access turns off the per-object ACLs that IAM does not show.",
    fix="Use gcp.DatasetBucket, or set publicAccessPrevention: enforced and "
    "uniformBucketLevelAccess: true on the bucket.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for bucket in graph.of_type(GCS_BUCKET):
        missing = []
        # "inherited" (the default) follows the org policy, which may allow public access.
        if bucket.inputs.get("publicAccessPrevention") != "enforced":
            missing.append("public access prevention 'enforced'")
        if bucket.inputs.get("uniformBucketLevelAccess") is not True:
            missing.append("uniform bucket-level access")
        if missing:
            yield fail(bucket, "bucket lacks " + " and ".join(missing) + ".")
        else:
            yield ok(bucket, "public access prevented; access through IAM only.")
