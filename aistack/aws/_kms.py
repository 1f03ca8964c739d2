"""Customer-managed KMS keys: the one place their security defaults are set."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

__all__ = ["DELETION_WINDOW_DAYS", "customer_key"]

#: The longest window KMS allows: a key scheduled for deletion by mistake can be recovered
#: for a month, and everything encrypted with it stays readable meanwhile.
DELETION_WINDOW_DAYS = 30


def customer_key(
    resource_name: str,
    *,
    description: str,
    region: str,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
    policy: Any = None,
) -> aws.kms.Key:
    """A symmetric key with yearly rotation on. Without `policy` KMS applies its default
    key policy (the account administers the key through IAM)."""
    return aws.kms.Key(
        resource_name,
        description=description,
        enable_key_rotation=True,
        deletion_window_in_days=DELETION_WINDOW_DAYS,
        policy=policy,
        region=region,
        tags=tags,
        opts=opts,
    )
