"""AIS-C4-03: gcp.AuditLogs keeps the audit logs only in the region: the regional sink's
filter is excluded from _Default. Both ways: the component passes; the same sink without
the exclusion fails."""

import pulumi
import pulumi_gcp as gcp

from aistack import gcp as aistack_gcp
from aistack.gcp._logs import regional_log_bucket
from tests.gcp.conftest import GOVERNANCE

CONFIG = {"gcp:project": "team-ml-prod", "gcp:region": "europe-west4"}
FILTER = 'logName:"/logs/cloudaudit.googleapis.com"'


def test_the_audit_logs_component_excludes_what_it_routes_from_default(verdicts):
    def program():
        apis = aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"})
        aistack_gcp.AuditLogs(
            "audit", {"governance": GOVERNANCE, "region": "europe-west4"}, services=apis
        )

    assert verdicts("AIS-C4-03", program, **CONFIG) == {"audit-log-sink": "compliant"}


def test_a_regional_copy_that_default_also_keeps_fails(verdicts):
    class Audit(pulumi.ComponentResource):
        def __init__(self, apis: aistack_gcp.ProjectServices) -> None:
            super().__init__("aistack:index:GcpAuditLogs", "audit", {})
            regional_log_bucket(
                self,
                "audit",
                project="team-ml-prod",
                region="europe-west4",
                bucket_id="audit",
                retention_days=400,
                log_filter=FILTER,
                what="audit",
                contents="audit logs",
                labels={"team": "ml"},
                depends_on=apis.enabling("logging.googleapis.com", "cloudkms.googleapis.com"),
            )

    def program():
        Audit(aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"}))
        # An exclusion of something else does not count.
        gcp.logging.ProjectExclusion("other", name="debug", filter="severity <= DEBUG")

    assert verdicts("AIS-C4-03", program, **CONFIG) == {"audit-log-sink": "non-compliant"}
