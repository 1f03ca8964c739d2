"""gcp.AuditLogs: Data Access audit logs on for the data's services with nobody exempted,
and every audit log of the project routed to a regional bucket kept the chosen days."""

from __future__ import annotations

import pytest

from aistack import gcp
from aistack.errors import ConfigError

AUDIT_CONFIG = "gcp:projects/iAMAuditConfig:IAMAuditConfig"


def stack(governance, services=None, **args):
    def program():
        apis = services if services is not None else {"project": "team-ml-prod"}
        gcp.AuditLogs(
            "audit",
            {"governance": governance, "region": "europe-west4", **args},
            services=gcp.ProjectServices("apis", apis),
        )

    return program


def test_storage_data_access_logs_are_on_with_nobody_exempted(run, governance):
    graph = run(stack(governance))
    (config,) = graph.of_type(AUDIT_CONFIG)
    assert config.inputs["service"] == "storage.googleapis.com"
    assert config.inputs["project"] == "team-ml-prod"
    entries = config.inputs["auditLogConfigs"]
    assert [e["logType"] for e in entries] == ["ADMIN_READ", "DATA_READ", "DATA_WRITE"]
    assert not any(e.get("exemptedMembers") for e in entries)
    # Terraform's import id of google_project_iam_audit_config.
    assert config.id == "team-ml-prod storage.googleapis.com"


def test_every_audit_log_is_kept_in_the_region_for_the_retention(run, governance):
    graph = run(stack(governance, retentionDays=730))
    bucket = graph.named("audit-logs").inputs
    assert (bucket["location"], bucket["retentionDays"]) == ("europe-west4", 730)
    sink = graph.named("audit-log-sink").inputs
    assert sink["filter"] == 'logName:"/logs/cloudaudit.googleapis.com"'
    assert sink["destination"].endswith("/locations/europe-west4/buckets/audit-audit-13d1dc")


def test_the_audit_log_bucket_outlives_destroy_and_is_protected_in_prod(run, governance):
    bucket = run(stack(governance)).named("audit-logs")
    assert bucket.retain_on_delete and not bucket.protect
    prod = run(stack({**governance, "environment": "prod"})).named("audit-logs")
    assert prod.retain_on_delete and prod.protect
    # The sink holds nothing: it may go with the stack.
    assert not run(stack(governance)).named("audit-log-sink").retain_on_delete


def test_all_services_is_one_config_as_cis_asks(run, governance):
    graph = run(stack(governance, dataAccessServices=["allServices"]))
    assert [c.inputs["service"] for c in graph.of_type(AUDIT_CONFIG)] == ["allServices"]


def test_bad_input_is_one_config_error_naming_every_field(run, governance):
    with pytest.raises(ConfigError) as caught:
        run(
            stack(
                governance,
                region="us-east1",
                dataAccessServices=["storage", "allServices"],
                retentionDays=4000,
            )
        )
    fields = {p.field for p in caught.value.problems}
    assert fields == {"audit.region", "audit.dataAccessServices", "audit.retentionDays"}, fields


def test_a_project_services_without_logging_is_refused(run, governance):
    apis = {"project": "team-ml-prod", "services": ["storage.googleapis.com"]}
    with pytest.raises(ConfigError) as caught:
        run(stack(governance, services=apis))
    assert any("logging.googleapis.com" in p.message for p in caught.value.problems)


def test_the_audit_log_bucket_declares_its_residency_through_the_component(run, governance):
    from aistack import policy

    graph = run(stack(governance))
    rule = next(r for r in policy.all_rules() if r.id == "AIS-C4-02")
    verdicts = {f.resource_name: f.status for f in rule.evaluate(graph)}
    # The log bucket takes no labels: the component's own governance labels declare it.
    assert verdicts["audit-logs"] == "compliant"
    assert graph.named("audit").inputs["labels"]["aistack-allowed-regions"] == (
        "europe-west4_us-central1"
    )
