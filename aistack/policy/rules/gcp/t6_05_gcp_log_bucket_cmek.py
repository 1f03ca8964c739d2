"""AIS-T6-05: every GCP log bucket a stack creates is encrypted with a customer key.

The stacks encrypt every other store with a customer-managed key (buckets, registries, the
budget topic, notebook disks); a log bucket without `cmekSettings` keeps its logs under
Google's default key. Cloud Logging encrypts a bucket's new entries with the key named in
`cmekSettings.kmsKeyName` once the project's Logging service account holds
Encrypter/Decrypter on it (pulumi-gcp ProjectBucketConfig.cmek_settings and
ProjectBucketConfigCmekSettings; "If a log bucket has CMEK settings, the CMEK settings
cannot be disabled later"). The AWS twin is AIS-T6-01's KMS-encrypted log groups.
"""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule

LOG_BUCKET = "gcp:logging/projectBucketConfig:ProjectBucketConfig"
#: Google's own buckets, which a stack may configure (retention) but not encrypt here.
_GOOGLE_BUCKETS = ("_Default", "_Required")


@rule(
    id="AIS-T6-05",
    checklist=["T6"],
    info="Every Cloud Logging bucket the stack creates names a customer-managed key.",
    why="Logs hold what the runs and requests did (request logs can hold prompts): they are "
    "data like the datasets, and the stacks keep every other store under a customer key "
    "the team controls and can revoke.",
    fix="Set cmekSettings.kmsKeyName on the logging.ProjectBucketConfig, after granting the "
    "project's Logging service account (logging.getProjectCmekSettings serviceAccountId) "
    "roles/cloudkms.cryptoKeyEncrypterDecrypter on the key (aistack.gcp._logs does).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for bucket in graph.of_type(LOG_BUCKET):
        if str(bucket.inputs.get("bucketId") or "") in _GOOGLE_BUCKETS:
            continue
        key = bucket.get("cmekSettings", "kmsKeyName")
        if isinstance(key, str) and "/cryptoKeys/" in key:
            yield ok(bucket, f"encrypted with {key}")
        else:
            yield fail(bucket, "the log bucket names no customer-managed key (cmekSettings).")
