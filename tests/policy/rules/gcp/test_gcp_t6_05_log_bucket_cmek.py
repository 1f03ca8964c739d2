"""AIS-T6-05: every GCP log bucket a stack creates names a customer-managed key."""

import pulumi_gcp as gcp

from aistack import gcp as aistack_gcp
from tests.policy.rules.shared_verdicts import build, verdicts_of

CONFIG = {"gcp:project": "team-ml-prod", "gcp:region": "europe-west4"}
GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "environment": "dev",
    "allowedRegions": ["europe-west4"],
}
LOGGING_SA_GRANT = "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember"


def test_the_audit_logs_bucket_is_encrypted_after_logging_may_use_the_key():
    def program():
        apis = aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"})
        aistack_gcp.AuditLogs(
            "audit", {"governance": GOVERNANCE, "region": "europe-west4"}, services=apis
        )

    graph = build(program, **CONFIG)
    assert verdicts_of("AIS-T6-05", graph) == {"audit-logs": "compliant"}
    bucket = graph.named("audit-logs")
    (grant,) = [
        g
        for g in graph.of_type(LOGGING_SA_GRANT)
        if g.inputs["cryptoKeyId"] == bucket.get("cmekSettings", "kmsKeyName")
    ]
    # The project's Logging service account (getCmekSettings), before the bucket names it.
    assert grant.inputs["member"].endswith("@gcp-sa-logging.iam.gserviceaccount.com")
    assert grant.urn in bucket.dependencies
    assert grant.inputs["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter"


def test_a_log_bucket_under_google_s_default_key_fails(verdicts):
    def program():
        gcp.logging.ProjectBucketConfig(
            "plain", project="team-ml-prod", location="europe-west4", bucket_id="plain"
        )
        # Google's own buckets are configured, not created: not judged.
        gcp.logging.ProjectBucketConfig(
            "default", project="team-ml-prod", location="global", bucket_id="_Default"
        )

    assert verdicts("AIS-T6-05", program, **CONFIG) == {"plain": "non-compliant"}
