"""AIS-D5-05 (advisory): reads of GCS buckets with personal data are recorded by Cloud Audit
Logs' Data Access logs.

Data Access audit logs are off for Cloud Storage until the project's IAM policy turns them
on (Cloud Audit Logs docs, "Data Access audit logs": disabled by default except for
BigQuery), and a bucket's usage logs carry no caller identity. A bucket labelled
`aistack-personal-data=true` (gcp.DatasetBucket sets it) is covered when the stack holds an
audit config for `storage.googleapis.com` or `allServices` with DATA_READ and no exempted
principals. The twin of AIS-D5-03 on AWS; advisory, because the folder or organisation above
the project may turn the logs on.
"""

from __future__ import annotations

from collections.abc import Iterator

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list
from aistack.queries.gcp import GCS_BUCKET, PERSONAL_DATA_LABEL, labels

AUDIT_CONFIG = "gcp:projects/iAMAuditConfig:IAMAuditConfig"
_COVERING_SERVICES = ("storage.googleapis.com", "allServices")


def _records_storage_reads(config: Resource) -> bool:
    if config.inputs.get("service") not in _COVERING_SERVICES:
        return False
    return any(
        entry.get("logType") == "DATA_READ" and not as_list(entry.get("exemptedMembers"))
        for entry in as_list(config.inputs.get("auditLogConfigs"))
    )


@rule(
    id="AIS-D5-05",
    checklist=["D5", "G1"],
    severity="advisory",
    info="GCS buckets holding personal data have their object reads recorded by Data Access "
    "audit logs.",
    why="Who read personal data, and when, is what a breach investigation or a data "
    "subject's request asks; Cloud Storage records it only once Data Access logs are on.",
    fix="Add gcp.AuditLogs (Data Access logs for storage.googleapis.com), or confirm that "
    "the folder or organisation turns them on for the project.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    covered = any(_records_storage_reads(c) for c in graph.of_type(AUDIT_CONFIG))
    for bucket in graph.of_type(GCS_BUCKET):
        if labels(bucket).get(PERSONAL_DATA_LABEL) != "true":
            continue
        if covered:
            yield ok(bucket, "object reads recorded by Data Access audit logs.")
        else:
            yield fail(bucket, "personal data whose reads no Data Access audit log records.")
