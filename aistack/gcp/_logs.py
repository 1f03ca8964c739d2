"""A regional Cloud Logging bucket that keeps a component's logs, and the sink that routes
them there (T6, C4): the `_Default` bucket is global and keeps 30 days, neither chosen by
the team. A sink copies; `_Default` keeps its copy too (exclude the logs there to stop
paying twice)."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

from aistack.config import Governance
from aistack.gcp._base import child_opts, stateful_opts
from aistack.gcp._kms import KMS_ENCRYPTER, customer_key

__all__ = ["KMS_API", "LOGGING_API", "log_bucket_key", "regional_log_bucket"]

KMS_API = "cloudkms.googleapis.com"
LOGGING_API = "logging.googleapis.com"


def log_bucket_key(
    owner: pulumi.ComponentResource,
    name: str,
    *,
    project: pulumi.Input[str],
    region: str,
    labels: dict[str, str],
    depends_on: Sequence[pulumi.Resource],
) -> tuple[pulumi.Output[str], gcp.kms.CryptoKeyIAMMember]:
    """The customer key a log bucket is encrypted with (CMEK, as every other store of the
    stacks), in the bucket's region, and the grant that lets Cloud Logging use it. The
    account is the project's Logging CMEK service account, which `getCmekSettings`
    returns ("Before enabling CMEK for a logging bucket, you must first assign the
    cloudkms.cryptoKeyEncrypterDecrypter role to the service account associated with the
    project", pulumi-gcp ProjectBucketConfigCmekSettings); the bucket names the key only
    after the grant. The key is kept with the bucket: logs written under a deleted key
    cannot be read. The bucket's key can be changed later, never removed (pulumi-gcp
    ProjectBucketConfig.cmek_settings)."""
    _, key = customer_key(
        f"{name}-logs",
        project=project,  # type: ignore[arg-type]
        location=region,
        labels=labels,
        deletion_policy="PREVENT",
        opts=lambda: child_opts(owner, depends_on=list(depends_on), retain_on_delete=True),
    )
    settings = gcp.logging.get_project_cmek_settings_output(
        project=project,
        opts=pulumi.InvokeOutputOptions(parent=owner, depends_on=list(depends_on)),
    )
    grant = gcp.kms.CryptoKeyIAMMember(
        f"{name}-logs-key-logging",
        crypto_key_id=key.id,
        role=KMS_ENCRYPTER,
        member=pulumi.Output.concat("serviceAccount:", settings.service_account_id),
        opts=child_opts(owner, depends_on=list(depends_on), retain_on_delete=True),
    )
    return key.id, grant


def regional_log_bucket(
    owner: pulumi.ComponentResource,
    name: str,
    *,
    project: pulumi.Input[str],
    region: str,
    bucket_id: str,
    retention_days: int,
    log_filter: str,
    what: str,
    contents: str,
    labels: dict[str, str],
    depends_on: Sequence[pulumi.Resource] = (),
    records_of: Governance | None = None,
    exclusive: bool = False,
) -> tuple[gcp.logging.ProjectBucketConfig, gcp.logging.ProjectSink]:
    """`<name>-logs` in `region` kept `retention_days`, encrypted with its own key
    (`log_bucket_key`; `depends_on` must enable Logging and Cloud KMS), and
    `<name>-log-sink` routing the logs `log_filter` matches into it; `what` names the owner
    and `contents` the logs in the descriptions. With `records_of` the logs are records to
    keep (audit logs): protected in prod, as data is.

    Every bucket outlives `pulumi destroy`. Cloud Logging holds a deleted bucket in
    DELETE_REQUESTED for 7 days under its id, and the provider's create GETs the id and
    PATCHes what it finds (resource_logging_bucket_config.go,
    `resourceLoggingBucketConfigAcquireOrCreate`), which a pending-deletion bucket refuses
    ("Buckets must be in an ACTIVE state to be modified",
    GoogleCloudPlatform/cloud-foundation-fabric#1898): a deleted bucket would fail the next
    `up` for a week. Kept, the next `up` adopts it through that same path; its retention
    bounds what it holds. The id ends in the stack's digest (the callers' `scoped_id`), so
    no other stack adopts it.

    A sink copies: the `_Default` sink still stores what it matches in the `_Default`
    bucket, which is global unless the organisation sets a default storage location. With
    `exclusive` the logs are also excluded from `_Default` (a project exclusion is one "in
    the _Default sink", Logging API `projects.exclusions.create`; at most 10 per project),
    so the regional bucket holds the only copy. `_Required` (Admin Activity, System Event)
    cannot be excluded from (LogExclusion reference: "you cannot modify the _Required sink or
    exclude logs from it"): it stays where the organisation's storage location puts it."""
    bucket_id = bucket_id[:100]  # Logging's limit on bucket ids
    key_id, grant = log_bucket_key(
        owner, name, project=project, region=region, labels=labels, depends_on=depends_on
    )
    waits = [*depends_on, grant]
    bucket = gcp.logging.ProjectBucketConfig(
        f"{name}-logs",
        project=project,
        bucket_id=bucket_id,
        location=region,
        retention_days=retention_days,
        description=f"aistack {what}: {contents}",
        cmek_settings=gcp.logging.ProjectBucketConfigCmekSettingsArgs(kms_key_name=key_id),
        opts=(
            child_opts(owner, depends_on=waits, retain_on_delete=True)
            if records_of is None
            else stateful_opts(owner, records_of, allow_destroy=False, depends_on=waits)
        ),
    )
    sink = gcp.logging.ProjectSink(
        f"{name}-log-sink",
        project=project,
        destination=pulumi.Output.concat(
            "logging.googleapis.com/projects/", project, f"/locations/{region}/buckets/{bucket_id}"
        ),
        filter=log_filter,
        unique_writer_identity=True,
        description=f"aistack {what} -> {bucket_id}",
        opts=child_opts(owner, depends_on=[bucket]),
    )
    if exclusive:
        gcp.logging.ProjectExclusion(
            f"{name}-default-exclusion",
            project=project,
            name=bucket_id,
            filter=log_filter,
            description=f"aistack {what}: kept only in {bucket_id} ({region})"[:1000],
            # Routed first, then excluded, so no entry is between the two.
            opts=child_opts(owner, depends_on=[sink]),
        )
    return bucket, sink
