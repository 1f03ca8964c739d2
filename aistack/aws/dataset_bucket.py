"""`aws.DatasetBucket`: versioned, lifecycle-managed, encrypted S3 storage for ML data.

One component for the kinds of data a team keeps (datasets, checkpoints, models, logs,
and the audit trail's log files), each with lifecycle defaults for how that data ages
(D1). The bucket lives in an explicit region (D2) inside the allowed regions (C4), carries
the dataset's lineage and licence (D6) and, if it holds personal data, the legal basis
(D5, G1). It survives `pulumi destroy` unless `allow_destroy_with_data` says otherwise.
"""

from __future__ import annotations

from typing import Any, Literal

import pulumi
import pulumi_aws as aws
from pydantic import Field, field_validator, model_validator

from aistack.aws import _perms
from aistack.aws._base import child_opts, policy_output, stateful_opts, tags_for
from aistack.aws._kms import customer_key
from aistack.config import AistackModel, Governance
from aistack.contracts.aws import PERSONAL_DATA_TAG, AwsRole
from aistack.dataset_metadata import DatasetMetadata
from aistack.errors import Problems

__all__ = ["DatasetBucket", "DatasetBucketArgs", "DatasetMetadata", "LIFECYCLE_DEFAULTS"]

Kind = Literal["dataset", "checkpoints", "models", "logs", "audit"]

#: Per kind: (noncurrent days, newest noncurrent versions kept, transition noncurrent
#: versions after N days to storage class or None, current objects expire after N days).
#: Why these numbers: docs/components/aws/dataset-bucket.md.
LIFECYCLE_DEFAULTS: dict[str, tuple[int, int, tuple[int, str] | None, int | None]] = {
    # A dataset version overwritten by a new one stays restorable for a quarter; after
    # 30 days it is rarely read, so Standard-IA (30-day minimum) halves its storage price.
    "dataset": (90, 3, (30, "STANDARD_IA"), None),
    # Checkpoints are rewritten constantly; old ones matter for days, not months. No
    # transition: IA's 30-day minimum charge would exceed the saving.
    "checkpoints": (14, 5, None, None),
    # Previous model versions are the rollback path (S6): keep a year, cold after 30 days
    # in Glacier Instant Retrieval, still readable in milliseconds.
    "models": (365, 10, (30, "GLACIER_IR"), None),
    # Logs are append-only; they expire after a year, older than 30 days in Standard-IA.
    "logs": (30, 0, None, 365),
    # CloudTrail log files (aws.AuditTrail): never overwritten; kept a year by default, the
    # period most audit regimes ask for at least.
    "audit": (30, 0, None, 365),
}
ABORT_INCOMPLETE_UPLOAD_DAYS = 7
#: The one bucket-level action that the `s3:prefix` condition key narrows.
SCOPED_LIST_ACTION = "s3:ListBucket"

#: Elastic Load Balancing's log-delivery account per region, for regions opened before
#: August 2022 (AWS: "Enable access logs for your Application Load Balancer"); newer
#: regions use the logdelivery.elasticloadbalancing.amazonaws.com service principal.
ELB_LOG_ACCOUNTS = {
    "us-east-1": "127311923021",
    "us-east-2": "033677994240",
    "us-west-1": "027434742980",
    "us-west-2": "797873946194",
    "af-south-1": "098369216593",
    "ap-east-1": "754344448648",
    "ap-south-1": "718504428378",
    "ap-northeast-1": "582318560864",
    "ap-northeast-2": "600734575887",
    "ap-northeast-3": "383597477331",
    "ap-southeast-1": "114774131450",
    "ap-southeast-2": "783225319266",
    "ca-central-1": "985666609251",
    "eu-central-1": "054676820928",
    "eu-west-1": "156460612806",
    "eu-west-2": "652711504416",
    "eu-west-3": "009996457667",
    "eu-south-1": "635631232127",
    "eu-north-1": "897822967062",
    "me-south-1": "076674570225",
    "sa-east-1": "507241528517",
}


class DatasetBucketArgs(AistackModel):
    kind: Kind = Field(
        description="dataset, checkpoints, models, logs or audit (CloudTrail log files, "
        "for aws.AuditTrail): sets lifecycle and, for logs and audit, which AWS services "
        "may write."
    )
    region: str = Field(
        description="Region of the bucket; must be the compute's region (D2) and in "
        "governance.allowed_regions (C4). Explicit: never the provider's default."
    )
    governance: Governance
    dataset: DatasetMetadata | None = Field(
        None, description="Required for kind 'dataset': lineage, licence, basis (D4-D6)."
    )
    bucket_name: str | None = Field(
        None,
        pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$",
        description="Physical name; default: the logical name plus a random suffix.",
    )
    noncurrent_days: int | None = Field(
        None, ge=1, description="Days an overwritten version is kept (D1); default by kind."
    )
    keep_noncurrent_versions: int | None = Field(
        None, ge=0, le=100, description="Newest overwritten versions always kept."
    )
    transition_noncurrent_after_days: int | None = Field(
        None,
        description="Move overwritten versions to Standard-IA after N days (S3 requires at "
        "least 30); 0 disables.",
    )
    expire_current_after_days: int | None = Field(
        None, ge=1, description="Expire live objects (logs only by default)."
    )
    kms_key_arn: str | None = Field(
        None, description="Share an existing customer key; default: a new key, rotated yearly."
    )
    allow_destroy_with_data: bool = Field(
        False,
        description="Let `pulumi destroy` delete the bucket and every object in it. Off: "
        "the bucket is retained (and protected in prod).",
    )

    @field_validator("transition_noncurrent_after_days")
    @classmethod
    def _transition_s3_accepts(cls, days: int | None) -> int | None:
        if days is not None and 0 < days < 30:
            raise ValueError(
                f"S3 moves noncurrent versions to Standard-IA after 30 days at the "
                f"earliest, not {days}. Fix: use 30 or more, or 0 for no transition."
            )
        return days

    @model_validator(mode="after")
    def _datasets_carry_lineage(self) -> DatasetBucketArgs:
        if self.kind == "dataset" and self.dataset is None:
            raise ValueError(
                "a dataset bucket must say what it holds (checklist D4-D6). Fix: set "
                "dataset: {name, version, source, licence}."
            )
        return self

    def lifecycle(self) -> tuple[int, int, tuple[int, str] | None, int | None]:
        days, keep, transition, expire = LIFECYCLE_DEFAULTS[self.kind]
        if self.noncurrent_days is not None:
            days = self.noncurrent_days
        if self.keep_noncurrent_versions is not None:
            keep = self.keep_noncurrent_versions
        if self.transition_noncurrent_after_days == 0:
            transition = None
        elif self.transition_noncurrent_after_days is not None:
            transition = (self.transition_noncurrent_after_days, "STANDARD_IA")
        if transition is not None and transition[0] >= days:
            transition = None  # Objects would expire before the cheaper class pays.
        if self.expire_current_after_days is not None:
            expire = self.expire_current_after_days
        return days, keep, transition, expire


class DatasetBucket(pulumi.ComponentResource):
    """A versioned, encrypted, TLS-only, private S3 bucket with lifecycle rules."""

    args: DatasetBucketArgs
    bucket: aws.s3.Bucket
    bucket_name: pulumi.Output[str]
    bucket_arn: pulumi.Output[str]
    kms_key_arn: pulumi.Output[str] | None
    uri: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: DatasetBucketArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        access_logs: DatasetBucket | None = None,
        kms_key: aws.kms.Key | None = None,
    ) -> None:
        """`kms_key`: encrypt with this key (created by the caller, e.g. with a policy for
        the service that writes here) instead of a new one; like `kmsKeyArn`, for wiring."""

        def checks(args: DatasetBucketArgs) -> None:
            problems = Problems()
            region_problem = args.governance.region_problem(args.region, f"{name}.region")
            if region_problem:
                problems.items.append(region_problem)
            if access_logs is not None and access_logs.args.kind != "logs":
                problems.add(
                    f"{name}.access_logs",
                    "access logs must go to a bucket of kind 'logs', not "
                    f"{access_logs.args.kind!r}.",
                    "pass the stack's logs DatasetBucket.",
                )
            if access_logs is not None and access_logs.args.region != args.region:
                problems.add(
                    f"{name}.access_logs",
                    "S3 delivers server access logs only to a bucket in the same region.",
                    f"use a logs bucket in {args.region}.",
                )
            problems.raise_if_any()

        args = DatasetBucketArgs.validate_with(args, checks, where=name)[0]

        super().__init__(
            "aistack:index:AwsDatasetBucket",
            name,
            {"kind": args.kind, "region": args.region},
            opts,
        )
        self.args = args
        self.region = args.region
        self._name = name
        tags = tags_for(args.governance, workload=f"data-{args.kind}", **self._metadata_tags())

        def keep(**options: Any) -> pulumi.ResourceOptions:
            # Everything here is kept with the data: deleting the protections on `pulumi
            # destroy` would leave a retained bucket public-able, unencrypted by default
            # and unversioned.
            return stateful_opts(
                self, args.governance, allow_destroy=args.allow_destroy_with_data, **options
            )

        # Customer-managed key for everything but logs: S3 server access logging and ALB
        # access logs can only write to buckets encrypted with S3-managed keys.
        self.kms_key: aws.kms.Key | None = None
        self.kms_key_arn = None
        if args.kind != "logs":
            if kms_key is not None:
                self.kms_key_arn = kms_key.arn
            elif args.kms_key_arn:
                self.kms_key_arn = pulumi.Output.from_input(args.kms_key_arn)
            else:
                self.kms_key = customer_key(
                    f"{name}-key",
                    description=f"aistack {args.kind} bucket {name}",
                    region=args.region,
                    tags=tags,
                    opts=keep(),
                )
                self.kms_key_arn = self.kms_key.arn

        self.bucket = aws.s3.Bucket(
            f"{name}-bucket",
            bucket=args.bucket_name,
            region=args.region,
            force_destroy=args.allow_destroy_with_data,
            tags=tags,
            opts=keep(),
        )
        bucket_id = self.bucket.id
        here = keep(depends_on=[self.bucket])

        self.public_access_block = aws.s3.BucketPublicAccessBlock(
            f"{name}-public-access-block",
            bucket=bucket_id,
            region=args.region,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            opts=here,
        )
        self.ownership = aws.s3.BucketOwnershipControls(
            f"{name}-ownership",
            bucket=bucket_id,
            region=args.region,
            rule=aws.s3.BucketOwnershipControlsRuleArgs(object_ownership="BucketOwnerEnforced"),
            opts=here,
        )
        self.versioning = aws.s3.BucketVersioning(
            f"{name}-versioning",
            bucket=bucket_id,
            region=args.region,
            versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(
                status="Enabled"
            ),
            opts=here,
        )
        by_default = (
            aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs
        )
        default_encryption = (
            by_default(sse_algorithm="aws:kms", kms_master_key_id=self.kms_key_arn)
            if self.kms_key_arn is not None
            else by_default(sse_algorithm="AES256")
        )
        self.encryption = aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-encryption",
            bucket=bucket_id,
            region=args.region,
            rules=[
                aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=default_encryption,
                    # Bucket keys cut KMS requests (and their cost) by orders of magnitude.
                    bucket_key_enabled=self.kms_key_arn is not None,
                )
            ],
            opts=here,
        )
        self.lifecycle = aws.s3.BucketLifecycleConfiguration(
            f"{name}-lifecycle",
            bucket=bucket_id,
            region=args.region,
            rules=self._lifecycle_rules(),
            # Lifecycle rules on an unversioned bucket would act on the wrong objects.
            opts=keep(depends_on=[self.versioning]),
        )
        self.policy = aws.s3.BucketPolicy(
            f"{name}-policy",
            bucket=bucket_id,
            region=args.region,
            policy=self._bucket_policy(),
            # A policy put before the public access block could briefly be evaluated alone.
            opts=keep(depends_on=[self.public_access_block]),
        )
        self.logging: aws.s3.BucketLogging | None = None
        if access_logs is not None:
            self.logging = aws.s3.BucketLogging(
                f"{name}-access-logs",
                bucket=bucket_id,
                region=args.region,
                target_bucket=access_logs.bucket.id,
                target_prefix=f"s3-access/{name}/",
                opts=here,
            )

        self.bucket_name = self.bucket.bucket
        self.bucket_arn = self.bucket.arn
        self.uri = self.bucket.bucket.apply(lambda b: f"s3://{b}/")
        outputs: dict[str, object] = {
            "bucket_name": self.bucket_name,
            "bucket_arn": self.bucket_arn,
            "uri": self.uri,
            "region": args.region,
            "kind": args.kind,
        }
        if args.dataset is not None:
            outputs["dataset"] = args.dataset.model_dump()
        self.register_outputs(outputs)

    def _metadata_tags(self) -> dict[str, str]:
        meta = self.args.dataset
        if meta is None:
            return {}
        return {
            "aistack:dataset-name": meta.name,
            "aistack:dataset-version": meta.version,
            "aistack:dataset-source": meta.source,
            "aistack:dataset-licence": meta.licence,
            PERSONAL_DATA_TAG: "true" if meta.contains_personal_data else "false",
            "aistack:anonymised": "true" if meta.anonymised else "false",
            "aistack:legal-basis": meta.legal_basis or "none",
        }

    def _lifecycle_rules(self) -> list[aws.s3.BucketLifecycleConfigurationRuleArgs]:
        days, keep, transition, expire = self.args.lifecycle()
        rules = [
            aws.s3.BucketLifecycleConfigurationRuleArgs(
                id="expire-noncurrent-versions",
                status="Enabled",
                filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                noncurrent_version_expiration=(
                    aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                        noncurrent_days=days, newer_noncurrent_versions=keep or None
                    )
                ),
                noncurrent_version_transitions=(
                    [
                        aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionTransitionArgs(
                            noncurrent_days=transition[0], storage_class=transition[1]
                        )
                    ]
                    if transition
                    else None
                ),
            ),
            aws.s3.BucketLifecycleConfigurationRuleArgs(
                id="abort-incomplete-multipart-uploads",
                status="Enabled",
                filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                abort_incomplete_multipart_upload=(
                    aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                        days_after_initiation=ABORT_INCOMPLETE_UPLOAD_DAYS
                    )
                ),
            ),
        ]
        if expire is not None:
            rules.append(
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    id="expire-current-objects",
                    status="Enabled",
                    filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                    expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(days=expire),
                    transitions=[
                        aws.s3.BucketLifecycleConfigurationRuleTransitionArgs(
                            days=30, storage_class="STANDARD_IA"
                        )
                    ]
                    if expire > 60
                    else None,
                )
            )
            # In a versioned bucket, expiring a current object leaves a delete marker; once
            # its noncurrent versions expire too, the marker is all that is left, and stays
            # (listed and billed as an object) unless a rule removes it. S3 refuses
            # ExpiredObjectDeleteMarker together with Days in one expiration, hence a rule of
            # its own.
            rules.append(
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    id="remove-expired-delete-markers",
                    status="Enabled",
                    filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                    expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(
                        expired_object_delete_marker=True
                    ),
                )
            )
        return rules

    def _bucket_policy(self) -> pulumi.Output[str]:
        arn = self.bucket.arn
        statements: list[object] = [
            {
                "Sid": "DenyInsecureTransport",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "s3:*",
                "Resource": [arn, pulumi.Output.concat(arn, "/*")],
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            },
            {
                "Sid": "DenyOutdatedTls",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "s3:*",
                "Resource": [arn, pulumi.Output.concat(arn, "/*")],
                "Condition": {"NumericLessThan": {"s3:TlsVersion": "1.2"}},
            },
        ]
        if self.args.kind == "audit":
            statements += self._cloudtrail_statements(arn)
        if self.args.kind == "logs":
            account = aws.get_caller_identity_output(
                opts=pulumi.InvokeOutputOptions(parent=self)
            ).account_id
            statements.append(
                {
                    "Sid": "AllowS3ServerAccessLogs",
                    "Effect": "Allow",
                    "Principal": {"Service": "logging.s3.amazonaws.com"},
                    "Action": "s3:PutObject",
                    "Resource": pulumi.Output.concat(arn, "/s3-access/*"),
                    "Condition": {"StringEquals": {"aws:SourceAccount": account}},
                }
            )
            statements.append(
                {
                    "Sid": "AllowLoadBalancerAccessLogs",
                    "Effect": "Allow",
                    "Principal": {"Service": "logdelivery.elasticloadbalancing.amazonaws.com"},
                    "Action": "s3:PutObject",
                    "Resource": pulumi.Output.concat(arn, "/alb/*"),
                }
            )
            elb_account = ELB_LOG_ACCOUNTS.get(self.region)
            if elb_account:
                partition = aws.get_partition_output(
                    opts=pulumi.InvokeOutputOptions(parent=self)
                ).partition
                # Regions opened before August 2022 deliver ALB logs from a regional ELB
                # account rather than the log-delivery service principal.
                statements.append(
                    {
                        "Sid": "AllowRegionalLoadBalancerAccountAccessLogs",
                        "Effect": "Allow",
                        "Principal": {
                            "AWS": pulumi.Output.format(
                                "arn:{0}:iam::{1}:root", partition, elb_account
                            )
                        },
                        "Action": "s3:PutObject",
                        "Resource": pulumi.Output.concat(arn, "/alb/*"),
                    }
                )
        return policy_output(*statements)

    def _cloudtrail_statements(self, arn: pulumi.Output[str]) -> list[object]:
        """CloudTrail's bucket policy (CloudTrail User Guide, "Amazon S3 bucket policy for
        CloudTrail"): trails of this account only, writing only under AWSLogs/<account>/."""
        here = pulumi.InvokeOutputOptions(parent=self)
        account = aws.get_caller_identity_output(opts=here).account_id
        partition = aws.get_partition_output(opts=here).partition
        trails = {
            "StringEquals": {"aws:SourceAccount": account},
            "ArnLike": {
                "aws:SourceArn": pulumi.Output.format(
                    "arn:{0}:cloudtrail:*:{1}:trail/*", partition, account
                )
            },
        }
        return [
            {
                "Sid": "AllowCloudTrailAclCheck",
                "Effect": "Allow",
                "Principal": {"Service": "cloudtrail.amazonaws.com"},
                "Action": "s3:GetBucketAcl",
                "Resource": arn,
                "Condition": trails,
            },
            {
                "Sid": "AllowCloudTrailWrite",
                "Effect": "Allow",
                "Principal": {"Service": "cloudtrail.amazonaws.com"},
                "Action": "s3:PutObject",
                "Resource": pulumi.Output.format("{0}/AWSLogs/{1}/*", arn, account),
                "Condition": {
                    **trails,
                    "StringEquals": {
                        "aws:SourceAccount": account,
                        "s3:x-amz-acl": "bucket-owner-full-control",
                    },
                },
            },
        ]

    # ---- grants --------------------------------------------------------------------------

    def grant_read(
        self, role: AwsRole, *, prefix: str = "", name: str | None = None
    ) -> aws.iam.RolePolicy:
        """Let `role` list and read objects under `prefix` (whole bucket when empty)."""
        return self._grant(role, "read", prefix, _perms.S3_READ, _perms.KMS_READ, name)

    def grant_write(
        self, role: AwsRole, *, prefix: str = "", name: str | None = None
    ) -> aws.iam.RolePolicy:
        """Let `role` write (not delete) objects under `prefix`, and read them back."""
        return self._grant(
            role,
            "write",
            prefix,
            _perms.S3_READ + _perms.S3_WRITE,
            _perms.KMS_WRITE,
            name,
        )

    def _grant(
        self,
        role: AwsRole,
        verb: str,
        prefix: str,
        object_actions: tuple[str, ...],
        kms_actions: tuple[str, ...],
        name: str | None,
    ) -> aws.iam.RolePolicy:
        statements = grant_statements(
            self.bucket.arn,
            verb,
            prefix,
            object_actions,
            kms_actions,
            kms_key_arn=self.kms_key_arn,
            region=self.region,
        )
        role_key = name or role._name  # noqa: SLF001 - the role's logical name keys the grant
        return aws.iam.RolePolicy(
            f"{self._name}-{verb}-{role_key}",
            role=role.id,
            policy=policy_output(*statements),
            opts=child_opts(self),
        )


def grant_statements(
    bucket_arn: pulumi.Input[str],
    verb: str,
    prefix: str,
    object_actions: tuple[str, ...],
    kms_actions: tuple[str, ...],
    *,
    kms_key_arn: pulumi.Input[str] | None,
    region: str,
) -> list[object]:
    """The statements of a read or write grant on a bucket (and its key), optionally scoped to
    `prefix`. Shared with the multi-language adapters, which know the bucket by ARN only."""
    prefix = prefix.strip("/")
    objects = pulumi.Output.concat(bucket_arn, "/", f"{prefix}/*" if prefix else "*")
    bucket_actions = list(
        _perms.S3_LIST + _perms.S3_LIST_UPLOADS if verb == "write" else _perms.S3_LIST
    )
    list_statement: dict[str, object] = {
        "Sid": "List",
        "Effect": "Allow",
        "Action": bucket_actions,
        "Resource": bucket_arn,
    }
    statements: list[object] = [list_statement]
    if prefix:
        # s3:prefix applies to ListBucket alone: in a statement conditioned on it,
        # GetBucketLocation and ListBucketMultipartUploads would never be granted (IAM
        # Service Authorization Reference, Amazon S3: condition keys per action).
        list_statement["Action"] = [SCOPED_LIST_ACTION]
        list_statement["Condition"] = {"StringLike": {"s3:prefix": [f"{prefix}/*", prefix]}}
        statements.append(
            {
                "Sid": "Bucket",
                "Effect": "Allow",
                "Action": [a for a in bucket_actions if a != SCOPED_LIST_ACTION],
                "Resource": bucket_arn,
            }
        )
    statements.append(
        {"Sid": "Objects", "Effect": "Allow", "Action": list(object_actions), "Resource": objects}
    )
    if kms_key_arn is not None:
        statements.append(
            {
                "Sid": "Key",
                "Effect": "Allow",
                "Action": list(kms_actions),
                "Resource": kms_key_arn,
                # Only when S3 uses the key on this role's behalf, in this region.
                # The S3 endpoint's domain differs by partition (amazonaws.com.cn in aws-cn).
                "Condition": {
                    "StringEquals": {
                        "kms:ViaService": pulumi.Output.format(
                            "s3.{0}.{1}", region, aws.get_partition_output().dns_suffix
                        )
                    }
                },
            }
        )
    return statements
