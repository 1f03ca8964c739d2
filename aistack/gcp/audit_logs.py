"""`gcp.AuditLogs`: who read the data, and who changed the platform, kept in the stack's
region (D5, G1). The Google Cloud twin of `aws.AuditTrail`.

Cloud Audit Logs writes Admin Activity logs always, but Data Access logs, the only record
of who read or wrote an object, are off for every service except BigQuery until a
project's IAM policy turns them on (Cloud Audit Logs docs, "Data Access audit logs"). A
bucket's usage logs are hourly CSVs without the caller's identity, so they do not answer
"who read this person's record". This component turns Data Access logs on for the chosen
services (Cloud Storage by default: the datasets) and routes every audit log of the project
into a regional log bucket kept `retentionDays`: the `_Default` bucket keeps Data Access
logs 30 days and is global, neither chosen by the team.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pulumi
import pulumi_gcp as gcp
from pydantic import Field, field_validator

from aistack.config import AistackModel, Governance
from aistack.errors import Problems
from aistack.gcp._base import child_opts, labels_for, resource_id_from, scoped_id
from aistack.gcp._logs import regional_log_bucket

if TYPE_CHECKING:
    from aistack.gcp.project_services import ProjectServices

__all__ = ["AuditLogs", "AuditLogsArgs", "DATA_ACCESS_LOG_TYPES", "ALL_SERVICES"]

#: The Data Access log types (AuditLogConfig.LogType in the IAM policy reference):
#: metadata and configuration reads, then the reads and writes of user data.
DATA_ACCESS_LOG_TYPES = ("ADMIN_READ", "DATA_READ", "DATA_WRITE")
#: The audit config service that covers every service of the project (IAM policy
#: reference, AuditConfig.service; CIS GCP benchmark 2.1 asks for it).
ALL_SERVICES = "allServices"
_SERVICE = re.compile(r"^[a-z][a-z0-9-]*(\.[a-z0-9-]+)*\.googleapis\.com$")
APIS = ("logging.googleapis.com", "cloudresourcemanager.googleapis.com", "cloudkms.googleapis.com")


class AuditLogsArgs(AistackModel):
    """Which services' Data Access logs are recorded, and how long the audit logs stay."""

    governance: Governance
    region: str = Field(
        description="Region of the log bucket the audit logs are kept in: in "
        "governance.allowedRegions (C4), the datasets' region."
    )
    data_access_services: tuple[str, ...] = Field(
        ("storage.googleapis.com",),
        min_length=1,
        description="Services whose Data Access logs (ADMIN_READ, DATA_READ, DATA_WRITE) are "
        "turned on, with no exempted principals. Default: Cloud Storage, where the datasets "
        "are. 'allServices' covers every service (CIS GCP 2.1) and costs the most: every "
        "read of every API is a log entry.",
    )
    retention_days: int = Field(
        400,
        ge=1,
        le=3650,
        description="Days the regional log bucket keeps the audit logs (Logging allows 1 to "
        "3650). Default 400, as long as the `_Required` bucket keeps Admin Activity logs.",
    )

    @field_validator("data_access_services")
    @classmethod
    def _services_are_api_names(cls, services: tuple[str, ...]) -> tuple[str, ...]:
        bad = [s for s in services if s != ALL_SERVICES and not _SERVICE.match(s)]
        if bad:
            raise ValueError(
                f"{bad} are not service names. Fix: use API names such as "
                "'storage.googleapis.com', or 'allServices'."
            )
        if len(set(services)) != len(services):
            raise ValueError("a service is listed twice. Fix: list each service once.")
        if ALL_SERVICES in services and len(services) > 1:
            raise ValueError(
                "'allServices' already covers every service. Fix: list it alone, or only "
                "the services you need."
            )
        return services


def _short(service: str) -> str:
    """'storage.googleapis.com' -> 'storage' (the child's name); 'allServices' -> 'all'."""
    return "all" if service == ALL_SERVICES else resource_id_from(service.split(".")[0])


class AuditLogs(pulumi.ComponentResource):
    """Data Access audit logs on for the data's services, and every audit log of the
    project kept in a regional bucket."""

    args: AuditLogsArgs
    audit_configs: dict[str, gcp.projects.IAMAuditConfig]
    log_bucket: gcp.logging.ProjectBucketConfig
    log_sink: gcp.logging.ProjectSink

    def __init__(
        self,
        name: str,
        args: AuditLogsArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        services: ProjectServices | None = None,
    ) -> None:
        """`services`: the stack's ProjectServices (its project is audited, and every
        resource here waits for the APIs it enables)."""

        def checks(args: AuditLogsArgs) -> None:
            problems = Problems()
            found = args.governance.region_problem(args.region, f"{name}.region", cloud="gcp")
            if found:
                problems.items.append(found)
            assert services is not None
            problems.items.extend(services.missing(*APIS, where=name))
            problems.raise_if_any()

        args, _ = AuditLogsArgs.validate_with(
            args, checks, where=name, wiring={"services": services}
        )
        assert services is not None
        # Nothing here takes labels (audit configs, log buckets and sinks have none): the
        # component itself carries the governance labels, residency (C4) among them.
        labels = labels_for(args.governance, workload="audit")
        super().__init__(
            "aistack:index:GcpAuditLogs", name, {"region": args.region, "labels": labels}, opts
        )
        self.args = args
        self.project = services.project
        apis = services.enabling(*APIS)

        # One audit config per service: the provider's IAMAuditConfig is authoritative for
        # its service's entry of the project's policy. Every aistack stack writes the same
        # entry (all three log types, no exempted principals: the training account reads
        # the datasets too, and those reads are the point), so two stacks of one project
        # agree; but deleting it removes the entry for the project, so `destroy` keeps it:
        # one stack's destroy must not turn off the audit logs another stack relies on.
        # Turning them off is a deliberate act (docs/components/gcp/audit-logs.md).
        self.audit_configs = {
            service: gcp.projects.IAMAuditConfig(
                f"{name}-{_short(service)}",
                project=self.project,
                service=service,
                audit_log_configs=[
                    gcp.projects.IAMAuditConfigAuditLogConfigArgs(log_type=log_type)
                    for log_type in DATA_ACCESS_LOG_TYPES
                ],
                opts=child_opts(self, depends_on=apis, retain_on_delete=True),
            )
            for service in args.data_access_services
        }
        # Every audit log type (activity, data_access, system_event, policy) is written under
        # logs/cloudaudit.googleapis.com%2F<type>; `:` is the query language's "has"
        # (substring) operator. The bucket holds records to keep: it outlives destroy.
        self.log_bucket, self.log_sink = regional_log_bucket(
            self,
            name,
            project=self.project,
            region=args.region,
            bucket_id=scoped_id(f"{resource_id_from(name)}-audit", limit=100),
            retention_days=args.retention_days,
            log_filter='logName:"/logs/cloudaudit.googleapis.com"',
            what=f"audit logs {name}",
            contents="every Cloud Audit Logs entry of the project",
            labels=labels_for(args.governance, workload="audit"),
            depends_on=apis,
            records_of=args.governance,
            # The residency claim (C4): the region's bucket is the only copy `_Default`
            # would otherwise keep (Data Access and Policy Denied logs, globally).
            exclusive=True,
        )
        self.register_outputs(
            {
                "data_access_services": list(args.data_access_services),
                "log_bucket": self.log_bucket.id,
                "retention_days": args.retention_days,
            }
        )
