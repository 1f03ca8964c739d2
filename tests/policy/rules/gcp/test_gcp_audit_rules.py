"""AIS-D5-05: personal-data buckets are covered by Data Access audit logs for Cloud Storage
(or allServices) with nobody exempted; otherwise advisory non-compliant."""

import pulumi_gcp as gcp

from aistack import gcp as aistack_gcp
from tests.gcp.conftest import GOVERNANCE

CONFIG = {"gcp:project": "team-ml-prod", "gcp:region": "europe-west4"}
PERSONAL = {
    "name": "tickets",
    "version": "v1",
    "source": "https://crm.example.com/exports",
    "licence": "proprietary",
    "containsPersonalData": True,
    "legalBasis": "contract",
}


def platform(audit: dict | None, personal: bool = True):
    def program():
        apis = aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"})
        aistack_gcp.DatasetBucket(
            "data",
            {
                "kind": "dataset",
                "region": "europe-west4",
                "governance": GOVERNANCE,
                "dataset": {**PERSONAL, "containsPersonalData": personal},
            },
            services=apis,
        )
        if audit is not None:
            aistack_gcp.AuditLogs(
                "audit",
                {"governance": GOVERNANCE, "region": "europe-west4", **audit},
                services=apis,
            )

    return program


def bucket_verdicts(verdicts, program):
    found = verdicts("AIS-D5-05", program, **CONFIG)
    return {name: status for name, status in found.items() if name.startswith("data")}


def test_d5_personal_data_with_audit_logs_complies(verdicts):
    assert set(bucket_verdicts(verdicts, platform({})).values()) == {"compliant"}
    every = platform({"dataAccessServices": ["allServices"]})
    assert set(bucket_verdicts(verdicts, every).values()) == {"compliant"}


def test_d5_personal_data_without_data_access_logs_fails(verdicts):
    assert set(bucket_verdicts(verdicts, platform(None)).values()) == {"non-compliant"}
    # Audit logs for another service do not record bucket reads.
    other = platform({"dataAccessServices": ["bigquery.googleapis.com"]})
    assert set(bucket_verdicts(verdicts, other).values()) == {"non-compliant"}


def test_d5_an_exempted_reader_is_not_recorded(verdicts):
    def program():
        platform(None)()
        gcp.projects.IAMAuditConfig(
            "storage-audit",
            project="team-ml-prod",
            service="storage.googleapis.com",
            audit_log_configs=[
                gcp.projects.IAMAuditConfigAuditLogConfigArgs(
                    log_type="DATA_READ",
                    exempted_members=[
                        "serviceAccount:trainer@team-ml-prod.iam.gserviceaccount.com"
                    ],
                )
            ],
        )

    assert set(bucket_verdicts(verdicts, program).values()) == {"non-compliant"}


def test_d5_buckets_without_personal_data_are_not_judged(verdicts):
    assert bucket_verdicts(verdicts, platform(None, personal=False)) == {}


def test_g6_the_audit_log_bucket_declares_third_parties_through_its_component(verdicts):
    found = verdicts("AIS-G6-03", platform({}), **CONFIG)
    assert found["audit-logs"] == "compliant"
