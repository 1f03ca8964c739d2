"""`aws.AuditTrail`: who read or changed what, recorded where a stack's operators cannot edit it.

S3 server access logs are best-effort ("delivered on a best effort basis"), and nothing else
in a stack records reads of a bucket with personal data (D5, G1) or who changed its
infrastructure. This optional component creates a CloudTrail trail that:

* records management events in every region (`is_multi_region_trail`) and global services;
* records S3 data events (object reads and writes) on the buckets it is given, meant for
  the ones that hold personal data;
* writes to a retained, versioned, TLS-only `DatasetBucket` of kind `audit`, encrypted with
  a customer key that CloudTrail may use only for this account's trails;
* validates log files (`enable_log_file_validation`): a digest file per hour, so a deleted
  or altered log file is detectable (`aws cloudtrail validate-logs`).

Accounts with an organisation trail already record management events; the data events on
the stack's personal-data buckets are still its own concern. See
docs/components/aws/audit-trail.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws
from pydantic import Field

from aistack.aws._base import child_opts, policy_output, stack_id, stateful_opts, tags_for
from aistack.aws._kms import customer_key
from aistack.aws.dataset_bucket import DatasetBucket
from aistack.config import AistackModel, Governance
from aistack.errors import Problems

__all__ = ["AuditTrail", "AuditTrailArgs"]

CLOUDTRAIL_PRINCIPAL = "cloudtrail.amazonaws.com"


class AuditTrailArgs(AistackModel):
    """Where the trail lives and how long its log files are kept."""

    governance: Governance
    region: str = Field(
        description="Region of the trail's home, its bucket and key; in "
        "governance.allowed_regions (C4). The trail itself records every region."
    )
    retention_days: int = Field(
        365,
        ge=1,
        description="Days a log file is kept before S3 expires it. Default a year, the "
        "least most audit regimes ask for.",
    )
    allow_destroy_with_logs: bool = Field(
        False,
        description="Let `pulumi destroy` delete the log bucket and key. Off: both are "
        "retained (and protected in prod): they are the audit record.",
    )


class AuditTrail(pulumi.ComponentResource):
    """A multi-region, KMS-encrypted, validated CloudTrail trail with S3 data events."""

    trail: aws.cloudtrail.Trail
    trail_arn: pulumi.Output[str]
    bucket: DatasetBucket
    kms_key_arn: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: AuditTrailArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        data_buckets: Sequence[DatasetBucket] = (),
    ) -> None:
        def checks(args: AuditTrailArgs) -> None:
            problems = Problems()
            region_problem = args.governance.region_problem(args.region, f"{name}.region")
            if region_problem:
                problems.items.append(region_problem)
            for index, bucket in enumerate(data_buckets):
                # What the trail reads is `bucket_arn` (the component package passes
                # stand-ins known by ARN); a raw aws.s3.Bucket has `.arn` and is refused.
                if not hasattr(bucket, "bucket_arn"):
                    problems.add(
                        f"{name}.data_buckets.{index}",
                        f"{type(bucket).__name__} is not an aws.DatasetBucket.",
                        "pass the DatasetBucket components whose object reads must be recorded.",
                    )
            problems.raise_if_any()

        args = AuditTrailArgs.validate_with(args, checks, where=name)[0]

        super().__init__("aistack:index:AwsAuditTrail", name, {"region": args.region}, opts)
        self.args = args
        tags = tags_for(args.governance, workload="audit")
        here = pulumi.InvokeOutputOptions(parent=self)
        account = aws.get_caller_identity_output(opts=here).account_id
        partition = aws.get_partition_output(opts=here).partition
        # Named up front: the key policy names the trail before it exists.
        trail_name = f"{stack_id()}-{name}"[:128]
        trail_arn = pulumi.Output.format(
            "arn:{0}:cloudtrail:{1}:{2}:trail/{3}", partition, args.region, account, trail_name
        )
        keep = stateful_opts(self, args.governance, allow_destroy=args.allow_destroy_with_logs)

        self.kms_key = customer_key(
            f"{name}-key",
            description=f"aistack audit trail {trail_name}",
            policy=self._key_policy(partition, account, trail_arn),
            region=args.region,
            tags=tags,
            opts=keep,
        )
        self.kms_key_arn = self.kms_key.arn
        self.bucket = DatasetBucket(
            f"{name}-logs",
            {
                "kind": "audit",
                "region": args.region,
                "governance": args.governance,
                "expire_current_after_days": args.retention_days,
                "allow_destroy_with_data": args.allow_destroy_with_logs,
            },
            opts=child_opts(self),
            kms_key=self.kms_key,
        )
        selectors = [
            aws.cloudtrail.TrailAdvancedEventSelectorArgs(
                name="Management events",
                field_selectors=[_selector("eventCategory", equals=["Management"])],
            )
        ]
        if data_buckets:
            selectors.append(
                aws.cloudtrail.TrailAdvancedEventSelectorArgs(
                    name="Object reads and writes of personal-data buckets",
                    field_selectors=[
                        _selector("eventCategory", equals=["Data"]),
                        _selector("resources.type", equals=["AWS::S3::Object"]),
                        _selector(
                            "resources.ARN",
                            starts_withs=[
                                pulumi.Output.concat(b.bucket_arn, "/") for b in data_buckets
                            ],
                        ),
                    ],
                )
            )
        self.trail = aws.cloudtrail.Trail(
            f"{name}-trail",
            name=trail_name,
            s3_bucket_name=self.bucket.bucket_name,
            kms_key_id=self.kms_key.arn,
            is_multi_region_trail=True,
            include_global_service_events=True,
            enable_log_file_validation=True,
            enable_logging=True,
            advanced_event_selectors=selectors,
            region=args.region,
            tags=tags,
            # CloudTrail checks at creation that it may write to the bucket.
            opts=child_opts(self, depends_on=[self.bucket.policy, self.kms_key]),
        )
        self.trail_arn = self.trail.arn
        self.register_outputs(
            {
                "trail_arn": self.trail_arn,
                "bucket_name": self.bucket.bucket_name,
                "kms_key_arn": self.kms_key_arn,
            }
        )

    def _key_policy(
        self, partition: pulumi.Output[str], account: pulumi.Output[str], trail_arn: Any
    ) -> pulumi.Output[str]:
        # CloudTrail User Guide, "Configure AWS KMS key policies for CloudTrail".
        this_accounts_trails = pulumi.Output.format(
            "arn:{0}:cloudtrail:*:{1}:trail/*", partition, account
        )
        return policy_output(
            {
                # The default key policy's statement: IAM governs the key (reading the log
                # files needs kms:Decrypt, granted through IAM to whoever audits).
                "Sid": "AccountAdministersKey",
                "Effect": "Allow",
                "Principal": {
                    "AWS": pulumi.Output.format("arn:{0}:iam::{1}:root", partition, account)
                },
                "Action": "kms:*",
                "Resource": "*",
            },
            {
                "Sid": "CloudTrailEncryptsLogs",
                "Effect": "Allow",
                "Principal": {"Service": CLOUDTRAIL_PRINCIPAL},
                "Action": "kms:GenerateDataKey*",
                "Resource": "*",
                "Condition": {
                    "StringEquals": {"aws:SourceArn": trail_arn},
                    "StringLike": {
                        "kms:EncryptionContext:aws:cloudtrail:arn": this_accounts_trails
                    },
                },
            },
            {
                "Sid": "CloudTrailDescribesKey",
                "Effect": "Allow",
                "Principal": {"Service": CLOUDTRAIL_PRINCIPAL},
                "Action": "kms:DescribeKey",
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:SourceArn": trail_arn}},
            },
        )


def _selector(
    field: str, **matches: Any
) -> aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs:
    return aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs(field=field, **matches)
