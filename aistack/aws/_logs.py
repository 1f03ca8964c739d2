"""Retained, KMS-encrypted CloudWatch log groups (T6), shared by every component."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from aistack.aws._base import policy_output, stateful_opts
from aistack.aws._kms import customer_key
from aistack.config import Governance

__all__ = ["encrypted_log_group"]


def encrypted_log_group(
    name: str,
    parent: pulumi.Resource,
    *,
    log_group_name: str,
    region: str,
    governance: Governance,
    retention_days: int,
    tags: dict[str, str],
    allow_destroy: bool = False,
) -> tuple[aws.kms.Key, aws.cloudwatch.LogGroup]:
    """A log group kept on `pulumi destroy`, encrypted with its own rotating key.

    CloudWatch Logs may use the key only for log groups of this account and region (the
    encryption-context condition), which is what the Logs service documents as least
    privilege.
    """
    here = pulumi.InvokeOutputOptions(parent=parent)
    account = aws.get_caller_identity_output(opts=here).account_id
    # Partition and DNS suffix from the provider: aws-cn and aws-us-gov differ in both.
    partition = aws.get_partition_output(opts=here)
    key_policy = policy_output(
        {
            "Sid": "AccountAdministers",
            "Effect": "Allow",
            "Principal": {
                "AWS": pulumi.Output.format("arn:{0}:iam::{1}:root", partition.partition, account)
            },
            "Action": "kms:*",
            "Resource": "*",  # In a key policy "*" means this key.
        },
        {
            "Sid": "CloudWatchLogsUsesKey",
            "Effect": "Allow",
            "Principal": {
                "Service": pulumi.Output.format("logs.{0}.{1}", region, partition.dns_suffix)
            },
            "Action": [
                "kms:Encrypt*",
                "kms:Decrypt*",
                "kms:ReEncrypt*",
                "kms:GenerateDataKey*",
                "kms:Describe*",
            ],
            "Resource": "*",
            "Condition": {
                "ArnLike": {
                    "kms:EncryptionContext:aws:logs:arn": pulumi.Output.format(
                        "arn:{0}:logs:{1}:{2}:log-group:*", partition.partition, region, account
                    )
                }
            },
        },
    )
    keep = stateful_opts(parent, governance, allow_destroy=allow_destroy)
    key = customer_key(
        f"{name}-logs-key",
        description=f"aistack log group {log_group_name}",
        policy=key_policy,
        region=region,
        tags=tags,
        opts=keep,
    )
    log_group = aws.cloudwatch.LogGroup(
        f"{name}-logs",
        # A prefix, not a fixed name: the group is kept on `pulumi destroy`, and a fixed
        # name would make the next `pulumi up` of the stack fail with "already exists".
        name_prefix=f"{log_group_name}-",
        retention_in_days=retention_days,
        kms_key_id=key.arn,
        skip_destroy=not allow_destroy,
        region=region,
        tags=tags,
        opts=pulumi.ResourceOptions.merge(keep, pulumi.ResourceOptions(depends_on=[key])),
    )
    return key, log_group
